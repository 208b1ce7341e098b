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

TEST_CASE("without an NVIDIA GPU the run stages say why") {
  Toolchains toolchains = detect_toolchains();
  if (toolchains.has_gpu("nvidia")) {
    MESSAGE("skipped: this machine has an NVIDIA GPU");
    return;
  }
  for (const auto& stage : stage_availability(toolchains)) {
    if (stage.stage == "nvidia.run") {
      CHECK_FALSE(stage.can_run);
      CHECK(stage.reason.find("no NVIDIA GPU") != std::string::npos);
    }
  }
}
