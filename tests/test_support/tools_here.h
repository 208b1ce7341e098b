// Whether what a test needs is here, asked the way the product asks (verifier/toolchains.h finds
// tools on PATH, then /usr/local/cuda/bin): each helper answers true, or records the skip with
// its reason (test_support/skip.h) and answers false; the caller returns. A tool that is found
// but fails is never a skip: the test goes on and its checks fail.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdlib>
#include <initializer_list>
#include <string>

#include "test_support/skip.h"
#include "verifier/sandbox.h"
#include "verifier/toolchains.h"

namespace tailforge::testing {

// Roles (verifier/toolchains.cpp) the CUDA toolkit provides; every other role is installed by
// scripts/setup.sh or comes with Debian.
inline bool is_cuda_toolkit_role(const std::string& role) {
  return role == "nvcc" || role == "ptxas" || role == "cuobjdump" || role == "nvdisasm";
}

// " (for_what)", or "" when no purpose is given: what a skip reason ends with.
inline std::string purpose(const std::string& for_what) { return for_what.empty() ? "" : " (" + for_what + ")"; }

// True when every role in `roles` is found; otherwise skips, naming the first one missing.
inline bool tools_here(std::initializer_list<const char*> roles, const std::string& for_what = "") {
  for (const char* role : roles) {
    const Tool& tool = detected_toolchains().tool(role);
    if (tool.found()) continue;
    skip(is_cuda_toolkit_role(role) ? Missing::cuda_toolkit : Missing::setup_tool,
         std::string(role) + " not found" + purpose(for_what));
    return false;
  }
  return true;
}

// A program on PATH that is no toolchain role (git, openssl, chromium, perl, sinfo...); the skip
// names it, as missing `what`.
inline bool program_here(const std::string& name, const std::string& for_what = "",
                         Missing what = Missing::setup_tool) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  skip(what, name + " not found on PATH" + purpose(for_what));
  return false;
}

inline bool nvcc_here(const std::string& for_what = "") { return tools_here({"nvcc"}, for_what); }

// The machine's nvcc, as the product finds it ("" when there is none).
inline std::string nvcc_path() { return detected_toolchains().tool("nvcc").path; }

inline bool nvidia_gpu_here(const std::string& for_what = "") {
  const Toolchains& toolchains = detected_toolchains();
  if (toolchains.has_gpu("nvidia")) return true;
  skip(Missing::gpu, "no NVIDIA GPU" + purpose(for_what) + ": " + toolchains.nvidia_gpu_note);
  return false;
}

// bwrap missing is a skip (setup.sh installs it); bwrap found but its self-test failing is a
// failed requirement, never a skip.
inline bool sandbox_here(const SandboxOptions& options = SandboxOptions{}) {
  if (!tools_here({"bwrap"}, "the sandbox")) return false;
  Status usable = sandbox_self_test(options);
  REQUIRE_MESSAGE(usable.ok(), "bwrap is installed but the sandbox does not work: " << usable.message());
  return true;
}

// The AMD device path up to the code object (clang with the AMDGPU backend, rocm-device-libs,
// llvm-as/llvm-dis, llvm-mc, ld.lld), asked of the product's own stage_availability; all of it is
// installed by setup.sh.
inline bool amd_tools_here(const std::string& for_what = "") {
  for (const StageAvailability& stage : stage_availability(detected_toolchains())) {
    if (stage.can_run || (stage.stage != "amd.asm" && stage.stage != "amd.assemble" && stage.stage != "amd.codeobject"))
      continue;
    skip(Missing::setup_tool, stage.stage + ": " + stage.reason + purpose(for_what));
    return false;
  }
  return true;
}

}  // namespace tailforge::testing
