// Which architectures the programs that run are built for: the configured targets, the GPU found
// here, and the embedded PTX that lets a GPU outside both lists run them.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/process.h"
#include "test_support/tools_here.h"
#include "verifier/chain.h"
#include "verifier/nvidia.h"
#include "verifier/toolchains.h"

using namespace tailforge;

namespace {

Toolchains with_gpu(const std::string& arch, std::vector<std::string> codes) {
  Toolchains toolchains;
  toolchains.tools["nvcc"] = Tool{"nvcc", "/usr/local/cuda/bin/nvcc", "13.0", ""};
  toolchains.gpus.push_back({"nvidia", "GPU 0: Test GPU", arch});
  toolchains.nvcc_gpu_codes = std::move(codes);
  return toolchains;
}

const std::vector<std::string> kCuda13Codes = {"sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90",
                                               "sm_100", "sm_110", "sm_103", "sm_120", "sm_121"};

std::string stage_status(const ChainResult& result, const std::string& name) {
  const StageResult* stage = result.stage(name);
  return stage ? stage->status : "<missing>";
}

}  // namespace

TEST_CASE("compute capabilities and nvcc's code list are read line by line, garbage as unknown") {
  CHECK(parse_compute_capabilities("9.0\n8.6\r\n 12.0 \n") == std::vector<std::string>{"sm_90", "sm_86", "sm_120"});
  CHECK(parse_compute_capabilities("[N/A]\n7.5\n9.\n.0\n1234.5\n8.10\n") ==
        std::vector<std::string>{"", "sm_75", "", "", "", ""});
  CHECK(parse_compute_capabilities("").empty());
  CHECK(parse_compute_capabilities(std::string(1 << 20, '9')) == std::vector<std::string>{""});
  CHECK(parse_gpu_codes("sm_75\nsm_80\nsm_90a\ncompute_90\nsm_\nsm_x\n\nsm_120\n") ==
        std::vector<std::string>{"sm_75", "sm_80", "sm_90a", "sm_120"});
  CHECK(sm_number("sm_90") == 90);
  CHECK(sm_number("sm_120") == 120);
  CHECK(sm_number("sm_90a") == 90);
  CHECK(sm_number("compute_80") == 80);
  CHECK(sm_number("gfx1100") == -1);
  CHECK(sm_number("sm_9x0") == -1);
}

TEST_CASE("a program that runs is built for the configured targets, this machine's GPU, and the lowest target's PTX") {
  const std::vector<std::string> configured = {"sm_80", "sm_90"};
  // An Ada GPU (sm_89), not configured: its cubin is added.
  Toolchains ada = with_gpu("sm_89", kCuda13Codes);
  CHECK(executable_sm_targets(configured, ada) == std::vector<std::string>{"sm_80", "sm_90", "sm_89"});
  CHECK(executable_gencode_flags(configured, ada) ==
        std::vector<std::string>{"-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
                                 "-gencode", "arch=compute_89,code=sm_89", "-gencode",
                                 "arch=compute_80,code=compute_80"});
  // A configured GPU adds nothing; neither does one nvcc cannot build for (its PTX covers it).
  CHECK(executable_sm_targets(configured, with_gpu("sm_90", kCuda13Codes)) == configured);
  CHECK(executable_sm_targets(configured, with_gpu("sm_130", kCuda13Codes)) == configured);
  CHECK(executable_sm_targets(configured, with_gpu("", kCuda13Codes)) == configured);
  // A Turing GPU (sm_75) below the configured targets lowers the embedded PTX with it.
  std::vector<std::string> turing = executable_gencode_flags(configured, with_gpu("sm_75", kCuda13Codes));
  CHECK(turing.back() == "arch=compute_75,code=compute_75");
  // PTX of an arch-specific target runs on that GPU alone: the plain target's is embedded.
  CHECK(executable_gencode_flags({"sm_90a", "sm_100"}, Toolchains{}).back() == "arch=compute_100,code=compute_100");
}

TEST_CASE("HIP-on-NVIDIA's executable, read only by its run, is built for the GPUs here, or one target without a GPU") {
  const std::vector<std::string> configured = {"sm_80", "sm_90"};
  CHECK(hip_on_nvidia_gencode_flags(configured, Toolchains{}) ==
        std::vector<std::string>{"-gencode", "arch=compute_80,code=sm_80"});
  CHECK(hip_on_nvidia_gencode_flags(configured, with_gpu("sm_90", kCuda13Codes)) ==
        std::vector<std::string>{"-gencode", "arch=compute_90,code=sm_90"});
  Toolchains two = with_gpu("sm_89", kCuda13Codes);
  two.gpus.push_back({"nvidia", "GPU 1: Test GPU", "sm_89"});
  two.gpus.push_back({"nvidia", "GPU 2: Test GPU", "sm_120"});
  CHECK(hip_on_nvidia_gencode_flags(configured, two) ==
        std::vector<std::string>{"-gencode", "arch=compute_89,code=sm_89", "-gencode", "arch=compute_120,code=sm_120"});
  // A GPU nvcc cannot build a cubin for (newer than its list, or unknown) runs the embedded PTX.
  CHECK(hip_on_nvidia_gencode_flags(configured, with_gpu("sm_130", kCuda13Codes)) ==
        executable_gencode_flags(configured, with_gpu("sm_130", kCuda13Codes)));
  CHECK(hip_on_nvidia_gencode_flags(configured, with_gpu("", kCuda13Codes)).back() == "arch=compute_80,code=compute_80");
}

TEST_CASE("a GPU older than anything nvcc builds has its runs skipped with the reason, not failed") {
  Toolchains volta = with_gpu("sm_70", kCuda13Codes);
  volta.tools["bwrap"] = Tool{"bwrap", "/usr/bin/bwrap", "0.8", ""};
  std::string why = unbuildable_gpu_reason(volta.gpus.front(), volta);
  CHECK(why.find("sm_70") != std::string::npos);
  CHECK(why.find("sm_75 and newer") != std::string::npos);
  for (const StageAvailability& stage : stage_availability(volta)) {
    if (stage.stage == "nvidia.run" || stage.stage == "hip_on_nvidia.run") {
      CHECK_FALSE(stage.can_run);
      CHECK(stage.reason == why);
    }
  }
  // A newer GPU than nvcc knows, an unknown architecture, or an unknown code list: runs go ahead.
  CHECK(unbuildable_gpu_reason(with_gpu("sm_130", kCuda13Codes).gpus.front(), with_gpu("sm_130", kCuda13Codes)).empty());
  CHECK(unbuildable_gpu_reason(with_gpu("", kCuda13Codes).gpus.front(), with_gpu("", kCuda13Codes)).empty());
  CHECK(unbuildable_gpu_reason(with_gpu("sm_70", {}).gpus.front(), with_gpu("sm_70", {})).empty());
  // One runnable GPU beside the old one keeps the runs.
  Toolchains mixed = volta;
  mixed.gpus.push_back({"nvidia", "GPU 1: Test GPU", "sm_90"});
  for (const StageAvailability& stage : stage_availability(mixed)) {
    if (stage.stage == "nvidia.run") CHECK(stage.can_run);
  }
}

TEST_CASE("an executable built for a target the GPU lacks carries PTX, and runs on that GPU through it") {
  const Toolchains& detected = detected_toolchains();
  if (!testing::nvcc_here()) return;
  // sm_80 only and no GPU architecture known: on an H100 or H200 (sm_90) no cubin fits, so the
  // run can only pass through the embedded compute_80 PTX.
  Toolchains ptx_only = detected;
  for (GpuInfo& gpu : ptx_only.gpus) gpu.arch.clear();
  ChainOptions options;
  options.toolchains = &ptx_only;
  options.verifier.sm_targets = {"sm_80"};
  options.verifier.stages = {"nvidia."};
  options.verifier.sandbox.timeout_seconds = 30;
  ChainResult result = verify_file(std::string(TAILFORGE_TEST_DATA) + "/verifier/saxpy.cu", options);
  const StageResult* exe = result.stage("nvidia.exe");
  REQUIRE(exe != nullptr);
  REQUIRE_MESSAGE(exe->status == "ok", exe->diagnostics);
  CHECK(exe->command.find("arch=compute_80,code=compute_80") != std::string::npos);
  CHECK(exe->command.find("code=sm_90") == std::string::npos);
  const Artifact* binary = exe->artifact("executable");
  REQUIRE(binary != nullptr);
  if (detected.tool("cuobjdump").found()) {
    std::string path = std::filesystem::temp_directory_path() / ("tf-ptx-exe-" + std::to_string(getpid()));
    std::ofstream(path, std::ios::binary) << binary->content;
    ProcessSpec list;
    list.argv = {detected.tool("cuobjdump").path, "--list-ptx", "--list-elf", path};
    list.timeout_seconds = 60;
    ProcessResult listed = run_process(list);
    std::filesystem::remove(path);
    CHECK_MESSAGE(listed.stdout_text.find("sm_80") != std::string::npos, listed.stdout_text);
    CHECK_MESSAGE(listed.stdout_text.find(".ptx") != std::string::npos, listed.stdout_text);
  } else {
    testing::skip(testing::Missing::cuda_toolkit, "no cuobjdump to list the executable's PTX; its build command was checked");
  }
  if (!testing::nvidia_gpu_here("to run the PTX-only executable on")) return;
  std::string arch;
  for (const GpuInfo& gpu : detected.gpus) {
    if (gpu.vendor == "nvidia" && arch.empty()) arch = gpu.arch;
  }
  const StageResult* ran = result.stage("nvidia.run");
  REQUIRE(ran != nullptr);
  std::string why = arch + ": " + ran->reason + "\n" + ran->diagnostics;
  CHECK_MESSAGE(ran->status == "ok", why);
  std::string ran_on = "the sm_80 + compute_80 executable ran on a " + (arch.empty() ? std::string("GPU") : arch) +
                       " through its PTX: nvidia.run " + stage_status(result, "nvidia.run");
  MESSAGE(ran_on);
}
