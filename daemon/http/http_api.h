// The daemon's HTTP API (cpp-httplib): health, status, taxonomy, tails, samples with artifacts
// and lineage, jobs, models, Prometheus metrics, token-protected control (pause, resume, drain)
// and model registration, the worker endpoints of scale-out (daemon/http/worker_api.h), and the dashboard (dashboard/dashboard.h) at GET /, which reads these
// same endpoints.
// Loopback by default; a non-loopback address without a token is refused. Every answer to a
// malformed request is a 4xx with a JSON error body.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "daemon/daemon.h"
#include "daemon/http/worker_api.h"

namespace httplib {
class Server;
}

namespace tailforge {

struct ListenAddress {
  std::string host;
  int port = 0;  // 0: any free port
};

// Parses "127.0.0.1:8470", "localhost:0", "[::1]:8470" or ":8470" (loopback).
Result<ListenAddress> parse_listen_address(const std::string& text);
bool is_loopback_host(const std::string& host);

class HttpApi : public DaemonServer {
 public:
  // Binds and starts serving on a thread of its own. `wake` is called after control changes.
  // `read_only` (tailforge serve, with no loop behind it) answers every POST 405. With `workers`
  // (its token is filled in here), the worker endpoints (daemon/http/worker_api.h) are served too.
  static Result<std::unique_ptr<HttpApi>> start(const std::string& listen, const nlohmann::json& config,
                                                const std::string& db_path, DaemonControl& control,
                                                std::function<void()> wake, bool read_only = false,
                                                std::optional<WorkerApiContext> workers = std::nullopt);
  ~HttpApi() override;
  void stop() override;
  std::string address() const override;

 private:
  HttpApi() = default;

  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string host_;
  int port_ = 0;
};

// The daemon's HTTP API with the worker endpoints: what `tailforge daemon --listen` serves
// (DaemonOptions::start_server).
Result<std::unique_ptr<DaemonServer>> serve_daemon_api(const ServedLoop& loop);

// The first line of a token file, trailing blanks removed; `what` names the option in errors.
Result<std::string> read_token_file(const std::string& file, const std::string& what);
// Reads the bearer token from config http.token_file, else the variable named by http.token_env.
Result<std::string> load_api_token(const nlohmann::json& config);

}  // namespace tailforge
