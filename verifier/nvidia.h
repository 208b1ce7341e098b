// NVIDIA stages: CUDA -> PTX, cubins per SM target, executable, host assembly, SASS, and a run on
// an NVIDIA GPU when one exists. Also splits PTX and SASS per kernel. It does not compare outputs.
#pragma once

#include <string>
#include <vector>

#include "verifier/nvcc_flags.h"
#include "verifier/stage_runner.h"

namespace tailforge {

struct KernelText {
  std::string name;
  std::string text;
};

// Why a stage family ("nvidia.run", "nvidia.sass") cannot run here; empty when it can.
std::string availability_reason(const StageContext& context, const std::string& family);

// Adds nvidia.ptx, nvidia.cubin.<sm>, nvidia.exe, nvidia.host_asm, nvidia.sass, nvidia.run.
void run_nvidia_stages(StageContext& context, const std::string& cuda_path);

// Adds hip_on_nvidia.exe and hip_on_nvidia.run: a .hip file compiled by nvcc through the
// project's HIP-on-CUDA header. Never an AMD run.
void run_hip_on_nvidia_stages(StageContext& context, const std::string& hip_path);

// One entry per `.entry` function of a PTX module (its text from `.entry` to its closing brace).
std::vector<KernelText> split_ptx_kernels(const std::string& ptx);
// One entry per function of cuobjdump/nvdisasm SASS output, every sm target in turn
// (verifier/sass2rdna3/kernel_split.h keeps the target).
std::vector<KernelText> split_sass_functions(const std::string& sass);

}  // namespace tailforge
