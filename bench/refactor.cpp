// CUDA kernel refactoring (PtxDec's redundant-parenthesis elimination and index CSE) on programs
// of our own generator, or on a tree of human-written .cu files. Per generator domain and in
// total it prints the characters of redundant parentheses and of repeated index arithmetic
// before and after, and their reduction (the target: >= 30%), the characters of the
// __global__ / __device__ bodies and of whole programs before and after (PtxDec reports -38%
// CUDA length on its compiler-generated corpus), how many refactored programs compile with nvcc
// and, where a GPU exists, how many print the same output as the original (normalized absolute
// error <= 1e-3); also whether refactoring the result again changes anything. Both character
// counts come from one analysis of a text (refactor.h), applied to the input and to the result,
// never from what the passes report they did. Generated programs are linked and run; a corpus is
// only compiled (-c), since its files are not standalone programs.
// Usage: refactor [--count N] [--seed S] [--domain NAME] [--corpus DIR] [--keep DIR] [--source TREE] [--jobs J]
#include "agents/ptx2cuda/refactor.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "agents/generator/generator.h"
#include "agents/generator/personas.h"
#include "base/files.h"
#include "base/process.h"
#include "verifier/compare.h"
#include "verifier/stage_runner.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const char* kNvcc = "/usr/local/cuda/bin/nvcc";

struct Options {
  size_t count = 60;
  uint64_t seed = 3;
  std::string domain;  // only this generator domain
  std::string corpus;
  std::string keep;
  std::string source_dir = TAILFORGE_SOURCE_DIR;  // where the generator catalog lives
  size_t jobs = std::max(1u, std::thread::hardware_concurrency());  // programs checked at once
};

struct Tally {
  size_t programs = 0, with_parentheses = 0, with_index = 0, changed = 0, not_idempotent = 0;
  size_t pairs = 0, extracted = 0, replaced = 0;
  size_t parenthesis_before = 0, parenthesis_after = 0;
  size_t index_before = 0, index_after = 0;
  size_t body_before = 0, body_after = 0;
  size_t source_before = 0, source_after = 0;
  size_t compiled = 0, compile_tried = 0, original_failed = 0;
  size_t matched = 0, run_tried = 0;

  void add(const Tally& other) {
    for (auto field : {&Tally::programs,          &Tally::with_parentheses, &Tally::with_index,
                       &Tally::changed,           &Tally::not_idempotent,   &Tally::pairs,
                       &Tally::extracted,         &Tally::replaced,         &Tally::parenthesis_before,
                       &Tally::parenthesis_after, &Tally::index_before,     &Tally::index_after,
                       &Tally::body_before,       &Tally::body_after,       &Tally::source_before,
                       &Tally::source_after,      &Tally::compiled,         &Tally::compile_tried,
                       &Tally::original_failed,   &Tally::matched,          &Tally::run_tried})
      this->*field += other.*field;
  }
};

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--count") options.count = std::strtoul(argv[i + 1], nullptr, 10);
    if (flag == "--seed") options.seed = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--domain") options.domain = argv[i + 1];
    if (flag == "--corpus") options.corpus = argv[i + 1];
    if (flag == "--keep") options.keep = argv[i + 1];
    if (flag == "--source") options.source_dir = argv[i + 1];
    if (flag == "--jobs") options.jobs = std::strtoul(argv[i + 1], nullptr, 10);
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
  tally.not_idempotent += refactor_cuda(result.text).text != result.text;
  tally.pairs += result.parentheses_removed;
  tally.extracted += result.index_expressions_extracted;
  tally.replaced += result.index_occurrences_replaced;
  tally.parenthesis_before += result.redundant_parenthesis_characters_before;
  tally.parenthesis_after += result.redundant_parenthesis_characters_after;
  tally.index_before += result.repeated_index_characters_before;
  tally.index_after += result.repeated_index_characters_after;
  tally.body_before += result.device_body_characters_before;
  tally.body_after += result.device_body_characters_after;
  tally.source_before += before.size();
  tally.source_after += result.text.size();
}

std::string reduction(size_t before, size_t after) {
  if (before == 0) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", 100.0 * (double(before) - double(after)) / double(before));
  return text;
}

std::string change(size_t before, size_t after) {
  if (before == 0) return "n/a";
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", 100.0 * (double(after) - double(before)) / double(before));
  return text;
}

// What checking one changed generated program found; merged into its domain's tally.
struct ProgramCheck {
  bool compiled = false, run = false, matched = false;
  std::string message;  // printed when something failed
};

// Compiles (and, with a GPU, runs against the original) one changed generated program.
ProgramCheck check_program(const std::string& stem, bool gpu) {
  ProgramCheck check;
  ProcessResult built = run_command({kNvcc, "-arch=sm_90", "-o", stem + ".refactored", stem + ".refactored.cu"}, 300);
  if (!built.succeeded()) {
    check.message = "  " + stem + ".refactored.cu does not compile:\n" + built.stderr_text;
    return check;
  }
  check.compiled = true;
  if (!gpu || !run_command({kNvcc, "-arch=sm_90", "-o", stem, stem + ".cu"}, 300).succeeded()) return check;
  check.run = true;
  ProcessResult want = run_command({stem}, 60), got = run_command({stem + ".refactored"}, 60);
  CompareResult compared = compare_outputs(want.stdout_text, got.stdout_text);
  check.matched = compared.equal && got.exit_code == want.exit_code;
  if (!check.matched) check.message = "  " + stem + ": output differs: " + compared.message;
  return check;
}

// Checks the changed programs on `jobs` threads (nvcc dominates the bench's time) and adds what
// each found to its domain's tally.
void check_programs(std::map<std::string, Tally>& domains,
                    const std::vector<std::pair<std::string, std::string>>& changed, bool gpu, size_t jobs) {
  std::vector<ProgramCheck> checks(changed.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (size_t worker = 0; worker < std::max<size_t>(1, jobs); ++worker) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < changed.size(); i = next++) checks[i] = check_program(changed[i].second, gpu);
    });
  }
  for (std::thread& worker : workers) worker.join();
  for (size_t i = 0; i < changed.size(); ++i) {
    Tally& tally = domains[changed[i].first];
    ++tally.compile_tried;
    tally.compiled += checks[i].compiled;
    tally.run_tried += checks[i].run;
    tally.matched += checks[i].matched;
    if (!checks[i].message.empty()) std::printf("%s\n", checks[i].message.c_str());
  }
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

void print_domain_rows(const std::map<std::string, Tally>& domains, bool nvcc) {
  std::printf("%-16s %4s %15s %17s %7s %17s %7s %s\n", "domain", "n", "parens chars", "repeated index", "both",
              "kernel bodies", "length", nvcc ? "compile" : "");
  for (const auto& [name, t] : domains) {
    std::string parentheses = std::to_string(t.parenthesis_before) + "->" + std::to_string(t.parenthesis_after);
    std::string index = std::to_string(t.index_before) + "->" + std::to_string(t.index_after);
    std::string bodies = std::to_string(t.body_before) + "->" + std::to_string(t.body_after);
    std::string compile = nvcc ? std::to_string(t.compiled) + "/" + std::to_string(t.compile_tried) : "";
    std::printf("%-16s %4zu %15s %17s %7s %17s %7s %s\n", name.c_str(), t.programs, parentheses.c_str(), index.c_str(),
                reduction(t.parenthesis_before + t.index_before, t.parenthesis_after + t.index_after).c_str(),
                bodies.c_str(), change(t.body_before, t.body_after).c_str(), compile.c_str());
  }
  std::printf("(both: reduction of parentheses + repeated index characters; length: change of kernel bodies)\n\n");
}

void print_tally(const Tally& tally, bool corpus, bool gpu, bool nvcc) {
  std::printf(
      "programs: %zu, changed: %zu, with redundant parentheses: %zu (%.0f%%), with index arithmetic extracted: "
      "%zu (%.0f%%)\n",
      tally.programs, tally.changed, tally.with_parentheses,
      tally.programs ? 100.0 * tally.with_parentheses / tally.programs : 0.0, tally.with_index,
      tally.programs ? 100.0 * tally.with_index / tally.programs : 0.0);
  std::printf("redundant parentheses: %zu pairs, %zu chars before, %zu after (%s)\n", tally.pairs,
              tally.parenthesis_before, tally.parenthesis_after,
              reduction(tally.parenthesis_before, tally.parenthesis_after).c_str());
  std::printf(
      "repeated index arithmetic in kernel subscripts: %zu chars before, %zu after (%s); %zu locals, %zu uses "
      "replaced\n",
      tally.index_before, tally.index_after, reduction(tally.index_before, tally.index_after).c_str(), tally.extracted,
      tally.replaced);
  size_t both_before = tally.parenthesis_before + tally.index_before;
  size_t both_after = tally.parenthesis_after + tally.index_after;
  std::printf("both together: %zu chars before, %zu after (%s; target >= 30%%)\n", both_before, both_after,
              reduction(both_before, both_after).c_str());
  std::printf("kernel source (__global__/__device__ bodies): %zu chars before, %zu after (%s; PtxDec: -38%%)\n",
              tally.body_before, tally.body_after, change(tally.body_before, tally.body_after).c_str());
  std::printf("whole programs: %zu chars before, %zu after (%s)\n", tally.source_before, tally.source_after,
              change(tally.source_before, tally.source_after).c_str());
  std::printf("refactoring the result again changes %zu of %zu programs\n", tally.not_idempotent, tally.programs);
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

// The batch's programs (every domain in rotation, or only `domain`), written as <index>_<domain>.cu.
Result<std::vector<std::pair<std::string, std::string>>> generate(const Options& options, const std::string& folder) {
  auto catalog = load_default_generator_catalog(options.source_dir);
  if (!catalog.ok()) return catalog.error();
  std::vector<std::pair<std::string, std::string>> stems;  // domain, path without .cu
  for (size_t index = 0; index < options.count; ++index) {
    GenerationRequest request = batch_request(options.seed, index);
    if (!options.domain.empty()) request.domain = options.domain;
    auto program = generate_program(*catalog, request);
    if (!program.ok()) return make_error("program " + std::to_string(index) + ": " + program.message());
    std::string stem = folder + "/" + std::to_string(index) + "_" + program->domain;
    if (!write_text_file(stem + ".cu", program->source).ok()) return make_error(stem + ".cu: write failed");
    stems.push_back({program->domain, stem});
  }
  return stems;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse_options(argc, argv);
  bool nvcc = fs::exists(kNvcc);
  bool gpu = nvcc && gpu_present();
  std::string folder = options.keep.empty() ? temporary_folder() : options.keep;
  fs::create_directories(folder);
  std::map<std::string, Tally> domains;
  if (!options.corpus.empty()) {
    std::printf("corpus %s\n", options.corpus.c_str());
    size_t index = 0;
    Tally& tally = domains["corpus"];
    for (const fs::path& file : corpus_files(options.corpus)) {
      std::string before = read_text_file_or_empty(file.string());
      RefactorResult result = refactor_cuda(before);
      count_text(tally, before, result);
      if (result.text == before || !nvcc) continue;
      std::string refactored = folder + "/" + std::to_string(index++) + "_" + file.filename().string();
      (void)write_text_file(refactored, result.text);
      check_corpus_file(tally, file, refactored);
    }
  } else {
    auto stems = generate(options, folder);
    if (!stems.ok()) return std::printf("refactor: %s\n", stems.message().c_str()), 1;
    std::printf("generator: %zu programs, seed %llu%s\n", stems->size(), (unsigned long long)options.seed,
                options.domain.empty() ? "" : (", domain " + options.domain).c_str());
    std::vector<std::pair<std::string, std::string>> changed;
    for (const auto& [domain, stem] : *stems) {
      std::string before = read_text_file_or_empty(stem + ".cu");
      RefactorResult result = refactor_cuda(before);
      count_text(domains[domain], before, result);
      if (result.text == before || !nvcc) continue;
      (void)write_text_file(stem + ".refactored.cu", result.text);
      changed.push_back({domain, stem});
    }
    check_programs(domains, changed, gpu, options.jobs);
  }
  print_domain_rows(domains, nvcc);
  Tally total;
  for (const auto& [name, tally] : domains) total.add(tally);
  print_tally(total, !options.corpus.empty(), gpu, nvcc);
  if (options.keep.empty()) fs::remove_all(folder);
  return 0;
}
