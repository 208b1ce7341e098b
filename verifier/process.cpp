#include "verifier/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grp.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

extern char** environ;

namespace tailforge {
namespace {

std::mutex observer_mutex;
std::function<void(const ProcessSpec&)> launch_observer;

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<std::string> build_environment(const ProcessSpec& spec) {
  std::vector<std::string> env;
  for (const auto& name : spec.env_allowlist) {
    if (spec.extra_env.count(name)) continue;
    if (const char* value = std::getenv(name.c_str())) env.push_back(name + "=" + value);
  }
  for (const auto& [name, value] : spec.extra_env) env.push_back(name + "=" + value);
  return env;
}

void set_limit(int resource, int64_t value) {
  if (value <= 0) return;
  rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  setrlimit(resource, &limit);
}

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(const ProcessSpec& spec, char* const* argv, char* const* envp,
                             int stdin_fd, int stdout_fd, int stderr_fd, int error_fd) {
  setpgid(0, 0);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
  dup2(stdin_fd, 0);
  dup2(stdout_fd, 1);
  dup2(stderr_fd, 2);
  auto fail = [&](const char* what) {
    int code = errno;
    char message[256];
    int length = 0;
    for (const char* p = what; *p && length < 120; ++p) message[length++] = *p;
    message[length++] = ':';
    message[length++] = ' ';
    const char* reason = strerror(code);
    for (const char* p = reason; *p && length < 250; ++p) message[length++] = *p;
    ssize_t ignored = write(error_fd, message, static_cast<size_t>(length));
    (void)ignored;
    _exit(127);
  };
  if (!spec.cwd.empty() && chdir(spec.cwd.c_str()) != 0) fail("chdir");
  set_limit(RLIMIT_CPU, spec.limits.cpu_seconds);
  set_limit(RLIMIT_AS, spec.limits.address_space_bytes);
  set_limit(RLIMIT_NPROC, spec.limits.max_processes);
  set_limit(RLIMIT_FSIZE, spec.limits.file_size_bytes);
  set_limit(RLIMIT_NOFILE, spec.limits.open_files);
  if (spec.run_as_gid >= 0) {
    if (setgroups(0, nullptr) != 0 || setgid(static_cast<gid_t>(spec.run_as_gid)) != 0) fail("setgid");
  }
  if (spec.run_as_uid >= 0 && setuid(static_cast<uid_t>(spec.run_as_uid)) != 0) fail("setuid");
  execvpe(argv[0], argv, envp);
  fail(argv[0]);
  _exit(127);
}

struct Pipe {
  int read_end = -1;
  int write_end = -1;
  bool open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    read_end = fds[0];
    write_end = fds[1];
    return true;
  }
  void close_read() { if (read_end >= 0) close(read_end); read_end = -1; }
  void close_write() { if (write_end >= 0) close(write_end); write_end = -1; }
  ~Pipe() { close_read(); close_write(); }
};

void append_capped(std::string& text, bool& truncated, const char* data, size_t size, int64_t cap) {
  size_t room = text.size() < static_cast<size_t>(cap) ? static_cast<size_t>(cap) - text.size() : 0;
  if (size > room) truncated = true;
  text.append(data, std::min(size, room));
}

}  // namespace

void set_process_launch_observer(std::function<void(const ProcessSpec&)> observer) {
  std::lock_guard lock(observer_mutex);
  launch_observer = std::move(observer);
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string line;
  for (const auto& arg : argv) {
    if (!line.empty()) line += ' ';
    bool plain = !arg.empty() && arg.find_first_of(" \t\"'\\$`") == std::string::npos;
    line += plain ? arg : "'" + arg + "'";
  }
  return line;
}

ProcessResult run_process(const ProcessSpec& spec) {
  ProcessResult result;
  if (spec.argv.empty()) {
    result.spawn_error = "empty argv";
    return result;
  }
  {
    std::lock_guard lock(observer_mutex);
    if (launch_observer) launch_observer(spec);
  }
  // A child that exits before reading its stdin must not kill us with SIGPIPE.
  static std::once_flag ignore_sigpipe;
  std::call_once(ignore_sigpipe, [] { signal(SIGPIPE, SIG_IGN); });
  Pipe in, out, err, exec_error;
  if (!in.open() || !out.open() || !err.open() || !exec_error.open()) {
    result.spawn_error = std::string("pipe2: ") + strerror(errno);
    return result;
  }
  std::vector<std::string> env_strings = build_environment(spec);
  std::vector<char*> argv, envp;
  for (const auto& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (const auto& var : env_strings) envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);

  auto start = Clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    result.spawn_error = std::string("fork: ") + strerror(errno);
    return result;
  }
  if (pid == 0) {
    exec_child(spec, argv.data(), envp.data(), in.read_end, out.write_end, err.write_end,
               exec_error.write_end);
  }
  setpgid(pid, pid);  // also done in the child; whichever runs first wins
  in.close_read();
  out.close_write();
  err.close_write();
  exec_error.close_write();

  // The exec-error pipe closes on a successful exec (O_CLOEXEC) or carries the failure.
  std::string exec_failure;
  {
    char buffer[256];
    ssize_t n;
    while ((n = read(exec_error.read_end, buffer, sizeof buffer)) != 0) {
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) break;
      exec_failure.append(buffer, static_cast<size_t>(n));
    }
  }

  fcntl(in.write_end, F_SETFL, O_NONBLOCK);
  size_t stdin_written = 0;
  if (spec.stdin_text.empty()) in.close_write();

  auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(spec.timeout_seconds));
  bool term_sent = false;
  Clock::time_point kill_at{};
  bool kill_sent = false;
  // Past the deadline: SIGTERM to the whole group, then SIGKILL after the grace period.
  auto enforce_deadline = [&](Clock::time_point now) {
    if (!term_sent && now >= deadline) {
      result.timed_out = true;
      term_sent = true;
      kill(-pid, SIGTERM);
      kill_at = now + std::chrono::duration_cast<Clock::duration>(
                          std::chrono::duration<double>(spec.kill_grace_seconds));
    }
    if (term_sent && !kill_sent && now >= kill_at) {
      kill(-pid, SIGKILL);
      kill_sent = true;
    }
  };
  char buffer[65536];
  while (out.read_end >= 0 || err.read_end >= 0) {
    pollfd fds[3];
    int count = 0;
    int out_index = -1, err_index = -1, in_index = -1;
    if (out.read_end >= 0) { out_index = count; fds[count++] = {out.read_end, POLLIN, 0}; }
    if (err.read_end >= 0) { err_index = count; fds[count++] = {err.read_end, POLLIN, 0}; }
    if (in.write_end >= 0) { in_index = count; fds[count++] = {in.write_end, POLLOUT, 0}; }
    auto now = Clock::now();
    enforce_deadline(now);
    auto next = term_sent ? (kill_sent ? now + std::chrono::milliseconds(100) : kill_at) : deadline;
    int wait_ms = static_cast<int>(
        std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1));
    if (kill_sent) {
      // Descendants that escaped the group may hold the pipes open; stop reading soon after KILL.
      if (seconds_since(kill_at) > 1.0) break;
    }
    int ready = poll(fds, static_cast<nfds_t>(count), wait_ms);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    auto drain = [&](int index, Pipe& pipe, std::string& text, bool& truncated) {
      if (index < 0 || !(fds[index].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t n = read(pipe.read_end, buffer, sizeof buffer);
      if (n > 0) append_capped(text, truncated, buffer, static_cast<size_t>(n), spec.output_cap_bytes);
      else if (n == 0 || errno != EINTR) pipe.close_read();
    };
    drain(out_index, out, result.stdout_text, result.stdout_truncated);
    drain(err_index, err, result.stderr_text, result.stderr_truncated);
    if (in_index >= 0 && (fds[in_index].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(in.write_end, spec.stdin_text.data() + stdin_written,
                        spec.stdin_text.size() - stdin_written);
      if (n > 0) stdin_written += static_cast<size_t>(n);
      if (n < 0 || stdin_written >= spec.stdin_text.size()) in.close_write();
    }
  }
  in.close_write();

  int status = 0;
  rusage usage{};
  while (true) {
    pid_t waited = wait4(pid, &status, WNOHANG, &usage);
    if (waited == pid) break;
    if (waited < 0 && errno != EINTR) break;
    auto now = Clock::now();
    enforce_deadline(now);
    usleep(2000);
  }
  // Whatever the child left behind in its group goes too.
  kill(-pid, SIGKILL);
  result.wall_seconds = seconds_since(start);
  result.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  result.peak_rss_kb = usage.ru_maxrss;
  if (!exec_failure.empty()) {
    result.spawn_error = exec_failure;
    return result;
  }
  result.spawned = true;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

std::string current_executable() {
  std::error_code ec;
  std::string path = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec || path.empty()) return "tailforge";
  const std::string deleted = " (deleted)";
  if (path.size() > deleted.size() && path.compare(path.size() - deleted.size(), deleted.size(), deleted) == 0) {
    path.resize(path.size() - deleted.size());
  }
  return path;
}

}  // namespace tailforge
