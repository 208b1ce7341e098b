#include "daemon/resource_slots.h"

#include <algorithm>

namespace tailforge {

void ResourceSlots::set_capacity(const std::string& resource, int capacity) {
  std::lock_guard lock(mutex_);
  capacity_[resource] = capacity;
  freed_.notify_all();
}

bool ResourceSlots::acquire(const std::string& resource) {
  std::unique_lock lock(mutex_);
  if (capacity_[resource] <= 0) return false;
  freed_.wait(lock, [&] { return in_use_[resource] < capacity_[resource]; });
  ++in_use_[resource];
  return true;
}

void ResourceSlots::release(const std::string& resource) {
  std::lock_guard lock(mutex_);
  --in_use_[resource];
  freed_.notify_all();
}

int ResourceSlots::capacity(const std::string& resource) const {
  std::lock_guard lock(mutex_);
  auto it = capacity_.find(resource);
  return it == capacity_.end() ? 0 : it->second;
}

int ResourceSlots::in_use(const std::string& resource) const {
  std::lock_guard lock(mutex_);
  auto it = in_use_.find(resource);
  return it == in_use_.end() ? 0 : it->second;
}

int default_compile_slots(int cores, int gpu_slots) {
  int reserved = std::min(std::max(gpu_slots, 0) / 2, cores / 4);
  return std::max(1, cores - reserved);
}

SlotSizes size_slots(const nlohmann::json& config, const Toolchains& toolchains, ResourceSlots& slots) {
  SlotSizes sizes;
  sizes.nvidia_gpus = static_cast<int>(std::count_if(toolchains.gpus.begin(), toolchains.gpus.end(),
                                                     [](const GpuInfo& gpu) { return gpu.vendor == "nvidia"; }));
  sizes.gpu = sizes.nvidia_gpus * config["daemon"]["gpu_slots_per_device"].get<int>();
  sizes.compile = config["daemon"]["compile_slots"].get<int>();
  if (sizes.compile <= 0) {
    sizes.compile = default_compile_slots(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())), sizes.gpu);
  }
  slots.set_capacity("cpu", sizes.compile);
  slots.set_capacity("gpu", sizes.gpu);
  slots.set_capacity("llm", config["daemon"]["llm_slots"].get<int>());
  return sizes;
}

}  // namespace tailforge
