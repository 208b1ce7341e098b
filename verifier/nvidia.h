// NVIDIA stages: CUDA -> PTX, cubins per SM target, executable, host assembly, SASS, and a run on
// an NVIDIA GPU when one exists. Also splits PTX and SASS per kernel. It does not compare outputs.
#pragma once

#include <string>
#include <vector>

#include "verifier/stage_runner.h"

namespace tailforge {

struct KernelText {
  std::string name;
  std::string text;
};

// "-gencode arch=compute_NN,code=sm_NN" for each target.
std::vector<std::string> gencode_flags(const std::vector<std::string>& sm_targets);
// The targets a program that runs here is built for: the configured ones, then the architecture
// of each NVIDIA GPU found here that nvcc builds and the list lacks.
std::vector<std::string> executable_sm_targets(const std::vector<std::string>& configured, const Toolchains& toolchains);
// The -gencode flags of a program that runs: a cubin per executable target, and the PTX of the
// lowest one, which the driver compiles for a GPU no cubin fits (a newer one, or an unlisted one).
std::vector<std::string> executable_gencode_flags(const std::vector<std::string>& configured,
                                                  const Toolchains& toolchains);
// The -gencode flags of HIP-on-NVIDIA's executable, which only its run reads: a cubin for each
// NVIDIA GPU found here when nvcc builds for all of them; with no GPU, the first configured
// target's alone (the compile is then the whole check); else those of a program that runs.
std::vector<std::string> hip_on_nvidia_gencode_flags(const std::vector<std::string>& configured,
                                                     const Toolchains& toolchains);
// The nvcc link flags of an executable that loads the CUDA runtime as a shared library, found at
// run time through its rpath (a sandboxed program sees no LD_LIBRARY_PATH): a preloaded library,
// such as the ptx2cuda capture's, then sees its launches.
std::vector<std::string> shared_cuda_runtime_flags(const Toolchains& toolchains);
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
