// `tailforge worker`: a process on any host that verifies for a daemon over HTTP. It fetches the
// daemon's configuration (so it verifies as the daemon would), reports what its host can run,
// leases the jobs it may run, verifies with its own toolchains and sandbox, heartbeats the lease,
// and posts the output. Content travels by SHA-256: inputs it has cached are not fetched again,
// outputs the daemon holds are not uploaded again. A post that fails is retried (the daemon
// stores a repeated result once); a worker that dies loses nothing, its lease expires; one that is
// stopped (SIGTERM, SIGINT) gives its running jobs back.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace tailforge {

struct RemoteWorkerOptions {
  std::string server;                // http://host:port or https://host:port
  std::string token;
  std::string ca_file;               // https: a CA bundle for the daemon's certificate ("" = the system's)
  std::string name;                  // unique per worker; "" = host:pid
  std::vector<std::string> without;  // tool roles or GPUs not to offer (daemon/scaleout.h)
  std::string work_dir;              // scratch, the compile cache and the input cache; "" = /tmp/tailforge-worker-<name>
  int jobs = 1;                      // jobs run at once
  int64_t max_jobs = 0;              // exit after this many finished jobs (0: no limit)
  double idle_exit_seconds = 0;      // exit after this long without a job (0: never)
  double poll_seconds = 1;           // wait between lease attempts while idle
  double connect_seconds = 300;      // give up when the daemon stays unreachable this long at start
};

// Runs until stopped (SIGINT/SIGTERM finish the running jobs first), max_jobs or the idle limit.
// An error is returned for what stops it from starting (unreachable daemon, bad token, config).
Status run_remote_worker(const RemoteWorkerOptions& options, const std::atomic<bool>& stop);

}  // namespace tailforge
