// Work spread over threads: a few threads started together and joined together, and a range of
// indices shared out among threads, each taking the next index nobody has taken yet (so a slow
// item holds up one thread, not a fixed share of the work).
#pragma once

#include <cstddef>
#include <functional>

namespace tailforge {

// Runs `body(thread)` on `threads` new threads, thread = 0 .. threads-1; returns when all ended.
void run_on_threads(size_t threads, const std::function<void(size_t thread)>& body);

// What one thread does with each index it takes; false stops the whole run: no thread takes
// another index (those running finish theirs).
using IndexWork = std::function<bool(size_t index)>;

// Hands the indices [0, count) out to min(threads, count) threads, in order. Each thread first
// calls `start_thread` for its work function, so that it can hold what is its own (a database
// connection); an empty function leaves that thread idle.
void for_each_index(size_t count, size_t threads, const std::function<IndexWork()>& start_thread);

}  // namespace tailforge
