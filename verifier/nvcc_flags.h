// The nvcc flags of a build for NVIDIA GPUs: which SM targets a program is built for, the
// -gencode flags of a program that runs here and of HIP-on-NVIDIA's executable, and the link
// flags of a program that loads the CUDA runtime as a shared library. Flags only; it runs nothing.
#pragma once

#include <string>
#include <vector>

#include "verifier/toolchains.h"

namespace tailforge {

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

}  // namespace tailforge
