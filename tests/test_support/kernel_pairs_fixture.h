// The per-kernel pairs of tests/data/sass2rdna3/kernels.cu: its SASS as cuobjdump printed it on an
// H100 (kernels.cuobjdump.sass) and its gfx1100 assembly compiled here, from kernels.hip, by the
// real chain. A test skips where the AMD toolchain is missing; where it is here and the compile
// fails, the test fails (fixture_ready).
#pragma once

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "agents/sass2rdna3/kernel_pairs.h"
#include "test_support/tools_here.h"

namespace tailforge {

inline std::string read_test_data(const std::string& relative) {
  std::ifstream in(std::string(TAILFORGE_TEST_DATA) + "/" + relative, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct FixturePairs {
  KernelPairing pairing;
  bool tools_here = false;  // false: the AMD tools are missing, the skip is recorded
  std::string failure;      // the tools are here and the gfx1100 compile failed: why
};

inline ChainOptions fixture_chain_options() {
  ChainOptions options;
  options.verifier.sandbox.timeout_seconds = 5;
  return options;
}

inline FixturePairs fixture_kernel_pairs(const std::string& scratch_dir,
                                         const ChainOptions& options = fixture_chain_options()) {
  FixturePairs fixture;
  fixture.tools_here = testing::amd_tools_here("the gfx1100 side of the kernel pairs");
  if (!fixture.tools_here) return fixture;
  ChainResult program = verify_file(std::string(TAILFORGE_TEST_DATA) + "/sass2rdna3/kernels.hip", options);
  const StageResult* device_asm = program.stage("amd.asm.gfx1100");
  if (!device_asm || !device_asm->ok()) {
    fixture.failure = "the AMD tools are here, but amd.asm.gfx1100 of kernels.hip did not pass: " +
                      (device_asm ? device_asm->status + ": " + device_asm->reason + "\n" + device_asm->diagnostics
                                  : std::string("no such stage"));
    return fixture;
  }
  StageResult sass;
  sass.name = "nvidia.sass";
  sass.status = "ok";
  sass.artifacts.push_back({"sass", "sass", read_test_data("sass2rdna3/kernels.cuobjdump.sass"), "", "", false});
  program.stages.push_back(sass);
  fixture.pairing = pair_kernels(program, options, scratch_dir);
  return fixture;
}

// True when the pairs are made; false after a skip. A failed compile where the tools are here
// fails the test: it is never a skip.
inline bool fixture_ready(const FixturePairs& fixture) {
  if (!fixture.tools_here) return false;
  REQUIRE_MESSAGE(fixture.failure.empty(), fixture.failure);
  return true;
}

}  // namespace tailforge
