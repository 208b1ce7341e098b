// The per-kernel pairs of tests/data/sass2rdna3/kernels.cu: its SASS as cuobjdump printed it on an
// H100 (kernels.cuobjdump.sass) and its gfx1100 assembly compiled here, from kernels.hip, by the
// real chain. Empty with a reason where the AMD toolchain is missing.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "verifier/sass2rdna3/kernel_pairs.h"

namespace tailforge {

inline std::string read_test_data(const std::string& relative) {
  std::ifstream in(std::string(TAILFORGE_TEST_DATA) + "/" + relative, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct FixturePairs {
  KernelPairing pairing;
  std::string skipped;  // why there are none
};

inline FixturePairs fixture_kernel_pairs(const std::string& scratch_dir) {
  FixturePairs fixture;
  ChainOptions options;
  options.verifier.sandbox.timeout_seconds = 5;
  ChainResult program = verify_file(std::string(TAILFORGE_TEST_DATA) + "/sass2rdna3/kernels.hip", options);
  const StageResult* device_asm = program.stage("amd.asm.gfx1100");
  if (!device_asm || !device_asm->ok()) {
    fixture.skipped = "no gfx1100 assembly here: " + (device_asm ? device_asm->reason + device_asm->diagnostics : "no stage");
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

}  // namespace tailforge
