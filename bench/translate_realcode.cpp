// Real code, side by side: translates each tree of a corpus of real CUDA code with tailforge
// (`translate --tree`, programs and headers together) and with AMD's hipify-perl, compiles every
// .cu file of both for gfx1100 with the same clang and device libraries (device-only, the tree's
// include directories), and the CUDA originals with nvcc; prints per tree: files, nvcc ok,
// hipify-perl ok, tailforge ok, tailforge/hipify-perl, tailforge's share of the files nvcc
// compiles, and the top failure categories of each.
// Usage: translate_realcode [--corpus DIR | --tree DIR...] [--hipify FILE] [--jobs N] [--keep DIR] [--json]
// --corpus: every folder in DIR is a tree (default ../shared/corpus); --tree: these trees, any
// path (repeatable), for measuring on code nothing was tuned on. tailforge's output is compiled
// with the tree's own include folders only: its compatibility headers come by relative path.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "agents/translate/tree_translate.h"
#include "base/process.h"
#include "policies/categorizer.h"
#include "verifier/amd.h"
#include "verifier/stage_runner.h"
#include "verifier/toolchains.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

struct Outcome {
  bool ok = false;
  std::string category;  // when !ok
};

struct FileRow {
  std::string path;  // relative to the tree
  Outcome nvcc, hipify, tailforge;
};

std::string arg(int argc, char** argv, const std::string& flag, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == flag) return argv[i + 1];
  return fallback;
}

bool has_flag(int argc, char** argv, const std::string& flag) {
  for (int i = 1; i < argc; ++i)
    if (argv[i] == flag) return true;
  return false;
}

std::vector<std::string> cu_files(const fs::path& root) {
  std::vector<std::string> files;
  std::error_code error;
  for (fs::recursive_directory_iterator it(root, error), last; it != last; it.increment(error)) {
    if (error) break;
    if (it->is_regular_file() && it->path().extension() == ".cu") files.push_back(it->path().lexically_relative(root).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

Outcome compile(const Taxonomy& taxonomy, const std::string& stage, std::vector<std::string> argv) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout_seconds = 300;
  ProcessResult result = run_process(spec);
  if (result.succeeded()) return {true, ""};
  FailureEvidence evidence;
  evidence.stage = stage;
  evidence.diagnostics = result.spawn_error + result.stderr_text + result.stdout_text;
  if (result.spawned && !result.timed_out && result.signal == 0) evidence.exit_code = result.exit_code;
  if (result.signal) evidence.signal = result.signal;
  evidence.timed_out = result.timed_out;
  return {false, categorize(taxonomy, evidence).category};
}

// hipify-perl over every source file of a copy of the tree, in place, as its README says.
void run_hipify_perl(const std::string& hipify, const fs::path& tree) {
  static const std::vector<std::string> extensions = {".cu", ".cuh", ".h", ".hpp", ".cpp", ".c", ".cc"};
  for (fs::recursive_directory_iterator it(tree), last; it != last; ++it) {
    if (!it->is_regular_file()) continue;
    if (std::find(extensions.begin(), extensions.end(), it->path().extension().string()) == extensions.end()) continue;
    ProcessSpec spec;
    spec.argv = {"perl", hipify, "-inplace", "-quiet-warnings", it->path().string()};
    spec.timeout_seconds = 120;
    run_process(spec);
  }
}

std::string top_categories(const std::vector<FileRow>& rows, Outcome FileRow::*which, size_t count) {
  std::map<std::string, int> counts;
  for (const FileRow& row : rows)
    if (!(row.*which).ok) ++counts[(row.*which).category];
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [category, n] : counts) sorted.emplace_back(-n, category);
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (size_t i = 0; i < sorted.size() && i < count; ++i)
    out += (i ? ", " : "") + sorted[i].second + " " + std::to_string(-sorted[i].first);
  return out.empty() ? "-" : out;
}

// What compiles the files: nvcc for the original, clang for the two translations to AMD.
struct Compilers {
  const Taxonomy& taxonomy;
  const Tool& clang;
  const Tool& nvcc;
  std::string device_libs;
};

// Compiles each .cu file of `tree` with nvcc, and its hipify-perl and tailforge translations
// with clang for AMD, on `jobs` threads. A file the translator could not fully translate fails
// under the translator's category.
std::vector<FileRow> compile_tree_files(const Compilers& compilers, const fs::path& tree, const fs::path& hipified,
                                        const fs::path& translated, const TreeTranslation& translation, int jobs) {
  std::map<std::string, const TreeFileReport*> by_path;
  for (const TreeFileReport& file : translation.files) by_path[file.path] = &file;
  std::vector<std::string> files = cu_files(tree);
  std::vector<FileRow> rows(files.size());
  std::atomic<size_t> next{0};
  auto amd_compile = [&](const fs::path& root, const std::string& file) {
    std::vector<std::string> args = {compilers.clang.path, "-x", "hip", "-std=c++17", "-O2", "--rocm-path=/usr",
                                     "--cuda-device-only", "-S", "--offload-arch=gfx1100",
                                     "--hip-device-lib-path=" + compilers.device_libs,
                                     "-I", (root / fs::path(file).parent_path()).string(), "-I", root.string()};
    args.insert(args.end(), {(root / file).string(), "-o", "/dev/null"});
    return compile(compilers.taxonomy, "amd.asm.gfx1100", args);
  };
  auto worker = [&]() {
    for (size_t i = next++; i < files.size(); i = next++) {
      FileRow& row = rows[i];
      row.path = files[i];
      if (!compilers.nvcc.path.empty())
        row.nvcc = compile(compilers.taxonomy, "nvidia.exe",
                           {compilers.nvcc.path, "-c", "-std=c++17", "-arch=sm_90", "-I",
                            (tree / fs::path(files[i]).parent_path()).string(), "-I", tree.string(),
                            (tree / files[i]).string(), "-o", "/dev/null"});
      row.hipify = amd_compile(hipified, files[i]);
      row.tailforge = amd_compile(translated, files[i]);
      auto file = by_path.find(files[i]);
      if (!row.tailforge.ok && file != by_path.end() && !file->second->issues.empty())
        row.tailforge.category = file->second->issues.front().category;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < jobs; ++t) threads.emplace_back(worker);
  for (auto& thread : threads) thread.join();
  return rows;
}

// One tree's entry of the JSON report: its counts and each file's outcome; printed as a table
// row with the top failure categories unless the output is JSON.
nlohmann::ordered_json tree_report(const std::string& name, const std::vector<FileRow>& rows, bool json_output) {
  int nvcc_ok = 0, hipify_ok = 0, tailforge_ok = 0, tailforge_of_nvcc = 0, uncategorized = 0;
  for (const FileRow& row : rows) {
    nvcc_ok += row.nvcc.ok;
    hipify_ok += row.hipify.ok;
    tailforge_ok += row.tailforge.ok;
    tailforge_of_nvcc += row.nvcc.ok && row.tailforge.ok;
    uncategorized += !row.tailforge.ok && row.tailforge.category.find("uncategorized") != std::string::npos;
  }
  double ratio = hipify_ok ? static_cast<double>(tailforge_ok) / hipify_ok : 0;
  double of_nvcc = nvcc_ok ? static_cast<double>(tailforge_of_nvcc) / nvcc_ok : 0;
  nlohmann::ordered_json files_json = nlohmann::ordered_json::array();
  for (const FileRow& row : rows)
    files_json.push_back({{"path", row.path}, {"nvcc", row.nvcc.ok ? "ok" : row.nvcc.category},
                          {"hipify_perl", row.hipify.ok ? "ok" : row.hipify.category},
                          {"tailforge", row.tailforge.ok ? "ok" : row.tailforge.category}});
  if (!json_output) {
    std::string ratio_text = hipify_ok ? std::to_string(ratio).substr(0, 4) + "x" : "-";  // none to divide by
    std::printf("%-24s %5zu %7d %8d %9d %8s %5d/%d %3.0f%%\n", name.c_str(), rows.size(), nvcc_ok, hipify_ok,
                tailforge_ok, ratio_text.c_str(), tailforge_of_nvcc, nvcc_ok, 100 * of_nvcc);
    std::printf("  nvcc failures:        %s\n", top_categories(rows, &FileRow::nvcc, 4).c_str());
    std::printf("  hipify-perl failures: %s\n", top_categories(rows, &FileRow::hipify, 4).c_str());
    std::printf("  tailforge failures:   %s (uncategorized: %d)\n", top_categories(rows, &FileRow::tailforge, 4).c_str(),
                uncategorized);
  }
  return {{"tree", name}, {"files", rows.size()}, {"nvcc_ok", nvcc_ok}, {"hipify_perl_ok", hipify_ok},
          {"tailforge_ok", tailforge_ok},
          {"ratio", hipify_ok ? nlohmann::ordered_json(ratio) : nlohmann::ordered_json(nullptr)}, {"tailforge_ok_of_nvcc_ok", tailforge_of_nvcc},
          {"share_of_nvcc_ok", of_nvcc}, {"tailforge_uncategorized", uncategorized},
          {"files_detail", files_json}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string source_dir = TAILFORGE_SOURCE_DIR;
  fs::path corpus = arg(argc, argv, "--corpus", source_dir + "/../shared/corpus");
  std::string hipify = arg(argc, argv, "--hipify", source_dir + "/../shared/tools/hipify-perl/hipify-perl");
  int jobs = std::max(1, std::stoi(arg(argc, argv, "--jobs", std::to_string(std::max(1u, std::thread::hardware_concurrency())))));
  bool json_output = has_flag(argc, argv, "--json");
  fs::path work = arg(argc, argv, "--keep", "/tmp/tf-translate-realcode-" + std::to_string(getpid()));

  const Toolchains& toolchains = detected_toolchains();
  const Tool& clang = toolchains.tool("hip_clang");
  const Tool& nvcc = toolchains.tool("nvcc");
  std::vector<fs::path> trees;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--tree") trees.push_back(fs::absolute(argv[i + 1]));
  if (clang.path.empty() || !fs::exists(hipify) || (trees.empty() && !fs::is_directory(corpus))) {
    std::fprintf(stderr, "skipped: needs clang for HIP (%s), hipify-perl (%s) and a corpus (%s)\n",
                 clang.path.empty() ? "missing" : "found", hipify.c_str(), corpus.c_str());
    return 0;
  }
  VerifierOptions verifier_options;
  StageContext stage_context{verifier_options, toolchains};
  Result<std::string> device_libs = prepare_device_libs(stage_context);
  if (!device_libs) {
    std::fprintf(stderr, "skipped: %s\n", device_libs.message().c_str());
    return 0;
  }
  Result<HipifyRules> rules = load_hipify_rules(source_dir + "/policies/hipify_rules.json");
  Result<Taxonomy> taxonomy = load_taxonomy(source_dir + "/policies/taxonomy.json");
  if (!rules || !taxonomy) {
    std::fprintf(stderr, "cannot load rules: %s%s\n", rules ? "" : rules.message().c_str(),
                 taxonomy ? "" : taxonomy.message().c_str());
    return 1;
  }

  if (trees.empty()) {
    for (const auto& entry : fs::directory_iterator(corpus))
      if (entry.is_directory()) trees.push_back(entry.path());
    std::sort(trees.begin(), trees.end());
  }
  for (const fs::path& tree : trees) {
    if (!fs::is_directory(tree)) {
      std::fprintf(stderr, "not a folder: %s\n", tree.c_str());
      return 2;
    }
  }

  nlohmann::ordered_json report = nlohmann::ordered_json::array();
  if (!json_output)
    std::printf("%-24s %5s %7s %8s %9s %8s %12s\n", "tree", "files", "nvcc", "hipify", "tailforge", "ratio",
                "of nvcc ok");
  for (const fs::path& tree : trees) {
    std::string name = (tree.has_filename() ? tree : tree.parent_path()).filename().string();
    fs::path hipified = work / "hipify-perl" / name, translated = work / "tailforge" / name;
    fs::remove_all(hipified);
    fs::remove_all(translated);
    fs::create_directories(hipified.parent_path());
    fs::copy(tree, hipified, fs::copy_options::recursive | fs::copy_options::skip_symlinks);
    run_hipify_perl(hipify, hipified);
    TreeTranslateOptions translate_options;
    translate_options.compat_dir = source_dir + "/verifier/hip_compat";
    Result<TreeTranslation> translation = translate_tree(*rules, tree.string(), translated.string(), translate_options);
    if (!translation) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), translation.message().c_str());
      return 1;
    }
    std::vector<FileRow> rows =
        compile_tree_files(Compilers{*taxonomy, clang, nvcc, *device_libs}, tree, hipified, translated, *translation, jobs);
    report.push_back(tree_report(name, rows, json_output));
  }
  if (json_output) std::printf("%s\n", report.dump(1).c_str());
  if (!has_flag(argc, argv, "--keep")) fs::remove_all(work);
  return 0;
}
