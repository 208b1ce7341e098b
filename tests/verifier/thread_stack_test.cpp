// release_unused_stack: the pages a thread's stack reached are resident until it is called, and
// not after; the frames above the caller keep working.
#include <doctest/doctest.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "verifier/thread_stack.h"

using namespace tailforge;

namespace {

// Resident pages of the calling thread's stack, counted with mincore().
size_t resident_stack_pages() {
  pthread_attr_t attributes;
  pthread_getattr_np(pthread_self(), &attributes);
  void* lowest = nullptr;
  size_t size = 0;
  pthread_attr_getstack(&attributes, &lowest, &size);
  pthread_attr_destroy(&attributes);
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> flags(size / page);
  if (mincore(lowest, size, flags.data()) != 0) return 0;
  size_t resident = 0;
  for (unsigned char flag : flags) resident += flag & 1;
  return resident;
}

// The resident KiB of the main thread's stack mapping ("[stack]" in /proc/self/smaps), whose
// extent pthread_getattr_np only estimates.
int64_t main_stack_resident_kb() {
  std::ifstream smaps("/proc/self/smaps");
  bool in_stack = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.find(" [stack]") != std::string::npos) in_stack = true;
    if (in_stack && line.rfind("Rss:", 0) == 0) return std::atoll(line.c_str() + 4);
  }
  return -1;
}

// Touches `bytes` of stack below the caller.
__attribute__((noinline)) int touch_deep_stack(size_t bytes) {
  volatile char buffer[4 << 20];
  std::memset(const_cast<char*>(buffer), 1, bytes);
  return buffer[bytes / 2];
}

}  // namespace

TEST_CASE("a thread's stack pages below the current frame are given back, and the thread goes on") {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t before = 0, deep = 0, after = 0;
  int again = 0;
  std::thread thread([&] {
    before = resident_stack_pages();
    CHECK(touch_deep_stack(3 << 20) == 1);
    deep = resident_stack_pages();
    release_unused_stack();
    after = resident_stack_pages();
    again = touch_deep_stack(1 << 20);  // what was dropped reads as zeros and is usable again
  });
  thread.join();
  MESSAGE("stack pages: " << before << " at start, " << deep << " after touching 3 MiB, " << after << " after release");
  CHECK(deep >= before + (3 << 20) / page);
  CHECK(after <= before + (128 << 10) / page);
  CHECK(again == 1);
}

TEST_CASE("on the main thread, whose stack grows on demand, the stack is left alone") {
  CHECK(touch_deep_stack(2 << 20) == 1);
  int64_t before = main_stack_resident_kb();
  release_unused_stack();
  int64_t after = main_stack_resident_kb();
  MESSAGE("main stack: " << before << " KiB resident before, " << after << " KiB after");
  CHECK(before >= 2048);
  CHECK(after >= before - 64);
}
