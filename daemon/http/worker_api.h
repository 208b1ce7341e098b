// The daemon's side of scale-out: the HTTP endpoints `tailforge worker` processes use, on the
// daemon's listener, every one behind the API token (Authorization: Bearer).
//   GET  /v1/workers/config      the daemon's configuration, so a worker verifies as the daemon would
//   POST /v1/workers/lease       register capabilities, lease a job of a kind the worker may run
//   POST /v1/workers/heartbeat   extend a held lease (409 once it is lost)
//   POST /v1/workers/result      post a job's output or error, or give it back (release); a
//                                repeat of a stored result is answered as a duplicate
//   POST /v1/artifacts/missing   which of these content addresses the daemon lacks
//   PUT  /v1/artifacts/SHA256    upload content (checked against its address)
//   GET  /v1/artifacts/SHA256    download content (a job's headers)
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "daemon/pipeline.h"
#include "daemon/scaleout.h"

namespace httplib {
class Server;
}

namespace tailforge {

struct WorkerApiContext {
  std::string db_path;
  std::string token;  // empty: the endpoints answer 403
  nlohmann::json config;
  WorkerSettings settings;
  QueuePolicy queue_policy;
  std::shared_ptr<Pipeline> pipeline;
  std::function<void()> wake;  // new jobs may follow a stored result
};

void add_worker_routes(httplib::Server& server, const WorkerApiContext& context);

// A new lease owner for one lease of a remote worker: "remote:NAME/NONCE". Each lease has its
// own, so that a worker's post or heartbeat for a job it no longer holds (another of its threads
// holds it now, after a restart or an expiry) is refused.
std::string new_remote_lease(const std::string& worker_name);

}  // namespace tailforge
