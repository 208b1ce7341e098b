#include "verifier/sandbox.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <nlohmann/json.hpp>

#include "verifier/memory_cgroup.h"

namespace tailforge {
namespace {

bool running_as_root() { return geteuid() == 0; }

void apply_identity(const SandboxOptions& options, ProcessSpec& spec) {
  if (!running_as_root()) return;
  spec.run_as_uid = options.run_as_uid;
  spec.run_as_gid = options.run_as_gid;
}

// The host paths a sandboxed program sees, read-only: the system's programs and libraries (the
// CUDA toolkit and the GPU driver's libraries live under /usr), ROCm, and the dynamic loader's
// configuration. Homes, /root, /work-style trees, the database, caches and every other file of
// the host are not there at all. A top-level directory that is a symlink on the host (merged
// /usr: /lib -> usr/lib) is the same symlink inside.
void add_host_view(std::vector<std::string>& argv, bool gpu) {
  namespace fs = std::filesystem;
  std::error_code error;
  for (const char* path : {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    if (fs::is_symlink(path, error)) {
      argv.insert(argv.end(), {"--symlink", fs::read_symlink(path, error).string(), path});
    } else if (fs::is_directory(path, error)) {
      argv.insert(argv.end(), {"--ro-bind", path, path});
    }
  }
  for (const auto& entry : fs::directory_iterator("/opt", error)) {
    if (entry.path().filename().string().rfind("rocm", 0) == 0) {
      argv.insert(argv.end(), {"--ro-bind", entry.path().string(), entry.path().string()});
    }
  }
  for (const char* path : {"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                           "/etc/localtime"}) {
    argv.insert(argv.end(), {"--ro-bind-try", path, path});
  }
  // The CUDA driver reads the PCI topology and NUMA nodes from sysfs.
  if (gpu) argv.insert(argv.end(), {"--ro-bind-try", "/sys", "/sys"});
}

std::vector<std::string> bwrap_prefix(const SandboxOptions& options, const std::string& private_dir,
                                      bool gpu, const std::vector<std::string>& read_only_paths = {}) {
  std::vector<std::string> argv = {options.bwrap_path, "--unshare-net", "--unshare-pid",
                                   "--unshare-ipc", "--unshare-uts", "--die-with-parent",
                                   "--new-session"};
  add_host_view(argv, gpu);
  for (const std::string& path : read_only_paths) argv.insert(argv.end(), {"--ro-bind", path, path});
  argv.insert(argv.end(), {"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"});
  if (!private_dir.empty()) {
    argv.insert(argv.end(), {"--bind", private_dir, private_dir, "--chdir", private_dir});
  }
  if (gpu) {
    for (const auto& node : gpu_device_nodes()) argv.insert(argv.end(), {"--dev-bind", node, node});
  }
  argv.push_back("--");
  return argv;
}

// bwrap, as the program's parent, exits with 128+N when the program dies from signal N: the
// program's crash, which a plain exit code would hide from the taxonomy's signal rules.
void signal_from_exit_status(ProcessResult& process) {
  constexpr int kFirstSignalStatus = 129, kLastSignalStatus = 128 + 64;
  if (!process.spawned || process.timed_out || process.signal != 0) return;
  if (process.exit_code < kFirstSignalStatus || process.exit_code > kLastSignalStatus) return;
  process.signal = process.exit_code - 128;
}

}  // namespace

std::vector<std::string> gpu_device_nodes() {
  std::vector<std::string> nodes;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev", error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("nvidia", 0) == 0 || name == "kfd" || name == "dri") nodes.push_back(entry.path());
  }
  return nodes;
}

Result<SandboxOptions> sandbox_options_from_json(const nlohmann::json& json) {
  SandboxOptions options;
  try {
    options.mode = json.value("mode", options.mode);
    if (options.mode != "bwrap" && options.mode != "rlimits-only") {
      return make_error("sandbox.mode: '" + options.mode + "' is not 'bwrap' or 'rlimits-only'");
    }
    options.bwrap_path = json.value("bwrap", options.bwrap_path);
    options.run_as_uid = json.value("run_as_uid", options.run_as_uid);
    options.run_as_gid = json.value("run_as_gid", options.run_as_gid);
    options.timeout_seconds = json.value("timeout_seconds", options.timeout_seconds);
    options.output_cap_bytes = json.value("output_cap_bytes", options.output_cap_bytes);
    options.limits.cpu_seconds = json.value("cpu_seconds", options.limits.cpu_seconds);
    options.limits.address_space_bytes = json.value("address_space_bytes", options.limits.address_space_bytes);
    options.limits.max_processes = json.value("max_processes", options.limits.max_processes);
    options.limits.file_size_bytes = json.value("file_size_bytes", options.limits.file_size_bytes);
    options.limits.open_files = json.value("open_files", options.limits.open_files);
    options.gpu_address_space_bytes = json.value("gpu_address_space_bytes", options.gpu_address_space_bytes);
    options.gpu_memory_cap_bytes = json.value("gpu_memory_cap_bytes", options.gpu_memory_cap_bytes);
  } catch (const std::exception& error) {
    return make_error(std::string("sandbox options: ") + error.what());
  }
  return options;
}

Status sandbox_self_test(const SandboxOptions& options) {
  static std::mutex mutex;
  static std::map<std::string, Status> answers;
  std::string key = options.bwrap_path + "#" + std::to_string(options.run_as_uid);
  {
    std::lock_guard lock(mutex);
    if (auto found = answers.find(key); found != answers.end()) return found->second;
  }
  ProcessSpec spec;
  spec.argv = bwrap_prefix(options, "", false);
  spec.argv.push_back("true");
  spec.timeout_seconds = 10;
  apply_identity(options, spec);
  ProcessResult result = run_process(spec);
  Status status;
  if (!result.spawned) {
    status = make_error("bwrap not usable (" + options.bwrap_path + "): " + result.spawn_error);
  } else if (!result.succeeded()) {
    status = make_error("bwrap self-test failed (" + command_line(spec.argv) + "): exit " +
                        std::to_string(result.exit_code) + " " + result.stderr_text);
  }
  std::lock_guard lock(mutex);
  answers.emplace(key, status);
  return status;
}

namespace {

// Why the program did not start, when the cause passes: "" otherwise. Every sandbox runs as the
// same user, and sandboxes that just ended count against that user's process limit until init
// reaps them; at the limit, starting bwrap as that user fails (EAGAIN), or bwrap exits 1 with
// "bwrap: Can't fork for pid 1: Resource temporarily unavailable". And a program file that was
// just written can still be open for writing in a child another thread forked meanwhile
// (ETXTBSY, "Text file busy") until that child execs.
std::string transient_start_failure(const ProcessResult& process) {
  const std::string& message = process.spawned ? process.stderr_text : process.spawn_error;
  if (process.spawned && (process.exit_code != 1 || message.rfind("bwrap: ", 0) != 0)) return "";
  for (const char* cause : {"Resource temporarily unavailable", "Text file busy"})
    if (message.find(cause) != std::string::npos) return message.substr(0, message.find('\n'));
  return "";
}

}  // namespace

SandboxOutcome run_sandboxed(const SandboxOptions& options, const SandboxRun& run) {
  SandboxOutcome outcome;
  ProcessSpec spec;
  spec.cwd = run.private_dir;
  spec.timeout_seconds = run.timeout_seconds > 0 ? run.timeout_seconds : options.timeout_seconds;
  spec.output_cap_bytes = options.output_cap_bytes;
  spec.limits = options.limits;
  if (run.gpu) spec.limits.address_space_bytes = options.gpu_address_space_bytes;
  spec.stdin_text = run.stdin_text;
  spec.extra_env = {{"HOME", run.private_dir.empty() ? "/tmp" : run.private_dir}, {"TMPDIR", "/tmp"}};
  apply_identity(options, spec);
  if (running_as_root() && !run.private_dir.empty()) {
    std::error_code ignored;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(run.private_dir, ignored)) {
      if (chown(entry.path().c_str(), static_cast<uid_t>(options.run_as_uid),
                static_cast<gid_t>(options.run_as_gid)) != 0) {
        continue;
      }
    }
    if (chown(run.private_dir.c_str(), static_cast<uid_t>(options.run_as_uid),
              static_cast<gid_t>(options.run_as_gid)) != 0) {
      outcome.skip_reason = "cannot hand the private directory to the sandbox user: " + run.private_dir;
      return outcome;
    }
  }
  if (options.mode == "bwrap") {
    if (Status usable = sandbox_self_test(options); !usable) {
      outcome.skip_reason = "sandbox unavailable, untrusted code not executed: " + usable.message();
      return outcome;
    }
    spec.argv = bwrap_prefix(options, run.private_dir, run.gpu, run.read_only_paths);
  } else if (options.mode != "rlimits-only") {
    outcome.skip_reason = "unknown sandbox mode '" + options.mode + "'";
    return outcome;
  }
  spec.argv.insert(spec.argv.end(), run.argv.begin(), run.argv.end());
  outcome.command = command_line(spec.argv);
  // A GPU run has no address-space limit; a cgroup caps its memory where one can be made.
  std::optional<RunCgroup> cgroup;
  if (run.gpu && options.gpu_memory_cap_bytes > 0 && memory_cgroups_unavailable().empty()) {
    if (Result<RunCgroup> made = create_run_cgroup(options.gpu_memory_cap_bytes); made) {
      cgroup = *made;
      spec.cgroup_procs_file = cgroup->procs_file;
    }
  }
  struct CgroupRemoval {
    std::optional<RunCgroup>& cgroup;
    ~CgroupRemoval() {
      if (cgroup) remove_run_cgroup(*cgroup);
    }
  } removal{cgroup};
  outcome.process = run_process(spec);
  // Nothing of the program ran: start it again after a pause, for about five seconds in all,
  // then report it as not executed rather than as the program's failure.
  for (int attempt = 0; !transient_start_failure(outcome.process).empty(); ++attempt) {
    if (attempt == 7) {
      outcome.skip_reason = "the sandbox could not start the program: " + transient_start_failure(outcome.process);
      return outcome;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(40 << attempt));
    outcome.process = run_process(spec);
  }
  outcome.executed = outcome.process.spawned;
  if (options.mode == "bwrap") signal_from_exit_status(outcome.process);
  if (!outcome.executed) outcome.skip_reason = "could not start: " + outcome.process.spawn_error;
  outcome.oom_killed = cgroup && outcome.executed && run_cgroup_oom_killed(*cgroup);
  return outcome;
}

}  // namespace tailforge
