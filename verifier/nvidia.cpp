#include "verifier/nvidia.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>

#include "base/files.h"
#include "text/regex.h"
#include "verifier/ptx2cuda/launch_harness.h"
#include "verifier/sass2rdna3/kernel_split.h"

namespace tailforge {

std::string availability_reason(const StageContext& context, const std::string& family) {
  for (const auto& stage : stage_availability(context.toolchains, context.options.sandbox.mode)) {
    if (stage.stage == family) return stage.reason;
  }
  return "unknown stage " + family;
}

namespace {

void add_kernel_artifacts(StageResult& stage, const std::string& kind, const std::vector<KernelText>& kernels) {
  for (const auto& kernel : kernels) {
    stage.artifacts.push_back({kind, kernel.name, kernel.text, stage.command, stage.toolchain_version, false});
  }
}

// The SASS of every target's cubin, one cuobjdump run per cubin (an executable also holds the
// device link's cubins, empty of kernels, and cuobjdump takes as long for each: on a 16-core H200
// host a two-target executable took 1.7 s, its two cubins 0.8 s). Each cubin's dump starts with
// its "code for sm_NN" line, in target order, in one "sass" artifact. Without cuobjdump, nvdisasm
// disassembles the first target's cubin.
void run_sass_stage(StageContext& context) {
  std::string reason = availability_reason(context, "nvidia.sass");
  if (!reason.empty()) return context.add(skipped_stage("nvidia.sass", reason));
  const std::vector<std::string>& sms = context.options.sm_targets;
  auto cubin_of = [&](const std::string& sm) { return context.scratch_dir + "/nvidia." + sm + ".cubin"; };
  bool cuobjdump = context.toolchains.tool("cuobjdump").found();
  std::vector<std::string> targets = cuobjdump ? sms : std::vector<std::string>{sms.front()};
  std::vector<std::string> producers;
  for (const std::string& sm : targets) producers.push_back("nvidia.cubin." + sm);
  if (!dependencies_ok(context, "nvidia.sass", producers)) return;
  StageResult stage;
  std::string sass;
  for (const std::string& sm : targets) {
    ToolStep step;
    step.stage_name = "nvidia.sass";
    step.tool_role = cuobjdump ? "cuobjdump" : "nvdisasm";
    step.args = cuobjdump ? std::vector<std::string>{"-sass", cubin_of(sm)} : std::vector<std::string>{cubin_of(sm)};
    step.inputs = {cubin_of(sm)};
    step.target = sm;
    step.stdout_kind = "sass";
    StageResult one = run_tool_stage(context, step);
    if (const Artifact* dump = one.artifact("sass")) sass += dump->content;
    if (targets.size() == 1 || sm == targets.front()) {
      stage = std::move(one);
    } else {  // one stage: every run's command and seconds, the first failure's status and messages
      std::string command = stage.command + " ; " + one.command;
      double seconds = stage.seconds + one.seconds, child_seconds = stage.child_seconds + one.child_seconds;
      double cpu_seconds = stage.cpu_seconds + one.cpu_seconds;
      bool cached = stage.cached && one.cached;
      int64_t peak_rss_kb = std::max(stage.peak_rss_kb, one.peak_rss_kb);
      if (!one.ok()) stage = std::move(one);
      stage.command = command;
      stage.seconds = seconds;
      stage.child_seconds = child_seconds;
      stage.cpu_seconds = cpu_seconds;
      stage.cached = cached;
      stage.peak_rss_kb = peak_rss_kb;
    }
    if (!stage.ok()) break;
  }
  stage.name = "nvidia.sass";
  if (stage.ok()) {
    stage.artifacts = {{"sass", "sass", sass, stage.command, stage.toolchain_version, false}};
    add_kernel_artifacts(stage, "sass_kernel", split_sass_functions(sass));
  }
  context.add(std::move(stage));
}

}  // namespace

std::vector<KernelText> split_ptx_kernels(const std::string& ptx) {
  std::vector<KernelText> kernels;
  static const text::Regex entry(R"(\.entry\s+([A-Za-z_$][\w$]*))");
  std::istringstream stream(ptx);
  std::string line;
  KernelText* current = nullptr;
  int depth = 0;
  bool opened = false;
  while (std::getline(stream, line)) {
    text::Match match;
    if (!current && text::regex_search(line, match, entry)) {
      kernels.push_back({match[1], ""});
      current = &kernels.back();
      depth = 0;
      opened = false;
    }
    if (!current) continue;
    current->text += line + "\n";
    for (char c : line) {
      if (c == '{') { ++depth; opened = true; }
      if (c == '}') --depth;
    }
    if (opened && depth == 0) current = nullptr;
  }
  return kernels;
}

std::vector<KernelText> split_sass_functions(const std::string& sass) {
  std::vector<KernelText> functions;
  for (SassFunction& function : split_sass_functions_by_arch(sass, "")) {
    functions.push_back({std::move(function.name), std::move(function.text)});
  }
  return functions;
}

namespace {

// The virtual architectures the -gencode flags name ("arch=compute_80,code=sm_80" -> compute_80),
// each with the number of codes asked of it.
std::map<std::string, int> gencode_virtual_arches(const std::vector<std::string>& gencode) {
  std::map<std::string, int> codes;
  for (const std::string& flag : gencode) {
    if (flag.rfind("arch=", 0) != 0) continue;
    ++codes[flag.substr(5, flag.find(',') - 5)];
  }
  return codes;
}

// The "<stem>" nvcc --keep gives the files of `virtual_arch`: "<stem>.compute_NN" when the flags
// name more than one virtual architecture, plain "<stem>" when they name one.
std::string kept_stem(const std::string& stem, const std::string& virtual_arch, const std::vector<std::string>& gencode) {
  return gencode_virtual_arches(gencode).size() > 1 ? stem + "." + virtual_arch : stem;
}

// The cubin nvcc --keep leaves for `sm`: the kept stem, then ".sm_NN" when the flags ask its
// virtual architecture for more than one code (another SASS, or its PTX embedded), then ".cubin".
// With sm_80 and sm_90: "p.compute_80.sm_80.cubin" (PTX of compute_80 embedded) and
// "p.compute_90.cubin"; with sm_80 alone: "p.sm_80.cubin".
std::string kept_cubin_name(const std::string& stem, const std::string& sm, const std::vector<std::string>& gencode) {
  std::string virtual_arch = "compute_" + sm.substr(3);
  int codes = gencode_virtual_arches(gencode)[virtual_arch];
  return kept_stem(stem, virtual_arch, gencode) + (codes > 1 ? "." + sm : "") + ".cubin";
}

// nvidia.exe's link flags: the libraries the program uses, and the shared CUDA runtime where the
// chain asks for it.
std::vector<std::string> executable_link_flags(const StageContext& context) {
  std::vector<std::string> flags;
  for (const std::string& library : context.cuda_libraries) flags.push_back("-l" + library);
  if (context.shared_cuda_runtime) {
    for (const std::string& flag : shared_cuda_runtime_flags(context.toolchains)) flags.push_back(flag);
  }
  return flags;
}

bool single_pass_applies(const StageContext& context) {
  if (!context.options.nvcc_single_pass || context.compile_only) return false;
  std::vector<std::string> stages = {"nvidia.ptx", "nvidia.exe"};
  for (const std::string& sm : context.options.sm_targets) stages.push_back("nvidia.cubin." + sm);
  for (const std::string& stage : stages) {
    if (!stage_enabled(context.options, stage)) return false;
  }
  return true;
}

// The PTX, each target's cubin, the executable and the host assembly from one nvcc run that keeps
// its intermediate files. The PTX and cubins are what `nvcc -ptx` and `nvcc -cubin` write, byte
// for byte. The host assembly is gcc's saved assembly (-save-temps=obj) of the host object linked
// into the executable: the separate `-S` compile's code, with the executable's device image (every
// target) embedded instead of one target's, and the occasional `nop` gcc emits at -O0 when it
// compiles its own saved preprocessed file. Each output is its own stage, as the separate compiles
// make them (same names, artifacts and files); nvidia.exe carries the run's seconds and the others
// say so. False, adding nothing, when the run did not give every output (a compile error, a failed
// link, another nvcc's file names): the separate compiles then say which output failed.
bool run_single_nvcc_pass(StageContext& context, const std::string& cuda_path, const std::vector<std::string>& includes,
                          const std::string& exe) {
  const std::vector<std::string>& sms = context.options.sm_targets;
  const std::string& dir = context.scratch_dir;
  std::string keep = dir + "/nvcc-keep";
  std::error_code ec;
  std::filesystem::create_directories(keep, ec);
  if (ec) return false;
  std::string stem = std::filesystem::path(cuda_path).stem().string();
  std::vector<std::string> gencode = executable_gencode_flags(sms, context.toolchains);
  bool host_asm = stage_enabled(context.options, "nvidia.host_asm");
  std::vector<std::string> args = includes;
  args.insert(args.end(), gencode.begin(), gencode.end());
  if (host_asm) args.insert(args.end(), {"-Xcompiler", "-save-temps=obj"});
  args.insert(args.end(), {"--keep", "--keep-dir", keep, cuda_path, "-o", exe});
  for (const std::string& flag : executable_link_flags(context)) args.push_back(flag);
  ToolStep step{"nvidia.exe", "nvcc", args, {cuda_path}, {{"executable", exe, true}}, "", {}, ""};
  step.outputs.push_back({"ptx", keep + "/" + kept_stem(stem, "compute_" + sms.front().substr(3), gencode) + ".ptx", false});
  for (const std::string& sm : sms) step.outputs.push_back({"cubin", keep + "/" + kept_cubin_name(stem, sm, gencode), true});
  if (host_asm) step.outputs.push_back({"host_asm", keep + "/" + stem + ".s", false});
  step.outputs_required = true;
  StageResult pass = run_tool_stage(context, step);
  if (!pass.ok() || pass.artifacts.size() != step.outputs.size()) return false;

  // The files the separate compiles would leave, for the stages after these (SASS, pairs).
  std::vector<std::string> paths = {exe, dir + "/nvidia.ptx"};
  for (const std::string& sm : sms) paths.push_back(dir + "/nvidia." + sm + ".cubin");
  if (host_asm) paths.push_back(dir + "/nvidia.host.s");
  for (size_t i = 1; i < paths.size(); ++i) {
    if (!write_text_file(paths[i], pass.artifacts[i].content).ok()) return false;
  }
  auto output_stage = [&](const std::string& name, size_t artifact) {
    StageResult stage = pass;
    stage.name = name;
    stage.artifacts = {pass.artifacts[artifact]};
    stage.artifacts.front().name = std::filesystem::path(paths[artifact]).filename();
    if (name != "nvidia.exe") {
      stage.seconds = 0;
      stage.child_seconds = 0;
      stage.cpu_seconds = 0;
      stage.reason = "made by nvidia.exe's nvcc run (verifier.nvcc_single_pass), whose seconds are counted there";
    }
    return stage;
  };
  StageResult ptx = output_stage("nvidia.ptx", 1);
  add_kernel_artifacts(ptx, "ptx_kernel", split_ptx_kernels(ptx.artifacts.front().content));
  context.add(std::move(ptx));
  for (size_t i = 0; i < sms.size(); ++i) context.add(output_stage("nvidia.cubin." + sms[i], 2 + i));
  context.add(output_stage("nvidia.exe", 0));
  if (host_asm) context.add(output_stage("nvidia.host_asm", 2 + sms.size()));
  return true;
}

// nvidia.run with the launch recorder preloaded (StageContext::launch_recording): true when the
// recorded run passed and is nvidia.run. Either way the outcome is stage "ptx2cuda.capture",
// which verify_file keeps apart from the program's stages.
bool run_recorded_nvidia_program(StageContext& context, const std::string& exe) {
  const LaunchRecording& recording = *context.launch_recording;
  std::string capture_dir;
  StageResult run = run_recorded_program_stage(context, "nvidia.run", recording.library, exe, recording.globals, capture_dir);
  if (!run.ok()) {
    // The plain run after this one judges the program; this one's seconds are the recording's.
    run.name = kLaunchRecordingStage;
    run.reason = "the program's run with the launch recorder did not pass: " + run.reason;
    run.artifacts.clear();
    context.add(std::move(run));
    return false;
  }
  StageResult recorded;
  recorded.name = kLaunchRecordingStage;
  recorded.status = "ok";
  recorded.diagnostics = "recorded by nvidia.run, which ran with the launch recorder preloaded (its seconds are nvidia.run's)";
  if (Status kept = keep_captured_launches(capture_dir, recording.keep_dir); !kept) {
    recorded.status = "error";
    recorded.reason = kept.message();
  }
  context.add(std::move(run));
  context.add(std::move(recorded));
  return true;
}

}  // namespace

void run_nvidia_stages(StageContext& context, const std::string& cuda_path) {
  const auto& sms = context.options.sm_targets;
  std::string dir = context.scratch_dir;
  // The program's include directories go first: nvcc's own flags then stay in place.
  auto with_includes = [&](std::vector<std::string> args) {
    std::vector<std::string> flags = include_flags(context.cuda_include_dirs);
    args.insert(args.begin(), flags.begin(), flags.end());
    return args;
  };
  std::string exe = dir + "/nvidia.exe";
  // The separate compiles read only the source: they run at once.
  auto separate_compiles = [&](StageContext& context) {
    std::vector<Branch> compiles;
    compiles.push_back([&](StageContext& branch) {
      ToolStep step{"nvidia.ptx", "nvcc", with_includes({"-ptx", "-arch=compute_" + sms.front().substr(3), cuda_path, "-o", dir + "/nvidia.ptx"}),
                    {cuda_path}, {{"ptx", dir + "/nvidia.ptx", false}}, sms.front(), {}, ""};
      StageResult stage = run_tool_stage(branch, step);
      if (stage.ok()) add_kernel_artifacts(stage, "ptx_kernel", split_ptx_kernels(stage.artifacts.front().content));
      branch.add(std::move(stage));
    });
    for (const auto& sm : sms) {
      compiles.push_back([&, sm](StageContext& branch) {
        std::string cubin = dir + "/nvidia." + sm + ".cubin";
        branch.add(run_tool_stage(branch, {"nvidia.cubin." + sm, "nvcc", with_includes({"-cubin", "-arch=" + sm, cuda_path, "-o", cubin}),
                                           {cuda_path}, {{"cubin", cubin, true}}, sm, {}, ""}));
      });
    }
    compiles.push_back([&](StageContext& branch) {
      if (branch.compile_only) return branch.add(skipped_stage("nvidia.exe", kCompileOnlyReason));
      std::vector<std::string> args = with_includes(executable_gencode_flags(sms, branch.toolchains));
      args.insert(args.end(), {cuda_path, "-o", exe});
      for (const std::string& flag : executable_link_flags(branch)) args.push_back(flag);
      branch.add(run_tool_stage(branch, {"nvidia.exe", "nvcc", args, {cuda_path}, {{"executable", exe, true}}, "", {}, ""}));
    });
    compiles.push_back([&](StageContext& branch) {
      branch.add(run_tool_stage(branch, {"nvidia.host_asm", "nvcc",
                                         with_includes({"-Xcompiler", "-S", "-c", "-arch=" + sms.front(), cuda_path, "-o", dir + "/nvidia.host.s"}),
                                         {cuda_path}, {{"host_asm", dir + "/nvidia.host.s", false}}, sms.front(), {}, ""}));
    });
    run_branches(context, compiles);
  };
  if (!single_pass_applies(context) || !run_single_nvcc_pass(context, cuda_path, with_includes({}), exe)) {
    separate_compiles(context);
  }
  run_sass_stage(context);
  if (context.compile_only) return context.add(skipped_stage("nvidia.run", kCompileOnlyReason));
  if (!stage_enabled_here(context, "nvidia.run")) return;
  std::string reason = availability_reason(context, "nvidia.run");
  if (!reason.empty()) return context.add(skipped_stage("nvidia.run", reason));
  if (!dependencies_ok(context, "nvidia.run", {"nvidia.exe"})) return;
  if (!context.launch_recording) return context.add(run_cuda_program_stage(context, "nvidia.run", exe));
  if (run_recorded_nvidia_program(context, exe)) return;
  // The recorded run did not pass: the program as it is judges itself, without the recorder and
  // without the single hardware queue the recorded run had.
  context.add(run_program_stage(context, "nvidia.run", exe, true));
}

// The CUDA libraries a HIP program links on NVIDIA: its CUDA original's, and those whose HIP
// counterparts it uses (the shim maps hipRAND to cuRAND, hipSPARSE to cuSPARSE, hipRTC to NVRTC,
// the driver-style calls to the CUDA driver).
static std::vector<std::string> hip_on_nvidia_libraries(const StageContext& context, const std::string& hip_path) {
  static const std::vector<std::pair<text::Regex, std::string>> counterparts = {
      {text::Regex(R"(#\s*include\s*[<"]hiprand/hiprand(_kernel)?\.h[>"])"), "curand"},
      {text::Regex(R"(#\s*include\s*[<"]hipsparse/hipsparse\.h[>"])"), "cusparse"},
      {text::Regex(R"(#\s*include\s*[<"]hip/hiprtc\.h[>"])"), "nvrtc"},
      {text::Regex(R"(\bhip(Module|Ctx|DevicePrimaryCtx)\w*\s*\(|\bhipMemcpy[HD]to[HD]|\bhipInit\s*\()"), "cuda"}};
  std::vector<std::string> libraries = context.cuda_libraries;
  std::string text = read_text_file_or_empty(hip_path);
  for (const auto& [pattern, library] : counterparts) {
    if (std::find(libraries.begin(), libraries.end(), library) == libraries.end() && text::regex_search(text, pattern)) {
      libraries.push_back(library);
    }
  }
  return libraries;
}

void run_hip_on_nvidia_stages(StageContext& context, const std::string& hip_path) {
  std::string header_dir = context.options.hip_on_cuda_include.empty()
                               ? data_path("verifier/hip_on_cuda")
                               : context.options.hip_on_cuda_include;
  std::string exe = context.scratch_dir + "/hip_on_nvidia.exe";
  if (context.compile_only) {
    context.add(skipped_stage("hip_on_nvidia.exe", kCompileOnlyReason));
    return context.add(skipped_stage("hip_on_nvidia.run", kCompileOnlyReason));
  }
  // The shim first (it is what hip/hip_runtime.h means here), then the program's own directories.
  std::vector<std::string> args = {"-I", header_dir};
  for (const auto& flag : include_flags(context.hip_include_dirs)) args.push_back(flag);
  args.insert(args.end(), {"-x", "cu"});
  for (const auto& flag : hip_on_nvidia_gencode_flags(context.options.sm_targets, context.toolchains)) args.push_back(flag);
  args.insert(args.end(), {hip_path, "-o", exe});
  for (const std::string& library : hip_on_nvidia_libraries(context, hip_path)) args.push_back("-l" + library);
  // The shim's headers decide the result too: the cache key covers every -I folder's headers.
  context.add(run_tool_stage(context, {"hip_on_nvidia.exe", "nvcc", args, {hip_path},
                                       {{"executable", exe, true}}, "", {}, ""}));
  if (!stage_enabled_here(context, "hip_on_nvidia.run")) return;
  std::string reason = availability_reason(context, "hip_on_nvidia.run");
  if (!reason.empty()) return context.add(skipped_stage("hip_on_nvidia.run", reason));
  if (!dependencies_ok(context, "hip_on_nvidia.run", {"hip_on_nvidia.exe"})) return;
  context.add(run_cuda_program_stage(context, "hip_on_nvidia.run", exe));
}

}  // namespace tailforge
