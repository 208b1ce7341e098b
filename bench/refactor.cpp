// CUDA kernel refactoring (PtxDec's redundant-parenthesis elimination and index CSE) on programs
// of our own generator, or on a tree of human-written .cu files: prints the characters of
// redundant parentheses and of repeated index arithmetic before and after, their reduction (the
// issue's target: >= 30%), the total source size before and after, how many refactored programs
// compile with nvcc and, where a GPU exists, how many print the same output as the original
// (normalized absolute error <= 1e-3). Generated programs are linked and run; a corpus is only
// compiled (-c), since its files are not standalone programs.
// Usage: refactor [--count N] [--seed S] [--corpus DIR] [--keep DIR] [--source TREE]
#include "agents/ptx2cuda/refactor.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "agents/generator.h"
#include "agents/personas.h"
#include "verifier/compare.h"
#include "verifier/process.h"
#include "verifier/stage_runner.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const char* kNvcc = "/usr/local/cuda/bin/nvcc";

struct Options {
  size_t count = 60;
  uint64_t seed = 3;
  std::string corpus;
  std::string keep;
  std::string source_dir = TAILFORGE_SOURCE_DIR;  // where the generator catalog lives
};

struct Tally {
  size_t programs = 0, with_parentheses = 0, with_index = 0, changed = 0;
  size_t pairs = 0, extracted = 0, replaced = 0;
  size_t parenthesis_before = 0, parenthesis_after = 0;
  size_t expression_before = 0, expression_after = 0;
  size_t index_before = 0, index_after = 0;
  size_t source_before = 0, source_after = 0;
  size_t compiled = 0, compile_tried = 0, original_failed = 0;
  size_t matched = 0, run_tried = 0;
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--count") options.count = std::strtoul(argv[i + 1], nullptr, 10);
    if (flag == "--seed") options.seed = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--corpus") options.corpus = argv[i + 1];
    if (flag == "--keep") options.keep = argv[i + 1];
    if (flag == "--source") options.source_dir = argv[i + 1];
  }
  return options;
}

ProcessResult run_command(std::vector<std::string> argv, double timeout_seconds) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout_seconds = timeout_seconds;
  return run_process(spec);
}

bool gpu_present() {
  ProcessResult listed = run_command({"nvidia-smi", "-L"}, 30);
  return listed.succeeded() && listed.stdout_text.find("GPU") != std::string::npos;
}

std::string temporary_folder() {
  std::string pattern = (fs::temp_directory_path() / "tailforge-refactor-XXXXXX").string();
  char* made = mkdtemp(pattern.data());
  return made ? made : "";
}

void count_text(Tally& tally, const std::string& before, const RefactorResult& result) {
  ++tally.programs;
  tally.with_parentheses += result.parentheses_removed > 0;
  tally.with_index += result.index_expressions_extracted > 0;
  tally.changed += result.text != before;
  tally.pairs += result.parentheses_removed;
  tally.extracted += result.index_expressions_extracted;
  tally.replaced += result.index_occurrences_replaced;
  tally.parenthesis_before += result.redundant_parenthesis_characters_before;
  tally.parenthesis_after += result.redundant_parenthesis_characters_after;
  tally.expression_before += result.parenthesized_expression_characters_before;
  tally.expression_after += result.parenthesized_expression_characters_after;
  tally.index_before += result.index_arithmetic_characters_before;
  tally.index_after += result.index_arithmetic_characters_after;
  tally.source_before += before.size();
  tally.source_after += result.text.size();
}

std::string reduction(size_t before, size_t after) {
  if (before == 0) return "n/a (nothing found)";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * (double(before) - double(after)) / double(before));
  return text;
}

// Compiles (and, with a GPU, runs against the original) one changed generated program.
void check_program(Tally& tally, const std::string& stem, bool gpu) {
  ++tally.compile_tried;
  ProcessResult built = run_command({kNvcc, "-arch=sm_90", "-o", stem + ".refactored", stem + ".refactored.cu"}, 300);
  if (!built.succeeded()) {
    std::printf("  %s.refactored.cu does not compile:\n%s\n", stem.c_str(), built.stderr_text.c_str());
    return;
  }
  ++tally.compiled;
  if (!gpu || !run_command({kNvcc, "-arch=sm_90", "-o", stem, stem + ".cu"}, 300).succeeded()) return;
  ++tally.run_tried;
  ProcessResult want = run_command({stem}, 60), got = run_command({stem + ".refactored"}, 60);
  CompareResult compared = compare_outputs(want.stdout_text, got.stdout_text);
  if (compared.equal && got.exit_code == want.exit_code)
    ++tally.matched;
  else
    std::printf("  %s: output differs: %s\n", stem.c_str(), compared.message.c_str());
}

// Compiles a corpus file before and after (-c, its own folder on the include path).
void check_corpus_file(Tally& tally, const fs::path& file, const std::string& refactored_path) {
  std::string include = "-I" + file.parent_path().string();
  if (!run_command({kNvcc, "-arch=sm_90", include, "-c", file.string(), "-o", "/dev/null"}, 300).succeeded()) {
    ++tally.original_failed;
    return;
  }
  ++tally.compile_tried;
  ProcessResult built = run_command({kNvcc, "-arch=sm_90", include, "-c", refactored_path, "-o", "/dev/null"}, 300);
  if (built.succeeded())
    ++tally.compiled;
  else
    std::printf("  %s does not compile after refactoring:\n%s\n", file.c_str(), built.stderr_text.c_str());
}

void print_tally(const Tally& tally, bool corpus, bool gpu, bool nvcc) {
  std::printf(
      "programs: %zu, changed: %zu, with redundant parentheses: %zu (%.0f%%), with repeated index "
      "arithmetic: %zu (%.0f%%)\n",
      tally.programs, tally.changed, tally.with_parentheses,
      tally.programs ? 100.0 * tally.with_parentheses / tally.programs : 0.0, tally.with_index,
      tally.programs ? 100.0 * tally.with_index / tally.programs : 0.0);
  std::printf("redundant parentheses: %zu pairs, %zu chars before, %zu after (%s)\n", tally.pairs,
              tally.parenthesis_before, tally.parenthesis_after,
              reduction(tally.parenthesis_before, tally.parenthesis_after).c_str());
  std::printf("  expressions that lost a pair: %zu chars before, %zu after (%s)\n", tally.expression_before,
              tally.expression_after, reduction(tally.expression_before, tally.expression_after).c_str());
  std::printf("repeated index arithmetic: %zu expressions, %zu occurrences, %zu chars before, %zu after (%s)\n",
              tally.extracted, tally.replaced, tally.index_before, tally.index_after,
              reduction(tally.index_before, tally.index_after).c_str());
  size_t both_before = tally.parenthesis_before + tally.index_before;
  size_t both_after = tally.parenthesis_after + tally.index_after;
  std::printf("both together: %zu chars before, %zu after (%s; target >= 30%%)\n", both_before, both_after,
              reduction(both_before, both_after).c_str());
  std::printf("total source: %zu chars before, %zu after (%s)\n", tally.source_before, tally.source_after,
              reduction(tally.source_before, tally.source_after).c_str());
  if (!nvcc) {
    std::printf("compile check skipped: no nvcc at %s\n", kNvcc);
    return;
  }
  std::printf("nvcc -arch=sm_90%s: %zu of %zu changed programs compile after refactoring", corpus ? " -c" : "",
              tally.compiled, tally.compile_tried);
  if (corpus) std::printf(" (%zu changed files did not compile before either, left out)", tally.original_failed);
  std::printf("; unchanged programs are byte-identical to the original\n");
  if (corpus)
    std::printf("output check: not done for a corpus (compile check only)\n");
  else if (!gpu)
    std::printf("output check skipped: no GPU (nvidia-smi -L lists none)\n");
  else
    std::printf("outputs matching the original (NAE <= 1e-3): %zu of %zu\n", tally.matched, tally.run_tried);
}

std::vector<fs::path> corpus_files(const std::string& folder) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(folder))
    if (entry.is_regular_file() && entry.path().extension() == ".cu") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  bool nvcc = fs::exists(kNvcc);
  bool gpu = nvcc && gpu_present();
  std::string folder = options.keep.empty() ? temporary_folder() : options.keep;
  fs::create_directories(folder);
  Tally tally;
  if (!options.corpus.empty()) {
    std::printf("corpus %s\n", options.corpus.c_str());
    size_t index = 0;
    for (const fs::path& file : corpus_files(options.corpus)) {
      std::string before = read_file_text(file.string());
      RefactorResult result = refactor_cuda(before);
      count_text(tally, before, result);
      if (result.text == before || !nvcc) continue;
      std::string refactored = folder + "/" + std::to_string(index++) + "_" + file.filename().string();
      write_file_text(refactored, result.text);
      check_corpus_file(tally, file, refactored);
    }
  } else {
    auto catalog = load_default_generator_catalog(options.source_dir);
    if (!catalog.ok()) return std::printf("refactor: %s\n", catalog.message().c_str()), 1;
    auto files = write_generated_programs(*catalog, options.count, options.seed, folder);
    if (!files.ok()) return std::printf("refactor: %s\n", files.message().c_str()), 1;
    std::printf("generator: %zu programs, seed %llu\n", files->size(), (unsigned long long)options.seed);
    for (const std::string& file : *files) {
      std::string stem = folder + "/" + fs::path(file).stem().string();
      std::string before = read_file_text(stem + ".cu");
      RefactorResult result = refactor_cuda(before);
      count_text(tally, before, result);
      if (result.text == before || !nvcc) continue;
      write_file_text(stem + ".refactored.cu", result.text);
      check_program(tally, stem, gpu);
    }
  }
  print_tally(tally, !options.corpus.empty(), gpu, nvcc);
  if (options.keep.empty()) fs::remove_all(folder);
  return 0;
}
