#include "verifier/amd.h"

#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "base/files.h"
#include "base/process.h"
#include "base/sha256.h"
#include "text/regex.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

std::string isa_file_suffix(const std::string& target) { return target.substr(3); }

// Runs a trusted helper tool for device-library generation.
Status run_helper(const std::vector<std::string>& argv) {
  ProcessSpec spec;
  spec.argv = argv;
  spec.timeout_seconds = 60;
  ProcessResult result = run_process(spec);
  if (!result.succeeded()) {
    return make_error(command_line(argv) + " failed: " + result.spawn_error + result.stderr_text);
  }
  return {};
}

Status generate_isa_bitcode(const StageContext& context, const std::string& dir, const std::string& target) {
  std::string wanted = dir + "/oclc_isa_version_" + isa_file_suffix(target) + ".bc";
  if (fs::exists(wanted)) return {};
  // Mirror an existing isa-version module (its data layout, flags, ident), changing the value.
  std::string model = context.toolchains.rocm_device_libs_dir + "/oclc_isa_version_1030.bc";
  if (!fs::exists(model)) return make_error("no model isa-version bitcode at " + model);
  std::string temp = dir + "/.gen-" + target + "-" + std::to_string(getpid()) + "-" +
                     std::to_string(reinterpret_cast<uintptr_t>(&context));
  Status disassembled = run_helper({context.toolchains.tool("llvm_dis").path, model, "-o", temp + ".ll"});
  if (!disassembled) return disassembled;
  std::string text = read_text_file_or_empty(temp + ".ll");
  text::Regex value(R"(constant i32 \d+)");
  text = text::regex_replace(text, value, "constant i32 " + std::to_string(isa_version_number(target)));
  if (Status written = write_text_file(temp + ".ll", text); !written) return written;
  Status assembled = run_helper({context.toolchains.tool("llvm_as").path, temp + ".ll", "-o", temp + ".bc"});
  std::error_code ignored;
  fs::remove(temp + ".ll", ignored);
  if (!assembled) return assembled;
  fs::rename(temp + ".bc", wanted, ignored);  // atomic: concurrent chains never see half a file
  return {};
}

}  // namespace

int isa_version_number(const std::string& target) {
  std::string digits = target.substr(3);
  if (digits.size() < 3) return 0;
  auto hex = [](char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; };
  int major = std::stoi(digits.substr(0, digits.size() - 2));
  int minor = hex(digits[digits.size() - 2]);
  int stepping = hex(digits.back());
  return major * 1000 + minor * 100 + stepping;
}

Result<std::string> prepare_device_libs(const StageContext& context) {
  const std::string& system_dir = context.toolchains.rocm_device_libs_dir;
  if (system_dir.empty()) return make_error("rocm-device-libs bitcode directory not found");
  std::string dir = resolved_cache_dir(context.options) + "/amdgcn-bitcode-" +
                    sha256_hex(system_dir + context.toolchains.tool("llvm_as").version_line).substr(0, 12);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return make_error("cannot create " + dir + ": " + error.message());
  for (const auto& entry : fs::directory_iterator(system_dir, error)) {
    fs::path link = fs::path(dir) / entry.path().filename();
    std::error_code ignored;
    if (!fs::exists(link, ignored)) fs::create_symlink(entry.path(), link, ignored);
  }
  for (const auto& target : context.options.amd_targets) {
    if (Status status = generate_isa_bitcode(context, dir, target); !status) return status.error();
  }
  return dir;
}

void run_amd_assemble_stage(StageContext& context, const std::string& asm_path, const std::string& target) {
  std::string object = context.scratch_dir + "/amd." + target + ".o";
  ToolStep step{"amd.assemble." + target, "llvm_mc",
                {"--triple=amdgcn-amd-amdhsa", "--mcpu=" + target, "-filetype=obj", asm_path, "-o", object},
                {asm_path}, {{"object", object, true}}, target, {}, ""};
  context.add(run_tool_stage(context, step));
}

void run_amd_assembly_stages(StageContext& context, const std::string& asm_path, const std::string& target) {
  run_amd_assemble_stage(context, asm_path, target);
  std::string object = context.scratch_dir + "/amd." + target + ".o";
  std::string code_object = context.scratch_dir + "/amd." + target + ".co";
  if (dependencies_ok(context, "amd.codeobject." + target, {"amd.assemble." + target})) {
    context.add(run_tool_stage(context, {"amd.codeobject." + target, "ld_lld",
                                         {"-shared", "--no-undefined", object, "-o", code_object},
                                         {object}, {{"code_object", code_object, true}}, target, {}, ""}));
  }
  std::string why = context.toolchains.has_gpu("amd") ? "" : "no AMD GPU (" + context.toolchains.amd_gpu_note + "); ";
  context.add(skipped_stage("amd.run", why + "a kernel's assembly alone has no host program to run it"));
}

void run_amd_stages(StageContext& context, const std::string& hip_path) {
  Result<std::string> device_libs = prepare_device_libs(context);
  std::string dir = context.scratch_dir;
  // C++17, the dialect nvcc compiles the CUDA side in: clang's HIP default is older, and real
  // programs use digit separators and std::bool_constant.
  std::vector<std::string> common = {"-x", "hip", "-std=c++17", "-O2", "--rocm-path=/usr"};
  if (fs::exists("/usr/hsa/include")) common.insert(common.end(), {"-isystem", "/usr/hsa/include"});
  // The program's directories, then tailforge's compatibility headers (the last entry), searched
  // after everything else so that a header of the program's own always wins.
  for (size_t i = 0; i < context.hip_include_dirs.size(); ++i) {
    bool compat = i + 1 == context.hip_include_dirs.size();
    common.insert(common.end(), {compat ? "-idirafter" : "-I", context.hip_include_dirs[i]});
  }
  // Each target's device compile, assemble and link, and the host compile, are independent.
  std::vector<Branch> compiles;
  for (const auto& target : context.options.amd_targets) {
    compiles.push_back([&, target](StageContext& branch) {
      std::string asm_stage = "amd.asm." + target;
      if (!device_libs) {
        branch.add(skipped_stage(asm_stage, device_libs.message()));
      } else {
        std::string device_asm = dir + "/amd." + target + ".s";
        std::vector<std::string> args = common;
        args.insert(args.end(), {"--cuda-device-only", "-S", "--offload-arch=" + target,
                                 "--hip-device-lib-path=" + device_libs.value(), hip_path, "-o", device_asm});
        branch.add(run_tool_stage(branch, {asm_stage, "hip_clang", args, {hip_path},
                                           {{"rdna3_asm", device_asm, false}}, target, {}, ""}));
      }
      if (dependencies_ok(branch, "amd.assemble." + target, {asm_stage})) {
        run_amd_assemble_stage(branch, dir + "/amd." + target + ".s", target);
      }
      std::string code_object = dir + "/amd." + target + ".co";
      if (dependencies_ok(branch, "amd.codeobject." + target, {"amd.assemble." + target})) {
        branch.add(run_tool_stage(branch, {"amd.codeobject." + target, "ld_lld",
                                           {"-shared", dir + "/amd." + target + ".o", "-o", code_object},
                                           {dir + "/amd." + target + ".o"}, {{"code_object", code_object, true}},
                                           target, {}, ""}));
      }
    });
  }
  compiles.push_back([&](StageContext& branch) {
    std::vector<std::string> host_args = common;
    host_args.insert(host_args.end(), {"--cuda-host-only", "-S", "--offload-arch=" + branch.options.amd_targets.front(),
                                       hip_path, "-o", dir + "/amd.host.s"});
    branch.add(run_tool_stage(branch, {"amd.host_asm", "hip_clang", host_args, {hip_path},
                                       {{"host_asm", dir + "/amd.host.s", false}}, "", {}, ""}));
  });
  run_branches(context, compiles);

  if (context.compile_only) return context.add(skipped_stage("amd.run", kCompileOnlyReason));
  if (!stage_enabled_here(context, "amd.run")) return;
  if (!context.toolchains.has_gpu("amd")) {
    return context.add(skipped_stage("amd.run", "no AMD GPU (" + context.toolchains.amd_gpu_note + ")"));
  }
  std::string exe = dir + "/amd.exe";
  std::vector<std::string> exe_args = {"-std=c++17", "--offload-arch=" + context.options.amd_targets.front()};
  for (const auto& flag : include_flags(context.hip_include_dirs)) exe_args.push_back(flag);
  exe_args.insert(exe_args.end(), {hip_path, "-o", exe});
  context.add(run_tool_stage(context, {"amd.exe", "hipcc", exe_args,
                                       {hip_path}, {{"executable", exe, true}}, "", {}, ""}));
  if (!dependencies_ok(context, "amd.run", {"amd.exe"})) return;
  context.add(run_program_stage(context, "amd.run", exe, true));
}

}  // namespace tailforge
