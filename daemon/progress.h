// The daemon's live status line: cycle, verified and failed this cycle, queue depth, rate and
// ETA. On a terminal it is one line redrawn in place (log lines are printed above it); otherwise
// it is logged every 30 seconds.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "store/cycles.h"

namespace tailforge {

class ProgressLine {
 public:
  ProgressLine(bool enabled, int64_t cycles_to_run);
  ~ProgressLine();

  // Recomputes the figures from the store, redraws when enabled, and returns the line.
  std::string update(Database& db, std::optional<int64_t> cycle, int64_t cycles_run);
  void cycle_finished(const CycleRecord& cycle);
  // Clears the line for good (before the daemon's last messages).
  void finish();

 private:
  bool enabled_;
  bool terminal_;
  int64_t cycles_to_run_;
  int64_t cycles_finished_ = 0;
  std::optional<int64_t> verified_at_start_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_logged_ = started_;
};

// Formats seconds as "1h02m", "3m05s" or "12s".
std::string format_duration(double seconds);

}  // namespace tailforge
