#include "verifier/thread_stack.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace tailforge {

void release_unused_stack() {
  if (getpid() == static_cast<pid_t>(syscall(SYS_gettid))) return;
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return;
  void* lowest = nullptr;
  size_t size = 0;
  int got = pthread_attr_getstack(&attributes, &lowest, &size);
  pthread_attr_destroy(&attributes);
  if (got != 0 || lowest == nullptr) return;
  // The stack grows down towards `lowest`; everything more than the margin below this frame is
  // free right now.
  constexpr uintptr_t kMargin = 64 * 1024;
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  volatile char here = 0;
  uintptr_t frame = reinterpret_cast<uintptr_t>(&here);
  uintptr_t low = reinterpret_cast<uintptr_t>(lowest);
  if (frame < low + kMargin + page) return;
  uintptr_t end = (frame - kMargin) & ~(page - 1);
  uintptr_t start = (low + page - 1) & ~(page - 1);
  if (end > start) madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);
}

}  // namespace tailforge
