// This host's toolchains with an NVIDIA GPU (sm_90) added, for tests of what the chain does where
// a GPU runs its programs: on a host without one, the programs they run launch no kernel.
#pragma once

#include "verifier/toolchains.h"

namespace tailforge {

inline const Toolchains& toolchains_with_pretended_nvidia_gpu() {
  static const Toolchains with_gpu = [] {
    Toolchains toolchains = detected_toolchains();
    toolchains.gpus.push_back({"nvidia", "GPU 0: pretended by the test", "sm_90"});
    return toolchains;
  }();
  return with_gpu;
}

}  // namespace tailforge
