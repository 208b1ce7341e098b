#include "base/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace tailforge {

void run_on_threads(size_t threads, const std::function<void(size_t thread)>& body) {
  std::vector<std::thread> running;
  running.reserve(threads);
  for (size_t thread = 0; thread < threads; ++thread) running.emplace_back([&body, thread] { body(thread); });
  for (std::thread& thread : running) thread.join();
}

void for_each_index(size_t count, size_t threads, const std::function<IndexWork()>& start_thread) {
  std::atomic<size_t> next{0};
  std::atomic<bool> stopped{false};
  run_on_threads(std::min(threads, count), [&](size_t) {
    IndexWork work = start_thread();
    if (!work) return;
    for (size_t index = next++; index < count && !stopped; index = next++) {
      if (!work(index)) stopped = true;
    }
  });
}

}  // namespace tailforge
