// Runs one child process (argv, no shell) with a timeout, rlimits and capped output capture.
// It does not sandbox (see sandbox.h) and does not interpret what the child printed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tailforge {

// Resource limits applied in the child before exec; 0 means "leave as inherited".
struct ProcessLimits {
  int64_t cpu_seconds = 0;
  int64_t address_space_bytes = 0;
  int64_t max_processes = 0;
  int64_t file_size_bytes = 0;
  int64_t open_files = 0;
};

struct ProcessSpec {
  std::vector<std::string> argv;                        // argv[0] is looked up in PATH
  std::string cwd;                                      // empty: inherit
  std::vector<std::string> env_allowlist = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"};
  std::map<std::string, std::string> extra_env;         // set after the allowlist
  double timeout_seconds = 60.0;
  double kill_grace_seconds = 0.5;                      // between SIGTERM and SIGKILL
  ProcessLimits limits;
  int64_t output_cap_bytes = 4 * 1024 * 1024;           // per stream
  std::string stdin_text;                               // written to the child's stdin
  int run_as_uid = -1;                                  // >= 0: setgid/setuid before exec
  int run_as_gid = -1;
  std::string cgroup_procs_file;                        // non-empty: the child joins this cgroup before exec
};

struct ProcessResult {
  bool spawned = false;
  std::string spawn_error;      // why the child could not start (exec failure included)
  int exit_code = -1;           // valid when exited normally
  int signal = 0;               // non-zero when killed by a signal
  bool timed_out = false;
  std::string stdout_text;
  std::string stderr_text;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  double wall_seconds = 0;
  double cpu_seconds = 0;       // user + system of the child and every descendant reaped, orphans too
  int64_t peak_rss_kb = 0;

  bool succeeded() const { return spawned && !timed_out && signal == 0 && exit_code == 0; }
};

// Runs the child to completion. Thread-safe; never throws.
ProcessResult run_process(const ProcessSpec& spec);

// The path of the running executable (/proc/self/exe). When the file was replaced while this
// process runs (a rebuild), the path of its replacement; "tailforge" when it cannot be read.
std::string current_executable();

// This host's name (gethostname), "localhost" when it has none.
std::string host_name();

// Joins argv into one printable command line (for records; never executed by a shell).
std::string command_line(const std::vector<std::string>& argv);

// Observes every launch (for tests counting compiler runs). Set once before use; nullptr clears.
void set_process_launch_observer(std::function<void(const ProcessSpec&)> observer);

}  // namespace tailforge
