#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/parallel.h"

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

namespace {

// What the threads of the stopping test below wait on.
struct StopEvents {
  std::mutex mutex;
  std::condition_variable changed;
  int below_ten_done = 0;
  bool stopper_left = false;  // the thread that answered false has left its loop
  bool timed_out = false;

  void wait(const std::function<bool()>& condition) {  // with a deadline only a hang reaches
    std::unique_lock lock(mutex);
    if (!changed.wait_for(lock, std::chrono::seconds(60), condition)) timed_out = true;
  }
};

// One per thread, owned by that thread's work function, so destroyed when the thread leaves its
// loop: for the thread that answered false, after for_each_index set its stop.
struct StopThreadState {
  StopEvents* events = nullptr;
  bool stopper = false;  // this thread answered false
  ~StopThreadState() {
    if (!stopper) return;
    std::lock_guard lock(events->mutex);
    events->stopper_left = true;
    events->changed.notify_all();
  }
};

}  // namespace

TEST_CASE("for_each_index: false from one index stops every thread from taking another") {
  // How far the other threads get while index 10 runs is up to the scheduler, so the run is held
  // in place with events rather than left to timing: index 10 answers false only once indices 0-9
  // are done, and a thread that takes an index past 10 holds it until the thread that answered
  // false has left its loop. So exactly 0-10 run, plus at most the one index each of the other two
  // threads holds when the stop comes: 11 to 13, on any machine. A thread that took another index
  // after the stop would run it at once, and the count shows it.
  StopEvents events;
  std::atomic<int> done{0};
  std::atomic<int> taken_after_false{0};  // indices the stopping thread took after answering false
  for_each_index(1000, 3, [&]() -> IndexWork {
    auto state = std::make_shared<StopThreadState>();
    state->events = &events;
    return [&, state](size_t i) {
      ++done;
      if (state->stopper) {
        ++taken_after_false;
        return true;
      }
      if (i < 10) {
        std::lock_guard lock(events.mutex);
        ++events.below_ten_done;
        events.changed.notify_all();
        return true;
      }
      if (i == 10) {
        events.wait([&] { return events.below_ten_done == 10; });
        state->stopper = true;
        return false;
      }
      events.wait([&] { return events.stopper_left; });
      return true;
    };
  });
  CHECK_FALSE(events.timed_out);
  CHECK(taken_after_false == 0);
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
