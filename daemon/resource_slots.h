// Counting limits on shared resources (compile slots, GPU slots, LLM request slots): a worker
// holds a slot while its child process runs. Thread-safe; a held slot is returned by RAII.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>
#include <string>

namespace tailforge {

class ResourceSlots {
 public:
  // Sets the capacity of a resource; 0 means the resource does not exist here.
  void set_capacity(const std::string& resource, int capacity);
  // Blocks until a slot is free. Returns false at once for a resource without capacity.
  bool acquire(const std::string& resource);
  void release(const std::string& resource);

  int capacity(const std::string& resource) const;
  int in_use(const std::string& resource) const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::map<std::string, int> capacity_;
  std::map<std::string, int> in_use_;
};

class SlotHold {
 public:
  SlotHold(ResourceSlots& slots, std::string resource) : slots_(slots), resource_(std::move(resource)) {
    held_ = slots_.acquire(resource_);
  }
  ~SlotHold() {
    if (held_) slots_.release(resource_);
  }
  SlotHold(const SlotHold&) = delete;
  SlotHold& operator=(const SlotHold&) = delete;
  bool held() const { return held_; }

 private:
  ResourceSlots& slots_;
  std::string resource_;
  bool held_ = false;
};

}  // namespace tailforge
