// How the daemon sizes its compile and GPU slots (daemon.compile_slots, daemon.gpu_slots_per_device).
#include <doctest/doctest.h>

#include <thread>

#include "daemon/resource_slots.h"

namespace tailforge {
namespace {

nlohmann::json slot_config(int compile_slots) {
  return {{"daemon", {{"compile_slots", compile_slots}, {"gpu_slots_per_device", 4}, {"llm_slots", 2}}}};
}

Toolchains with_nvidia_gpus(int count) {
  Toolchains toolchains;
  for (int i = 0; i < count; ++i) toolchains.gpus.push_back({"nvidia", "GPU " + std::to_string(i) + ": pretended", "sm_90"});
  toolchains.gpus.push_back({"amd", "GPU: pretended, not counted", "gfx1100"});
  return toolchains;
}

TEST_CASE("slots: the default compile slots leave a core for every two GPU slots, at most a quarter of the cores") {
  CHECK(default_compile_slots(16, 4) == 14);
  CHECK(default_compile_slots(16, 0) == 16);
  CHECK(default_compile_slots(128, 32) == 112);
  CHECK(default_compile_slots(8, 4) == 6);
  CHECK(default_compile_slots(4, 4) == 3);
  CHECK(default_compile_slots(2, 4) == 2);
  CHECK(default_compile_slots(1, 8) == 1);
}

TEST_CASE("slots: compile_slots 0 sizes by this host's cores and NVIDIA GPUs; a number is taken as it is") {
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ResourceSlots slots;
  SlotSizes sizes = size_slots(slot_config(0), with_nvidia_gpus(2), slots);
  CHECK(sizes.nvidia_gpus == 2);
  CHECK(sizes.gpu == 8);
  CHECK(sizes.compile == default_compile_slots(cores, 8));
  CHECK(slots.capacity("cpu") == sizes.compile);
  CHECK(slots.capacity("gpu") == 8);
  CHECK(slots.capacity("llm") == 2);

  sizes = size_slots(slot_config(0), with_nvidia_gpus(0), slots);
  CHECK(sizes.compile == cores);
  CHECK(slots.capacity("gpu") == 0);

  sizes = size_slots(slot_config(5), with_nvidia_gpus(1), slots);
  CHECK(sizes.compile == 5);
  CHECK(sizes.gpu == 4);
}

}  // namespace
}  // namespace tailforge
