#include "verifier/ptx2cuda/launch_harness.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/clock.h"
#include "base/files.h"
#include "base/process.h"
#include "base/sha256.h"
#include "verifier/compare.h"
#include "verifier/nvcc_flags.h"
#include "verifier/ptx2cuda/runtime/launch_format.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

// nvcc builds one runtime program into `output` unless it is there already (named by content).
Status build_runtime_program(const std::string& nvcc, const std::vector<std::string>& flags, const std::string& source,
                             const std::string& output) {
  if (fs::exists(output)) return {};
  // Each build writes its own partial file: chains of one daemon build the tools concurrently.
  std::string partial = output + ".partial-" + std::to_string(getpid()) + "-" +
                        std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
  ProcessSpec spec;
  spec.argv = {nvcc};
  spec.argv.insert(spec.argv.end(), flags.begin(), flags.end());
  spec.argv.insert(spec.argv.end(), {source, "-o", partial, "-lcuda"});
  spec.timeout_seconds = 180;
  ProcessResult result = run_process(spec);
  if (!result.succeeded()) {
    return make_error(command_line(spec.argv) + " failed: " + result.spawn_error + result.stderr_text);
  }
  std::error_code error;
  fs::rename(partial, output, error);  // atomic: concurrent builds never see half a file
  if (error) return make_error("cannot move " + partial + " to " + output + ": " + error.message());
  return {};
}

template <typename T>
double element_value(const std::string& bytes, size_t index) {
  T value;
  std::memcpy(&value, bytes.data() + index * sizeof(T), sizeof(T));
  return static_cast<double>(value);
}

double element_at(const std::string& bytes, const std::string& type, size_t index) {
  if (type == "f32") return element_value<float>(bytes, index);
  if (type == "f64") return element_value<double>(bytes, index);
  if (type == "i32") return element_value<int32_t>(bytes, index);
  if (type == "u32") return element_value<uint32_t>(bytes, index);
  if (type == "i64") return element_value<int64_t>(bytes, index);
  if (type == "u64") return element_value<uint64_t>(bytes, index);
  if (type == "i8") return element_value<int8_t>(bytes, index);
  return element_value<uint8_t>(bytes, index);
}

size_t element_size(const std::string& type) {
  if (type == "f64" || type == "i64" || type == "u64") return 8;
  if (type == "f32" || type == "i32" || type == "u32") return 4;
  return 1;
}

StageResult stage_failure(const std::string& name, const std::string& reason, const std::string& diagnostics) {
  StageResult stage;
  stage.name = name;
  stage.status = "fail";
  stage.reason = reason;
  stage.diagnostics = diagnostics;
  return stage;
}

}  // namespace

Result<HarnessTools> build_harness_tools(const StageContext& context) {
  const Tool& nvcc = context.toolchains.tool("nvcc");
  if (!nvcc.found()) return make_error("nvcc not found: the ptx2cuda harness is built by the CUDA toolkit");
  std::string capture_source = data_path("verifier/ptx2cuda/runtime/launch_capture.cu");
  std::string replay_source = data_path("verifier/ptx2cuda/runtime/launch_replay.cu");
  std::string format_header = data_path("verifier/ptx2cuda/runtime/launch_format.h");
  std::string key = sha256_hex(read_text_file_or_empty(capture_source) + read_text_file_or_empty(replay_source) + read_text_file_or_empty(format_header) +
                               nvcc.version_line)
                        .substr(0, 16);
  std::string dir = resolved_cache_dir(context.options) + "/ptx2cuda-harness-" + key;
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return make_error("cannot create " + dir + ": " + error.message());
  chmod(dir.c_str(), 0755);
  HarnessTools tools{dir + "/libtailforge_launch_capture.so", dir + "/launch_replay"};
  if (Status built = build_runtime_program(nvcc.path, {"-shared", "-Xcompiler", "-fPIC", "-cudart", "shared"},
                                           capture_source, tools.capture_library);
      !built) {
    return built.error();
  }
  if (Status built = build_runtime_program(nvcc.path, {}, replay_source, tools.replay); !built) {
    return built.error();
  }
  return tools;
}

Result<std::vector<CapturedLaunch>> read_captured_launches(const std::string& capture_dir) {
  std::vector<CapturedLaunch> launches;
  for (int index = 0;; ++index) {
    std::string dir = capture_dir + "/launch_" + std::to_string(index);
    std::error_code error;
    fs::file_status status = fs::symlink_status(dir, error);
    if (error || status.type() == fs::file_type::not_found) break;
    if (status.type() != fs::file_type::directory) return make_error(dir + " is not a folder");
    for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
      if (!entry.is_symlink() && entry.is_regular_file()) continue;
      return make_error(entry.path().string() + " is not a plain file: a captured launch holds only plain files");
    }
    if (error) return make_error("cannot list " + dir + ": " + error.message());
    std::ifstream in(dir + "/launch.txt");
    if (!in) break;
    tailforge_launch::RecordedLaunch recorded;
    if (!tailforge_launch::parse_launch(in, recorded)) return make_error(dir + "/launch.txt is malformed or names no kernel");
    CapturedLaunch launch;
    launch.dir = dir;
    launch.kernel = recorded.kernel;
    std::copy(recorded.grid, recorded.grid + 3, launch.grid);
    std::copy(recorded.block, recorded.block + 3, launch.block);
    launch.shared_bytes = recorded.shared_bytes;
    launch.parameters = recorded.params.size();
    for (const tailforge_launch::RecordedBuffer& buffer : recorded.buffers) {
      launch.buffer_bytes.push_back(buffer.bytes);
      launch.buffer_parameters.push_back(buffer.parameter);
    }
    for (const tailforge_launch::RecordedGlobal& global : recorded.globals) launch.globals.push_back(global.name);
    launch.skipped = recorded.skipped;
    launches.push_back(std::move(launch));
  }
  return launches;
}

StoredLaunch load_captured_launch(const CapturedLaunch& launch) {
  StoredLaunch stored;
  stored.launch_txt = read_text_file_or_empty(launch.dir + "/launch.txt");
  for (size_t k = 0; k < launch.buffer_bytes.size(); ++k) {
    std::string stem = launch.dir + "/buffer_" + std::to_string(k);
    stored.inputs.push_back(read_text_file_or_empty(stem + ".in"));
    stored.outputs.push_back(read_text_file_or_empty(stem + ".out"));
  }
  for (const std::string& name : launch.globals) {
    std::string stem = launch.dir + "/global_" + name;
    stored.globals.push_back({name, read_text_file_or_empty(stem + ".in"), read_text_file_or_empty(stem + ".out")});
  }
  return stored;
}

void keep_module_variables(StoredLaunch& launch, const std::vector<std::string>& names) {
  auto kept = [&](const std::string& name) { return std::find(names.begin(), names.end(), name) != names.end(); };
  std::erase_if(launch.globals, [&](const StoredLaunch::Variable& variable) { return !kept(variable.name); });
  std::istringstream lines(launch.launch_txt);
  std::string line, text;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string keyword, name;
    words >> keyword >> name;
    if (keyword == "global" && !kept(name)) continue;
    text += line + "\n";
  }
  launch.launch_txt = text;
}

Result<CapturedLaunch> restore_captured_launch(const StoredLaunch& stored, const std::string& dir) {
  std::string launch_dir = dir + "/launch_0";
  std::error_code error;
  fs::create_directories(launch_dir, error);
  if (error) return make_error("cannot make " + launch_dir + ": " + error.message());
  bool written = write_text_file(launch_dir + "/launch.txt", stored.launch_txt).ok();
  for (size_t k = 0; k < stored.inputs.size() && k < stored.outputs.size(); ++k) {
    std::string stem = launch_dir + "/buffer_" + std::to_string(k);
    written = written && write_text_file(stem + ".in", stored.inputs[k]).ok() && write_text_file(stem + ".out", stored.outputs[k]).ok();
  }
  for (const StoredLaunch::Variable& variable : stored.globals) {
    std::string stem = launch_dir + "/global_" + variable.name;
    written = written && write_text_file(stem + ".in", variable.input).ok() && write_text_file(stem + ".out", variable.output).ok();
  }
  if (!written) return make_error("cannot write the stored launch into " + launch_dir + " (disk full?)");
  Result<std::vector<CapturedLaunch>> launches = read_captured_launches(dir);
  if (!launches) return launches.error();
  if (launches->empty()) return make_error("the stored launch has no launch.txt");
  CapturedLaunch launch = std::move(launches->front());
  if (launch.skipped.empty() && launch.buffer_bytes.size() != stored.inputs.size()) {
    return make_error("the stored launch names " + std::to_string(launch.buffer_bytes.size()) + " buffers but " +
                      std::to_string(stored.inputs.size()) + " were stored");
  }
  for (const std::string& name : launch.globals) {
    if (!fs::exists(launch_dir + "/global_" + name + ".in")) {
      return make_error("the stored launch names module variable " + name + " but its contents were not stored");
    }
  }
  return launch;
}

StageResult run_recorded_program_stage(StageContext& context, const std::string& name, const std::string& library,
                                       const std::string& executable, const std::vector<std::string>& global_names,
                                       std::string& capture_dir) {
  auto start = std::chrono::steady_clock::now();
  Result<std::string> program = place_program(context, "recorded-" + name, executable);
  if (!program) return skipped_stage(name, program.message());
  std::string dir = fs::path(*program).parent_path();
  std::error_code error;
  fs::copy_file(library, dir + "/capture.so", fs::copy_options::overwrite_existing, error);
  if (error) return skipped_stage(name, "cannot copy the capture library into " + dir + ": " + error.message());
  std::string globals;
  for (const std::string& global : global_names) globals += (globals.empty() ? "" : " ") + global;
  std::vector<std::string> settings = {"LD_PRELOAD=" + dir + "/capture.so", "TAILFORGE_CAPTURE_DIR=" + dir,
                                       "TAILFORGE_CAPTURE_GLOBALS=" + globals};
  for (const std::string& setting : cuda_single_queue_settings(context)) settings.push_back(setting);
  double preparing = seconds_since(start);
  StageResult stage = run_untrusted_stage(context, name, with_environment(settings, {*program}), dir, true);
  stage.seconds += preparing;
  if (stage.ok()) capture_dir = dir;
  return stage;
}

StageResult run_capture_stage(StageContext& context, const HarnessTools& tools, const std::string& executable,
                              const std::vector<std::string>& global_names, std::string& capture_dir) {
  return run_recorded_program_stage(context, "ptx2cuda.capture", tools.capture_library, executable, global_names,
                                    capture_dir);
}

Status keep_captured_launches(const std::string& capture_dir, const std::string& keep_dir) {
  std::error_code error;
  if (!fs::create_directory(keep_dir, error) || error) {
    return make_error("cannot create " + keep_dir + (error ? ": " + error.message() : ": it exists"));
  }
  for (int index = 0;; ++index) {
    std::string name = "/launch_" + std::to_string(index);
    fs::file_status status = fs::symlink_status(capture_dir + name, error);
    if (error || status.type() == fs::file_type::not_found) break;
    fs::rename(capture_dir + name, keep_dir + name, error);
    if (error) {  // another file system: copy, links as links (read_captured_launches refuses them)
      error.clear();
      fs::copy(capture_dir + name, keep_dir + name, fs::copy_options::recursive | fs::copy_options::copy_symlinks, error);
    }
    if (error) return make_error("cannot move " + capture_dir + name + " to " + keep_dir + ": " + error.message());
  }
  return {};
}

BufferComparison compare_buffers(const std::string& expected, const std::string& actual, const std::string& element_type) {
  BufferComparison result;
  if (expected.size() != actual.size()) {
    result.equal = false;
    result.message = std::to_string(actual.size()) + " bytes where " + std::to_string(expected.size()) + " were recorded";
    return result;
  }
  size_t width = element_size(element_type);
  bool numeric = element_type == "f32" || element_type == "f64" || element_type == "i32" || element_type == "u32" ||
                 element_type == "i64" || element_type == "u64" || element_type == "i8" || element_type == "u8";
  if (!numeric || expected.size() % width != 0) {
    auto differ = std::mismatch(expected.begin(), expected.end(), actual.begin());
    if (differ.first == expected.end()) return result;
    result.equal = false;
    result.message = "byte " + std::to_string(differ.first - expected.begin()) + " differs";
    return result;
  }
  for (size_t i = 0; i < expected.size() / width; ++i) {
    double want = element_at(expected, element_type, i), got = element_at(actual, element_type, i);
    double error = normalized_error(want, got);
    result.max_error = std::max(result.max_error, error);
    if (result.equal && error > 1e-3) {
      result.equal = false;
      std::ostringstream message;
      message << "element " << i << " (" << element_type << "): " << got << " where " << want
              << " was recorded, normalized error " << error;
      result.message = message.str();
    }
  }
  return result;
}

std::string run_candidate_compile_stage(StageContext& context, const std::string& candidate_source,
                                        const std::vector<std::string>& include_dirs) {
  std::string dir = make_subdirectory(context, "candidate");
  std::string source = dir + "/candidate.cu", module = dir + "/candidate.cubin";
  // A failed write shows as the compile's missing input, with the path.
  (void)write_text_file(source, candidate_source);
  // The module the replay loads: a cubin for this machine's GPU when nvcc builds its architecture
  // (or for the last configured target where no GPU runs it), else a fatbin whose PTX the driver
  // compiles for the GPU.
  std::string sm = context.options.sm_targets.empty() ? "sm_90" : context.options.sm_targets.back();
  bool gpu_without_cubin = false;
  for (const GpuInfo& gpu : context.toolchains.gpus) {
    if (gpu.vendor != "nvidia") continue;
    if (nvcc_builds_cubin_for(gpu, context.toolchains)) {
      sm = gpu.arch;
      gpu_without_cubin = false;
      break;
    }
    gpu_without_cubin = true;
  }
  std::vector<std::string> args = {"-cubin", "-arch=" + sm};
  if (gpu_without_cubin) {
    args = {"-fatbin"};
    for (const std::string& flag : executable_gencode_flags(context.options.sm_targets, context.toolchains)) {
      args.push_back(flag);
    }
  }
  for (const std::string& flag : include_flags(include_dirs)) args.push_back(flag);
  args.insert(args.end(), {source, "-o", module});
  context.add(run_tool_stage(context, {"ptx2cuda.compile", "nvcc", args, {source}, {{"cubin", module, true}}, sm, {}, ""}));
  return module;
}

void run_candidate_stages(StageContext& context, const HarnessTools& tools, const CapturedLaunch& launch,
                          const std::string& candidate_source, const std::vector<std::string>& element_types) {
  std::string module = run_candidate_compile_stage(context, candidate_source, {});
  run_replay_stages(context, tools, launch, module, element_types);
}

void run_replay_stages(StageContext& context, const HarnessTools& tools, const CapturedLaunch& launch,
                       const std::string& module, const std::vector<std::string>& element_types) {
  if (!stage_enabled_here(context, "ptx2cuda.launch") ||
      !dependencies_ok(context, "ptx2cuda.launch", {"ptx2cuda.compile"})) {
    return;
  }
  if (!launch.skipped.empty()) {
    return context.add(skipped_stage("ptx2cuda.launch", "the recorded launch has no buffers: " + launch.skipped));
  }

  std::string run_dir = make_subdirectory(context, "replay-" + launch.kernel);
  std::error_code error;
  fs::copy_file(launch.dir + "/launch.txt", run_dir + "/launch.txt", error);
  for (size_t k = 0; k < launch.buffer_bytes.size() && !error; ++k) {
    std::string name = "/buffer_" + std::to_string(k) + ".in";
    fs::copy_file(launch.dir + name, run_dir + name, error);
  }
  for (size_t g = 0; g < launch.globals.size() && !error; ++g) {
    std::string name = "/global_" + launch.globals[g] + ".in";
    fs::copy_file(launch.dir + name, run_dir + name, error);
  }
  if (!error) fs::copy_file(module, run_dir + "/candidate.cubin", error);
  if (!error) fs::copy_file(tools.replay, run_dir + "/replay", error);
  if (error) return context.add(skipped_stage("ptx2cuda.launch", "cannot prepare the replay: " + error.message()));
  chmod((run_dir + "/replay").c_str(), 0755);
  // The replay launches one kernel on the default stream: one hardware queue changes nothing for it.
  StageResult replay = run_untrusted_stage(
      context, "ptx2cuda.launch",
      with_environment(cuda_single_queue_settings(context), {run_dir + "/replay", run_dir + "/candidate.cubin", run_dir, run_dir}),
      run_dir, true);
  context.add(replay);
  if (!dependencies_ok(context, "ptx2cuda.compare", {"ptx2cuda.launch"})) return;

  StageResult compare;
  compare.name = "ptx2cuda.compare";
  compare.status = "ok";
  for (size_t k = 0; k < launch.buffer_bytes.size(); ++k) {
    std::string name = "/buffer_" + std::to_string(k) + ".out";
    std::string type = k < element_types.size() ? element_types[k] : "bytes";
    BufferComparison buffer = compare_buffers(read_text_file_or_empty(launch.dir + name), read_text_file_or_empty(run_dir + name), type);
    compare.diagnostics += "buffer " + std::to_string(k) + ": " + (buffer.equal ? "equal" : buffer.message) + "\n";
    if (!buffer.equal && compare.ok()) {
      compare = stage_failure(compare.name, "buffer " + std::to_string(k) + " differs from the recorded output",
                              compare.diagnostics);
    }
  }
  for (const std::string& global : launch.globals) {
    std::string recorded = read_text_file_or_empty(launch.dir + "/global_" + global + ".out");
    std::string replayed_path = run_dir + "/global_" + global + ".out";
    bool changed = recorded != read_text_file_or_empty(launch.dir + "/global_" + global + ".in");
    if (!fs::exists(replayed_path) && !changed) continue;  // neither kernel writes it
    BufferComparison variable = fs::exists(replayed_path)
                                    ? compare_buffers(recorded, read_text_file_or_empty(replayed_path), "bytes")
                                    : BufferComparison{false, 0, "the candidate does not declare it"};
    compare.diagnostics += "global " + global + ": " + (variable.equal ? "equal" : variable.message) + "\n";
    if (!variable.equal && compare.ok()) {
      compare = stage_failure(compare.name, "global " + global + " differs from the recorded output", compare.diagnostics);
    }
  }
  context.add(std::move(compare));
}

}  // namespace tailforge
