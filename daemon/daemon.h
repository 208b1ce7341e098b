// The long-running daemon: a Boost.Asio event loop that drives the cycle planner on a timer,
// runs jobs on a worker pool under resource limits, draws the progress line and reacts to
// signals (SIGTERM/SIGINT drain, SIGHUP reloads the configuration). It owns no business logic:
// job handlers come from daemon/pipeline.h. The HTTP API it serves (daemon/http/) sits a layer
// above it and is handed in as DaemonOptions::start_server.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "daemon/scaleout.h"
#include "store/queue.h"

namespace tailforge {

class Pipeline;

// Control shared by the event loop, the HTTP API and signal handlers.
struct DaemonControl {
  std::atomic<bool> paused{false};
  std::atomic<bool> drain_requested{false};
  std::atomic<bool> disk_low{false};
};

// What a server beside the loop is given: where to listen, the loop's control, its pipeline (for
// the worker endpoints' results) and a way to wake the workers after a change.
struct ServedLoop {
  const std::string& listen;
  const nlohmann::json& config;
  const std::string& db_path;
  DaemonControl& control;
  const WorkerSettings& worker_policy;
  QueuePolicy queue_policy;
  std::shared_ptr<Pipeline> pipeline;
  std::function<void()> wake;
};

// A server running beside the loop on threads of its own, stopped after the workers are.
class DaemonServer {
 public:
  virtual ~DaemonServer() = default;
  // The bound address, e.g. "127.0.0.1:39211".
  virtual std::string address() const = 0;
  virtual void stop() = 0;
};

using StartServer = std::function<Result<std::unique_ptr<DaemonServer>>(const ServedLoop&)>;

struct DaemonOptions {
  std::string db_path;
  std::string config_file;  // reloaded on SIGHUP; empty: defaults only
  std::string base_config_file;  // a file between the defaults and config_file (--demo's); reloaded too
  nlohmann::json config;
  int64_t cycles = 0;       // 0: until stopped
  std::string listen;       // HTTP address, empty: no HTTP API
  StartServer start_server;  // serves `listen`: serve_daemon_api (daemon/http/http_api.h)
  bool progress_line = true;
};

// Runs until the bounded cycles are done or a drain completes. Returns an error only when the
// daemon cannot start (database, lock, address); everything later is logged and recorded.
Status run_daemon(const DaemonOptions& options);

}  // namespace tailforge
