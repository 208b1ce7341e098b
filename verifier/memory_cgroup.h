// Host-memory caps for GPU test programs. They run without an address-space limit (CUDA reserves
// terabytes of virtual space), so each such run gets a memory cgroup of its own, capped, and a
// program the kernel OOM-kills there is reported as such. cgroup v2 where the daemon owns its
// cgroup (a systemd service with Delegate=yes, as install-service writes, a delegated scope, or a
// cgroup that holds nothing but this process): the process moves itself into "<own>/daemon" and
// makes run cgroups beside it. cgroup v1's memory hierarchy where that is what the host mounts.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace tailforge {

struct RunCgroup {
  std::string dir;         // the cgroup's directory
  std::string procs_file;  // a process writes "0" here to join
  int version = 2;
};

// "" when run cgroups can be made here, else why not. Prepared once per process (v2: the move
// into "<own>/daemon" and enabling the memory controller for the run cgroups).
const std::string& memory_cgroups_unavailable();

// A new cgroup capped at `max_bytes` of memory (and no swap), for one run.
Result<RunCgroup> create_run_cgroup(int64_t max_bytes);

// True when the kernel's OOM killer killed a process in it.
bool run_cgroup_oom_killed(const RunCgroup& cgroup);

// Removes it once its processes are gone (retries for a moment while they exit).
void remove_run_cgroup(const RunCgroup& cgroup);

}  // namespace tailforge
