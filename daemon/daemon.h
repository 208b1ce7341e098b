// The long-running daemon: a Boost.Asio event loop that drives the cycle planner on a timer,
// runs jobs on a worker pool under resource limits, serves the HTTP API, draws the progress
// line and reacts to signals (SIGTERM/SIGINT drain, SIGHUP reloads the configuration).
// It owns no business logic: job handlers come from daemon/pipeline.h.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "store/result.h"

namespace tailforge {

struct DaemonOptions {
  std::string db_path;
  std::string config_file;  // reloaded on SIGHUP; empty: defaults only
  std::string base_config_file;  // a file between the defaults and config_file (--demo's); reloaded too
  nlohmann::json config;
  int64_t cycles = 0;       // 0: until stopped
  std::string listen;       // HTTP address, empty: no HTTP API
  bool progress_line = true;
};

// Runs until the bounded cycles are done or a drain completes. Returns an error only when the
// daemon cannot start (database, lock, address); everything later is logged and recorded.
Status run_daemon(const DaemonOptions& options);

// Control shared by the event loop, the HTTP API and signal handlers.
struct DaemonControl {
  std::atomic<bool> paused{false};
  std::atomic<bool> drain_requested{false};
  std::atomic<bool> disk_low{false};
};

}  // namespace tailforge
