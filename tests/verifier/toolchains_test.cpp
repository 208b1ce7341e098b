#include "verifier/toolchains.h"

#include <doctest/doctest.h>

using namespace tailforge;

TEST_CASE("toolchain detection finds gcc with a version and says which stages can run") {
  Toolchains toolchains = detect_toolchains();
  CHECK(toolchains.tool("gcc").found());
  CHECK_FALSE(toolchains.tool("gcc").version.empty());
  CHECK_FALSE(toolchains.tool("no_such_role").found());
  auto json = toolchains_to_json(toolchains);
  CHECK(json["tools"]["gcc"]["found"] == true);
  bool listed = false;
  for (const auto& stage : json["stages"]) {
    if (stage["stage"] == "x86.asm") listed = stage["can_run"] == true;
    if (stage["can_run"] == false) CHECK_FALSE(stage["reason"].get<std::string>().empty());
  }
  CHECK(listed);
  std::string table = format_toolchains_table(toolchains);
  CHECK(table.find("nvidia.ptx") != std::string::npos);
  CHECK(table.find("gcc") != std::string::npos);
}

TEST_CASE("without an NVIDIA GPU the run stages say why: the GPU where nvcc is found, nvcc where it is not") {
  // This machine's tools, with its GPUs (if any) taken away.
  Toolchains toolchains = detect_toolchains();
  toolchains.gpus.clear();
  toolchains.nvidia_gpu_note = "nvidia-smi lists no GPU";
  std::string expected = toolchains.tool("nvcc").found() ? "no NVIDIA GPU (nvidia-smi lists no GPU)" : "nvcc not found";
  int run_stages = 0;
  for (const auto& stage : stage_availability(toolchains)) {
    if (stage.stage != "nvidia.run" && stage.stage != "hip_on_nvidia.run") continue;
    CAPTURE(stage.stage);
    ++run_stages;
    CHECK_FALSE(stage.can_run);
    CHECK(stage.reason == expected);
  }
  CHECK(run_stages == 2);
  // And with no nvcc either, nvcc is named first: it is what the user installs first.
  toolchains.tools.erase("nvcc");
  for (const auto& stage : stage_availability(toolchains)) {
    if (stage.stage == "nvidia.run") CHECK(stage.reason == "nvcc not found");
  }
}
