#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "verifier/parallel.h"

using namespace tailforge;

TEST_CASE("for_each_index hands every index to exactly one thread, each thread starting once") {
  std::vector<std::atomic<int>> taken(500);
  std::atomic<int> started{0};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  for_each_index(taken.size(), 4, [&]() -> IndexWork {
    ++started;
    return [&](size_t i) {
      ++taken[i];
      std::lock_guard lock(mutex);
      threads.insert(std::this_thread::get_id());
      return true;
    };
  });
  CHECK(started == 4);
  for (const std::atomic<int>& count : taken) CHECK(count == 1);
  CHECK(threads.size() >= 1);
  CHECK(threads.size() <= 4);
}

TEST_CASE("for_each_index starts no more threads than indices, and none for an empty range") {
  std::atomic<int> started{0};
  for_each_index(2, 8, [&]() -> IndexWork {
    ++started;
    return [](size_t) { return true; };
  });
  CHECK(started == 2);
  started = 0;
  for_each_index(0, 8, [&]() -> IndexWork {
    ++started;
    return [](size_t) { return true; };
  });
  CHECK(started == 0);
}

TEST_CASE("for_each_index: false from one index stops every thread from taking another") {
  std::atomic<int> done{0};
  for_each_index(1000, 3, [&]() -> IndexWork {
    return [&](size_t i) {
      ++done;
      return i != 10;
    };
  });
  // Index 10 stops the run; the other threads finish only the index each holds.
  CHECK(done >= 11);
  CHECK(done <= 13);
}

TEST_CASE("for_each_index: a thread whose start gives no work function takes no index") {
  std::atomic<int> starts{0};
  std::vector<std::atomic<int>> taken(100);
  for_each_index(taken.size(), 2, [&]() -> IndexWork {
    if (starts++ == 0) return {};  // this thread could not open what it needs
    return [&](size_t i) {
      ++taken[i];
      return true;
    };
  });
  for (const std::atomic<int>& count : taken) CHECK(count == 1);
}

TEST_CASE("run_on_threads runs the body once per thread number") {
  std::vector<std::atomic<int>> ran(5);
  run_on_threads(ran.size(), [&](size_t thread) { ++ran[thread]; });
  for (const std::atomic<int>& count : ran) CHECK(count == 1);
}
