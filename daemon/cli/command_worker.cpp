// `tailforge worker`: verify for a daemon over HTTP (daemon/cluster/remote_worker.h).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <iostream>

#include <spdlog/spdlog.h>

#include "base/process.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/cluster/remote_worker.h"
#include "daemon/http/http_api.h"
#include "daemon/scaleout.h"

namespace tailforge {

namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int) { stop_requested = true; }

}  // namespace

int command_worker(const CommandLine& args) {
  if (Status s = set_log_level(args.get("--log-level", "info")); !s) return report_failure(s.message());
  RemoteWorkerOptions options;
  options.server = args.get("--server");
  if (options.server.rfind("http://", 0) != 0 && options.server.rfind("https://", 0) != 0) {
    return report_failure("--server needs the daemon's URL, e.g. http://gpu-head:8470");
  }
  while (!options.server.empty() && options.server.back() == '/') options.server.pop_back();
  if (!args.has("--token-file")) return report_failure("--token-file is required: the daemon's API token (http.token_file)");
  Result<std::string> token = read_token_file(args.get("--token-file"), "--token-file");
  if (!token) return report_failure(token.message());
  options.token = *token;
  options.ca_file = args.get("--ca-file");
  options.name = args.get("--name", host_name() + ":" + std::to_string(getpid()));
  std::string without = args.get("--without");
  for (size_t start = 0; start < without.size();) {
    size_t comma = without.find(',', start);
    std::string name = without.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!name.empty()) options.without.push_back(name);
    start = comma == std::string::npos ? without.size() : comma + 1;
  }
  options.work_dir = args.get("--work-dir", "/tmp/tailforge-worker-" + options.name);
  options.jobs = static_cast<int>(args.get_int("--jobs", 1));
  options.max_jobs = args.get_int("--max-jobs", 0);
  options.idle_exit_seconds = args.get_number("--idle-exit", 0);
  options.poll_seconds = args.get_number("--poll", 1);

  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  if (Status s = run_remote_worker(options, stop_requested); !s) return report_failure(s.message());
  return 0;
}

}  // namespace tailforge
