// Runs untrusted programs: inside bubblewrap (no network, new pid namespace, one private writable
// directory, tmpfs /tmp, and of the host only the system's programs and libraries, read-only:
// homes, /root, the source tree, the database and the caches are not there) plus rlimits, or
// with rlimits only when configured. It never runs untrusted code unsandboxed by accident: a
// broken bwrap means "not executed". The caller's stdout cap is reported, not hidden: see
// ProcessResult::stdout_truncated.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/process.h"
#include "base/result.h"

namespace tailforge {

struct SandboxOptions {
  std::string mode = "bwrap";         // "bwrap" or "rlimits-only"
  std::string bwrap_path = "bwrap";
  // When the caller is root the child runs as this uid/gid (root ignores RLIMIT_NPROC).
  int run_as_uid = 65534;
  int run_as_gid = 65534;
  double timeout_seconds = 30;
  int64_t output_cap_bytes = 1 << 20;
  ProcessLimits limits{30, int64_t{4} << 30, 64, int64_t{64} << 20, 256};
  // GPU runtimes reserve huge virtual ranges: a GPU run gets this address-space limit (0 = none).
  int64_t gpu_address_space_bytes = 0;
  // ...and its host memory is capped by a memory cgroup of its own instead (0 = none), where
  // memory cgroups can be made (verifier/memory_cgroup.h).
  int64_t gpu_memory_cap_bytes = int64_t{8} << 30;
};

struct SandboxRun {
  std::vector<std::string> argv;
  std::string private_dir;    // the only writable directory; the child starts there
  bool gpu = false;           // bind GPU device nodes
  double timeout_seconds = 0; // <= 0: options.timeout_seconds
  std::string stdin_text;
  // More host directories the program reads, read-only (a Python environment outside /usr).
  std::vector<std::string> read_only_paths;
};

struct SandboxOutcome {
  bool executed = false;
  std::string skip_reason;    // why the program was not executed
  ProcessResult process;
  std::string command;        // the full command line that ran
  bool oom_killed = false;    // the kernel killed it at the memory cap (gpu_memory_cap_bytes)
};

// Parses {"mode", "bwrap", "run_as_uid", "run_as_gid", "timeout_seconds", "output_cap_bytes",
// "cpu_seconds", "address_space_bytes", "max_processes", "file_size_bytes", "open_files",
// "gpu_address_space_bytes", "gpu_memory_cap_bytes"}; missing keys keep their defaults.
Result<SandboxOptions> sandbox_options_from_json(const nlohmann::json& json);

// Whether bwrap runs here with the options' flags; the answer is remembered per bwrap path/uid.
Status sandbox_self_test(const SandboxOptions& options);

// Runs one untrusted program. Never throws; every outcome (timeout, limit hit, skip) is a value.
SandboxOutcome run_sandboxed(const SandboxOptions& options, const SandboxRun& run);

// Existing GPU device nodes (/dev/nvidia*, /dev/kfd, /dev/dri).
std::vector<std::string> gpu_device_nodes();

}  // namespace tailforge
