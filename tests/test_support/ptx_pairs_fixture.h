// The ptx2cuda pairs of one CUDA program, made as the daemon makes them: the program verified for
// sm_90 (NVIDIA stages), then pair_ptx_kernels, in a folder the sandbox user can reach.
#pragma once

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "agents/ptx2cuda/ptx_pairs.h"
#include "test_support/temp_dir.h"

namespace tailforge {

// Writes `source` to `dir` and verifies it for sm_90 with the NVIDIA and ptx2cuda stages, as
// `options` sets the rest (its targets, stages and cache folder are set here).
inline ChainResult verify_test_program(const TempDir& dir, const std::string& source, ChainOptions& options) {
  chmod(dir.path().c_str(), 0755);  // the sandbox user reaches the capture's and replay's folders
  std::string program = dir.file("program.cu");
  std::ofstream(program) << source;
  options.verifier.sm_targets = {"sm_90"};
  options.verifier.stages = {"nvidia", "ptx2cuda"};
  options.verifier.cache_dir = dir.file("cache");
  return verify_file(program, options);
}

inline PtxPairing pair_test_program(const TempDir& dir, const std::string& source) {
  ChainOptions options;
  ChainResult chain = verify_test_program(dir, source, options);
  REQUIRE_MESSAGE(chain.stage("nvidia.ptx")->ok(), chain.stage("nvidia.ptx")->diagnostics);
  return pair_ptx_kernels(source, chain, options, dir.file("pairs"));
}

}  // namespace tailforge
