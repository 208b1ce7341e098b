// Finds the compilers, assemblers and GPUs this machine has, with their versions, and says
// which verifier stage can run here and why not. It runs nothing but `--version`-style probes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tailforge {

struct Tool {
  std::string name;      // role: "nvcc", "hip_clang", "llvm_mc", ...
  std::string path;      // empty when not found
  std::string version;   // parsed from --version, e.g. "13.0"
  std::string version_line;
  bool found() const { return !path.empty(); }
};

struct GpuInfo {
  std::string vendor;  // "nvidia" or "amd"
  std::string name;
};

struct Toolchains {
  std::map<std::string, Tool> tools;
  std::string rocm_device_libs_dir;  // the amdgcn/bitcode directory, empty when absent
  std::vector<GpuInfo> gpus;
  std::string nvidia_gpu_note;       // how NVIDIA GPUs were looked for and what was found
  std::string amd_gpu_note;

  // The tool for a role; a not-found Tool when unknown.
  const Tool& tool(const std::string& role) const;
  bool has_gpu(const std::string& vendor) const;
};

struct StageAvailability {
  std::string stage;   // a stage family: "nvidia.ptx", "amd.asm", ...
  bool can_run = false;
  std::string reason;  // why not (empty when it can)
};

// Probes the machine (every probe with a timeout). Takes a fraction of a second.
Toolchains detect_toolchains();
// The first detection of this process, shared by all threads.
const Toolchains& detected_toolchains();

// Run stages need bwrap unless the sandbox mode is "rlimits-only".
std::vector<StageAvailability> stage_availability(const Toolchains& toolchains,
                                                  const std::string& sandbox_mode = "bwrap");

// {"tools": {role: {"path","version","found"}}, "rocm_device_libs", "gpus": [...], "stages": [...]}
nlohmann::json toolchains_to_json(const Toolchains& toolchains);
// A human table: one line per tool, then per GPU, then per stage family.
std::string format_toolchains_table(const Toolchains& toolchains);

}  // namespace tailforge
