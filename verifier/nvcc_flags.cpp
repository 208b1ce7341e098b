#include "verifier/nvcc_flags.h"

#include <algorithm>
#include <filesystem>

namespace tailforge {

std::vector<std::string> gencode_flags(const std::vector<std::string>& sm_targets) {
  std::vector<std::string> flags;
  for (const auto& sm : sm_targets) {
    std::string number = sm.substr(3);
    flags.push_back("-gencode");
    flags.push_back("arch=compute_" + number + ",code=" + sm);
  }
  return flags;
}

std::vector<std::string> executable_sm_targets(const std::vector<std::string>& configured,
                                               const Toolchains& toolchains) {
  std::vector<std::string> targets = configured;
  for (const GpuInfo& gpu : toolchains.gpus) {
    if (gpu.vendor != "nvidia" || !nvcc_builds_cubin_for(gpu, toolchains)) continue;
    if (std::find(targets.begin(), targets.end(), gpu.arch) == targets.end()) targets.push_back(gpu.arch);
  }
  return targets;
}

std::vector<std::string> executable_gencode_flags(const std::vector<std::string>& configured,
                                                  const Toolchains& toolchains) {
  std::vector<std::string> targets = executable_sm_targets(configured, toolchains);
  std::vector<std::string> flags = gencode_flags(targets);
  // PTX of an arch-specific target (sm_90a) runs on that GPU only: the lowest plain one is embedded.
  std::string lowest;
  for (const std::string& target : targets) {
    if (std::isalpha(static_cast<unsigned char>(target.back()))) continue;
    if (lowest.empty() || sm_number(target) < sm_number(lowest)) lowest = target;
  }
  if (!lowest.empty()) {
    std::string virtual_arch = "compute_" + lowest.substr(3);
    flags.push_back("-gencode");
    flags.push_back("arch=" + virtual_arch + ",code=" + virtual_arch);
  }
  return flags;
}

std::vector<std::string> hip_on_nvidia_gencode_flags(const std::vector<std::string>& configured,
                                                     const Toolchains& toolchains) {
  std::vector<std::string> gpu_targets;
  for (const GpuInfo& gpu : toolchains.gpus) {
    if (gpu.vendor != "nvidia") continue;
    if (!nvcc_builds_cubin_for(gpu, toolchains)) {
      return executable_gencode_flags(configured, toolchains);  // the embedded PTX may be what runs
    }
    if (std::find(gpu_targets.begin(), gpu_targets.end(), gpu.arch) == gpu_targets.end()) gpu_targets.push_back(gpu.arch);
  }
  if (gpu_targets.empty() && !configured.empty()) gpu_targets.push_back(configured.front());
  return gencode_flags(gpu_targets);
}

std::vector<std::string> shared_cuda_runtime_flags(const Toolchains& toolchains) {
  std::filesystem::path nvcc = std::filesystem::weakly_canonical(toolchains.tool("nvcc").path);
  std::string runtime_dir = (nvcc.parent_path().parent_path() / "lib64").string();
  return {"-cudart", "shared", "-Xlinker", "-rpath=" + runtime_dir};
}

}  // namespace tailforge
