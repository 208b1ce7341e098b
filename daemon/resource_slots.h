// Counting limits on shared resources (compile slots, GPU slots, LLM request slots): a worker
// holds a slot while its child process runs. Thread-safe; a held slot is returned by RAII.
#pragma once

#include <array>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "verifier/stage.h"
#include "verifier/toolchains.h"

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

// The verifier's resource gate, backed by the daemon's counting slots.
class SlotGate : public ResourceGate {
 public:
  explicit SlotGate(ResourceSlots& slots) : slots_(slots) {}
  void acquire(ResourceKind kind) override { held_ok(kind, slots_.acquire(name(kind))); }
  void release(ResourceKind kind) override {
    if (take_held(kind)) slots_.release(name(kind));
  }

 private:
  static const char* name(ResourceKind kind) {
    return kind == ResourceKind::gpu ? "gpu" : kind == ResourceKind::llm ? "llm" : "cpu";
  }
  // acquire() fails at once for a resource with no capacity; release() must then do nothing.
  void held_ok(ResourceKind kind, bool held) {
    std::lock_guard lock(mutex_);
    if (held) ++held_[std::this_thread::get_id()][static_cast<size_t>(kind)];
  }
  bool take_held(ResourceKind kind) {
    std::lock_guard lock(mutex_);
    int& count = held_[std::this_thread::get_id()][static_cast<size_t>(kind)];
    if (count == 0) return false;
    --count;
    return true;
  }
  ResourceSlots& slots_;
  std::mutex mutex_;
  std::map<std::thread::id, std::array<int, 3>> held_;
};

// The compile slots daemon.compile_slots 0 means: the core count, less a core for every two GPU
// slots (at most a quarter of the cores). A GPU program keeps about half a core busy in the
// driver, so that many compilers beside the GPU slots wait for no core. On an H200 host with 16
// cores and 4 GPU slots: 16 compile slots gave 188 verified/min with the compilers getting 0.88
// CPU seconds per stage second, 14 gave 184/min with 0.96 and 10% fewer stage seconds a sample.
int default_compile_slots(int cores, int gpu_slots);

struct SlotSizes {
  int compile = 0;      // daemon.compile_slots, 0 there meaning default_compile_slots
  int gpu = 0;          // NVIDIA GPUs x daemon.gpu_slots_per_device
  int nvidia_gpus = 0;
};

// Sizes the cpu, gpu and llm slots from the configuration and this host's toolchains (the
// daemon's, or a worker's, which verifies under the same limits).
SlotSizes size_slots(const nlohmann::json& config, const Toolchains& toolchains, ResourceSlots& slots);

}  // namespace tailforge
