#include "verifier/chain.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "base/clock.h"
#include "base/files.h"
#include "text/regex.h"
#include "verifier/amd.h"
#include "verifier/compare.h"
#include "verifier/nvidia.h"
#include "verifier/stage_runner.h"
#include "verifier/work_label.h"
#include "verifier/x86.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

std::string default_track(const std::string& extension) {
  if (extension == ".cu" || extension == ".hip") return "cuda2hip";
  if (extension == ".c") return "c2x86";
  if (extension == ".s") return "sass2rdna3";
  return "";
}

void run_translate_stage(StageContext& context, const ChainOptions& options, const std::string& cuda_path,
                         const std::string& hip_path) {
  if (!options.translate) return context.add(skipped_stage("translate.hip", "no translator given"));
  if (!stage_enabled_here(context, "translate.hip")) return;
  set_current_stage_name("translate.hip");
  auto start = std::chrono::steady_clock::now();
  StageResult stage;
  stage.name = "translate.hip";
  TranslateOutcome outcome;
  try {
    outcome = options.translate(read_text_file_or_empty(cuda_path));
  } catch (const std::exception& error) {
    outcome = {false, "", "translate.exception", error.what()};
  }
  stage.seconds = seconds_since(start);
  if (outcome.ok) {
    stage.status = "ok";
    // A failed write shows as the HIP compile's missing input, with the path.
    (void)write_text_file(hip_path, outcome.hip_source);
    stage.artifacts.push_back({"hip", "source.hip", outcome.hip_source, "translator", "", false});
  } else {
    stage.status = "fail";
    stage.reason = outcome.category.empty() ? "translation failed" : outcome.category;
    stage.diagnostics = outcome.message;
  }
  context.add(std::move(stage));
}

// Stage "compare": `actual` against `expected`, token by token with the numeric tolerance,
// leaving out the token indexes in `ignored`.
StageResult compare_stage(const StageContext& context, const std::string& expected, const std::string& actual,
                          std::vector<size_t> ignored = {}) {
  set_current_stage_name("compare");
  StageResult stage;
  stage.name = "compare";
  CompareResult result = compare_outputs(expected, actual, {context.options.compare_tolerance, std::move(ignored)});
  stage.status = result.equal ? "ok" : "fail";
  stage.reason = result.equal ? "" : "output mismatch: " + result.message;
  stage.diagnostics = "max normalized error " + std::to_string(result.max_normalized_error) + " over " +
                      std::to_string(result.tokens_compared) + " tokens";
  return stage;
}

void add_compare_stage(StageContext& context, const std::string& expected, const std::string& actual) {
  context.add(compare_stage(context, expected, actual));
}

// The CUDA program's output against its HIP translation's output on NVIDIA. Real programs print
// what is not their result (timings, bandwidths, addresses). On a mismatch, two kinds of token
// are left out of a second comparison: numbers followed by a measurement unit
// (verifier.measurement_units), and tokens that differ between two runs of the CUDA program,
// which runs once more for this (its second output is kept with the stage).
void run_compare_stage(StageContext& context) {
  if (!stage_enabled_here(context, "compare") ||
      !dependencies_ok(context, "compare", {"nvidia.run", "hip_on_nvidia.run"})) {
    return;
  }
  const std::string& expected = context.find("nvidia.run")->artifact("stdout")->content;
  const std::string& actual = context.find("hip_on_nvidia.run")->artifact("stdout")->content;
  StageResult stage = compare_stage(context, expected, actual);
  if (stage.ok()) return context.add(std::move(stage));

  std::vector<size_t> measured = measurement_tokens(expected, context.options.measurement_units);
  std::vector<size_t> unstable;
  std::string rerun_note;
  StageResult rerun = run_program_stage(context, "nvidia.rerun", context.scratch_dir + "/nvidia.exe", true);
  const Artifact* rerun_stdout = rerun.artifact("stdout");
  if (rerun.ok() && rerun_stdout) {
    unstable = unstable_tokens(expected, rerun_stdout->content, {context.options.compare_tolerance});
  } else {
    rerun_note = "; a second run of the CUDA program did not finish (" + rerun.status + ")";
  }
  std::vector<size_t> ignored = measured;
  ignored.insert(ignored.end(), unstable.begin(), unstable.end());
  if (!ignored.empty()) {
    stage = compare_stage(context, expected, actual, std::move(ignored));
    stage.diagnostics += "; left out: " + std::to_string(measured.size()) + " measurements (a number before a unit), " +
                         std::to_string(unstable.size()) + " tokens that differ between two runs of the CUDA program";
  }
  stage.diagnostics += rerun_note;
  // The second run is this stage's work: its time counts here, so stage seconds account for it.
  stage.seconds += rerun.seconds;
  stage.child_seconds += rerun.child_seconds;
  stage.cpu_seconds += rerun.cpu_seconds;
  if (rerun_stdout) stage.artifacts.push_back({"stdout", "nvidia.rerun.stdout", rerun_stdout->content, rerun.command, "", false});
  context.add(std::move(stage));
}

// A HIP program's output on NVIDIA against the reference output it should print.
void run_expected_compare_stage(StageContext& context, const std::string& expected) {
  if (!stage_enabled_here(context, "compare") || !dependencies_ok(context, "compare", {"hip_on_nvidia.run"})) return;
  add_compare_stage(context, expected, context.find("hip_on_nvidia.run")->artifact("stdout")->content);
}

// The CUDA libraries a program links, from the library headers it includes, or a header in its
// include directories does (a bundle's helper header including cublas_v2.h links cuBLAS).
std::vector<std::string> cuda_link_libraries(const std::string& source_path, const std::vector<std::string>& include_dirs) {
  static const std::vector<std::pair<text::Regex, std::string>> libraries = {
      {text::Regex(R"(#\s*include\s*[<"](cublas_v2|cublas)\.h[>"])"), "cublas"},
      {text::Regex(R"(#\s*include\s*[<"]cublasLt\.h[>"])"), "cublasLt"},
      {text::Regex(R"(#\s*include\s*[<"]curand\.h[>"])"), "curand"},
      {text::Regex(R"(#\s*include\s*[<"]cufft(Xt)?\.h[>"])"), "cufft"},
      {text::Regex(R"(#\s*include\s*[<"]cusparse\.h[>"])"), "cusparse"},
      {text::Regex(R"(#\s*include\s*[<"]nvrtc\.h[>"])"), "nvrtc"},
      {text::Regex(R"(#\s*include\s*[<"]cuda\.h[>"])"), "cuda"}};
  std::vector<std::string> texts = {read_text_file_or_empty(source_path)};
  for (const std::string& dir : include_dirs) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
      std::error_code size_error;
      if (entry.is_regular_file(size_error) && entry.file_size(size_error) < (1u << 20)) texts.push_back(read_text_file_or_empty(entry.path().string()));
    }
  }
  std::vector<std::string> found;
  for (const auto& [pattern, library] : libraries) {
    for (const std::string& text : texts) {
      if (!text::regex_search(text, pattern)) continue;
      found.push_back(library);
      break;
    }
  }
  return found;
}

void run_track(StageContext& context, const ChainOptions& options, const std::string& source,
               const std::string& extension) {
  const std::string& dir = context.scratch_dir;
  if (extension == ".cu") {
    if (!options.translate_cuda_to_hip) return run_nvidia_stages(context, source);
    // Named as a .hip input is (verify_file copies it to source.hip), so a model's answer that
    // equals this translation hits the same compile cache entries. The NVIDIA stages need no
    // translation: they run beside it and the HIP stages. The translator is called on this thread.
    std::string hip = dir + "/source.hip";
    auto translate_and_hip_stages = [&](StageContext& branch) {
      run_translate_stage(branch, options, source, hip);
      if (branch.ok("translate.hip")) {
        run_branches(branch, {[&](StageContext& amd) { run_amd_stages(amd, hip); },
                              [&](StageContext& nvidia) { run_hip_on_nvidia_stages(nvidia, hip); }});
        return;
      }
      for (const auto& target : branch.options.amd_targets) {
        for (const char* family : {"amd.asm.", "amd.assemble.", "amd.codeobject."}) {
          branch.add(skipped_stage(family + target, "upstream: translate.hip"));
        }
      }
      for (const char* name : {"amd.run", "hip_on_nvidia.exe", "hip_on_nvidia.run"}) {
        branch.add(skipped_stage(name, "upstream: translate.hip"));
      }
    };
    run_branches(context, {[&](StageContext& nvidia) { run_nvidia_stages(nvidia, source); }, translate_and_hip_stages});
    run_compare_stage(context);
  } else if (extension == ".hip") {
    run_branches(context, {[&](StageContext& amd) { run_amd_stages(amd, source); },
                           [&](StageContext& nvidia) { run_hip_on_nvidia_stages(nvidia, source); }});
    if (options.expected_stdout) run_expected_compare_stage(context, *options.expected_stdout);
  } else if (extension == ".c") {
    std::optional<std::string> expected = options.expected_stdout;
    if (!expected && fs::exists(source + ".expected")) expected = read_text_file_or_empty(source + ".expected");
    run_x86_stages(context, source, options.x86_driver, expected);
  } else if (extension == ".s") {
    run_amd_assembly_stages(context, source, options.asm_target);
  }
}

}  // namespace

const StageResult* ChainResult::stage(const std::string& name) const {
  for (const auto& item : stages) {
    if (item.name == name) return &item;
  }
  return nullptr;
}

ChainResult verify_file(const std::string& path, const ChainOptions& options) {
  ChainResult result;
  result.file = path;
  std::string extension = fs::path(path).extension();
  result.track = options.track.empty() ? default_track(extension) : options.track;
  const Toolchains& toolchains = options.toolchains ? *options.toolchains : detected_toolchains();
  StageContext context{options.verifier, toolchains, options.cache_db, options.gate, "", {}};
  auto fail = [&](const std::string& reason) {
    StageResult stage;
    stage.name = "chain";
    stage.status = "error";
    stage.reason = reason;
    result.stages.push_back(stage);
    result.ok = false;
    return result;
  };
  if (result.track.empty()) return fail("unsupported file kind '" + extension + "' (want .cu, .hip, .c or .s)");
  if (!fs::is_regular_file(path)) return fail("no such file: " + path);
  Result<std::string> scratch = make_scratch_directory(options.verifier, "tailforge-verify");
  if (!scratch) return fail(scratch.message());
  context.scratch_dir = *scratch;
  context.cuda_include_dirs = options.include_dirs;
  context.hip_include_dirs = options.hip_include_dirs.empty() ? options.include_dirs : options.hip_include_dirs;
  context.hip_include_dirs.push_back(options.hip_compat_include.empty() ? data_path("verifier/hip_compat")
                                                                        : options.hip_compat_include);
  if (extension == ".cu" || extension == ".hip") {
    static const text::Regex main_function(R"((^|[^\w.>:])main\s*\()");
    context.compile_only = !text::regex_search(read_text_file_or_empty(path), main_function);
  }
  if (extension == ".cu") context.cuda_libraries = cuda_link_libraries(path, options.include_dirs);
  context.shared_cuda_runtime = options.shared_cuda_runtime;
  if (options.record_launches && options.shared_cuda_runtime) context.launch_recording = &*options.record_launches;
  try {
    std::string source = context.scratch_dir + "/source" + extension;
    fs::copy_file(path, source);
    run_track(context, options, source, extension);
  } catch (const std::exception& error) {
    context.add(StageResult{"chain", "error", 0, std::string("internal error: ") + error.what()});
  }
  remove_scratch_directory(options.verifier, context.scratch_dir);
  auto recording = std::find_if(context.stages.begin(), context.stages.end(),
                                [](const StageResult& stage) { return stage.name == kLaunchRecordingStage; });
  if (recording != context.stages.end()) {
    result.launch_recording = std::move(*recording);
    context.stages.erase(recording);
  }
  result.stages = std::move(context.stages);
  result.ok = true;
  for (const auto& stage : result.stages) {
    if (stage.status == "fail" || stage.status == "timeout" || stage.status == "error") result.ok = false;
  }
  return result;
}

nlohmann::ordered_json chain_result_to_json(const ChainResult& result) {
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (const auto& stage : result.stages) {
    nlohmann::ordered_json item;
    item["name"] = stage.name;
    item["status"] = stage.status;
    item["seconds"] = stage.seconds;
    item["cpu_seconds"] = stage.cpu_seconds;
    item["reason"] = stage.reason;
    item["diagnostics"] = stage.diagnostics;
    item["category"] = stage.category ? nlohmann::ordered_json(*stage.category) : nlohmann::ordered_json();
    item["cached"] = stage.cached;
    item["exit_code"] = stage.exit_code ? nlohmann::ordered_json(*stage.exit_code) : nlohmann::ordered_json();
    item["peak_rss_kb"] = stage.peak_rss_kb;
    item["toolchain_version"] = stage.toolchain_version;
    item["command"] = stage.command;
    stages.push_back(std::move(item));
  }
  nlohmann::ordered_json json;
  json["file"] = result.file;
  json["track"] = result.track;
  json["ok"] = result.ok;
  json["stages"] = std::move(stages);
  return json;
}

}  // namespace tailforge
