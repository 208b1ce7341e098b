// The verifier's settings: GPU targets, timeouts, tolerance, cache and scratch locations, sandbox.
// Read from the "verifier" and "sandbox" sections of the configuration; it runs nothing.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "verifier/sandbox.h"

namespace tailforge {

struct VerifierOptions {
  std::vector<std::string> sm_targets = {"sm_80", "sm_90"};
  std::vector<std::string> amd_targets = {"gfx1100"};
  double compile_timeout_seconds = 120;
  double compare_tolerance = 1e-3;
  // Words that make the number before them a measurement, not a result ("0.13 ms", "315 GB/s"):
  // when a CUDA program's and its translation's outputs differ, those numbers are left out.
  std::vector<std::string> measurement_units = {"ms", "us", "ns", "s", "sec", "seconds", "GB/s", "MB/s", "TB/s",
                                                "GFLOPS", "TFLOPS", "GFLOP/s", "TFLOP/s"};
  std::string cache_dir;     // generated device-library bitcode; "" = $XDG_CACHE_HOME|~/.cache/tailforge
  std::string scratch_root;  // where per-chain scratch directories go; "" = $TMPDIR or /tmp
  bool keep_scratch = false; // leave the scratch directory for inspection
  std::vector<std::string> stages;  // stage-name prefixes to run ("amd.asm", "translate"); empty = all
  std::string hip_on_cuda_include;  // "" = <source dir>/verifier/hip_on_cuda (holds hip/hip_runtime.h)
  // The PTX, the cubins and the executable of a CUDA program from one nvcc run (its kept
  // intermediate files), instead of one run each.
  bool nvcc_single_pass = true;
  // NVIDIA GPU programs (nvidia.run, hip_on_nvidia.run, the ptx2cuda replays) run first with
  // CUDA_DEVICE_MAX_CONNECTIONS=1: one hardware work queue, so the driver makes their context about
  // twice as fast. A program that does not pass that way runs again without it (run_cuda_program_stage).
  bool cuda_single_queue_first = true;
  SandboxOptions sandbox;
};

// Reads config["verifier"] and config["sandbox"] (both optional); the error names the bad key.
Result<VerifierOptions> verifier_options_from_json(const nlohmann::json& config);

// True when `stage` is to run: no stage filter, or the name starts with one of its prefixes.
bool stage_enabled(const VerifierOptions& options, const std::string& stage);

// Why a stage that verifier.stages leaves out is skipped.
inline constexpr const char* kDisabledByStages = "disabled by verifier.stages";

// The cache directory the options resolve to (created on demand by the AMD stage).
std::string resolved_cache_dir(const VerifierOptions& options);

}  // namespace tailforge
