// Elapsed time on the steady clock, as stages, processes, commands and the progress line report it.
#pragma once

#include <chrono>

namespace tailforge {

// Seconds from `start` to now on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace tailforge
