#include "daemon/resource_slots.h"

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

}  // namespace tailforge
