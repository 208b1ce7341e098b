// Skipping a test case: a case that needs something this machine may lack says what, says why and
// stops. Every skip is counted: the test main prints the skipped cases when it ends and writes
// them to $TAILFORGE_SKIP_LOG, and the `skips` ctest entry (tests/skip_report.cpp) sums them up,
// so a green run says what did not run. Where CI=true, a skip for a tool scripts/setup.sh
// installs fails the case instead: CI proves the sandbox, AMD, Slurm, Chromium and git paths ran.
//
//   if (!std::filesystem::exists(cuda_include)) { skip(Missing::cuda_toolkit, "no CUDA headers"); return; }
// (test_support/tools_here.h asks for tools and GPUs this way: `if (!nvcc_here()) return;`.)
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace tailforge::testing {

// What a skipped case lacks. All but setup_tool may be absent on a CI machine.
enum class Missing {
  gpu,             // a GPU (and its driver) to run a program on
  cuda_toolkit,    // nvcc and its tools: the machine's CUDA toolkit, which setup.sh does not install
  pytorch,         // PyTorch for the kernelopt PyTorch-reference path (GPU hosts have it; setup.sh does not install it)
  host_feature,    // what the host's configuration may withhold: root, memory cgroups
  shared_checkout, // ../shared beside the repository (the corpus, hipify-perl): absent from a bare clone
  setup_tool,      // a tool scripts/setup.sh installs (gcc, bwrap, clang/hipcc, llvm-mc, Chromium, Slurm, git...)
};

// Records the skip of the running case, with its reason, and logs it. On CI a setup_tool skip is
// a failed check. The caller returns right after.
void skip(Missing what, const std::string& reason);

// True where the environment says this is a CI run (CI=true, as CI services and .ci/run set it).
// Also read by tests/skip_report.cpp.
inline bool on_ci() {
  const char* ci = std::getenv("CI");
  if (ci == nullptr) return false;
  std::string value = ci;
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::tolower(c); });
  return value == "true" || value == "1" || value == "yes";
}

}  // namespace tailforge::testing
