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
  std::string arch;    // NVIDIA: "sm_90" from its compute capability; AMD: "gfx1100"; empty when unknown
};

struct Toolchains {
  std::map<std::string, Tool> tools;
  std::string rocm_device_libs_dir;  // the amdgcn/bitcode directory, empty when absent
  std::vector<GpuInfo> gpus;
  std::string nvidia_gpu_note;       // how NVIDIA GPUs were looked for and what was found
  std::string amd_gpu_note;
  std::vector<std::string> nvcc_gpu_codes;  // `nvcc --list-gpu-code`: "sm_75", "sm_80", ...; empty when unknown

  // The tool for a role; a not-found Tool when unknown.
  const Tool& tool(const std::string& role) const;
  bool has_gpu(const std::string& vendor) const;
};

struct StageAvailability {
  std::string stage;   // a stage family: "nvidia.ptx", "amd.asm", ...
  bool can_run = false;
  std::string reason;  // why not (empty when it can)
};

// The architectures of `nvidia-smi --query-gpu=compute_cap --format=csv,noheader`, one per line
// ("9.0" -> "sm_90", "12.0" -> "sm_120"); "" for a line that is not a compute capability.
std::vector<std::string> parse_compute_capabilities(const std::string& text);
// The sm_NN codes of `nvcc --list-gpu-code`, in its order.
std::vector<std::string> parse_gpu_codes(const std::string& text);
// The NN of "sm_NN" or "compute_NN" (a suffix such as the "a" of sm_90a ignored); -1 otherwise.
int sm_number(const std::string& target);
// Why programs built here cannot run on this NVIDIA GPU: its architecture is older than every one
// nvcc builds (so neither a cubin nor PTX fits it); "" when they can or when it is not known.
std::string unbuildable_gpu_reason(const GpuInfo& gpu, const Toolchains& toolchains);
// Whether nvcc here builds a cubin for the GPU's architecture (known, and in `nvcc --list-gpu-code`).
bool nvcc_builds_cubin_for(const GpuInfo& gpu, const Toolchains& toolchains);

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
