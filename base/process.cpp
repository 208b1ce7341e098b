#include "base/process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <grp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "base/clock.h"

extern char** environ;

namespace tailforge {
namespace {

std::mutex observer_mutex;
std::function<void(const ProcessSpec&)> launch_observer;

using Clock = std::chrono::steady_clock;

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
  // An ignored signal stays ignored across exec: the program starts with every one at its default
  // (the keeper ignores several, and the daemon SIGPIPE).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  for (int number = 1; number < NSIG; ++number) {
    if (number != SIGKILL && number != SIGSTOP) sigaction(number, &default_action, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
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
  if (!spec.cgroup_procs_file.empty()) {  // while still privileged: the cgroup files are root's
    int cgroup = open(spec.cgroup_procs_file.c_str(), O_WRONLY | O_CLOEXEC);
    if (cgroup < 0 || write(cgroup, "0", 1) != 1) fail("joining the memory cgroup");
    close(cgroup);
  }
  if (spec.run_as_gid >= 0) {
    if (setgroups(0, nullptr) != 0 || setgid(static_cast<gid_t>(spec.run_as_gid)) != 0) fail("setgid");
  }
  if (spec.run_as_uid >= 0 && setuid(static_cast<uid_t>(spec.run_as_uid)) != 0) fail("setuid");
  execvpe(argv[0], argv, envp);
  fail(argv[0]);
  _exit(127);
}

// What the keeper tells the parent: the child's pid once forked, then its wait status and usage.
struct KeeperReport {
  enum Kind : int { kStarted, kForkFailed, kExited } kind = kStarted;
  int value = 0;  // kStarted: the child's pid; kForkFailed: errno; kExited: the wait status
  rusage usage{};
};

void write_report(int fd, const KeeperReport& report) {
  ssize_t ignored = write(fd, &report, sizeof report);  // below PIPE_BUF: atomic
  (void)ignored;
}

// Closes every descriptor from `first` on except `keep_a` and `keep_b` (both >= first).
void close_descriptors_from(int first, int keep_a, int keep_b) {
  int low = std::min(keep_a, keep_b), high = std::max(keep_a, keep_b);
  auto close_between = [](int from, int to) {  // [from, to]
    if (from > to) return;
    if (close_range(static_cast<unsigned>(from), static_cast<unsigned>(to), 0) == 0) return;
    for (int fd = from; fd <= std::min(to, 65535); ++fd) close(fd);
  };
  close_between(first, low - 1);
  close_between(low + 1, high - 1);
  close_between(high + 1, 1 << 30);
}

// The keeper: a fork of this process, between it and the child, that reaps every process the
// child leaves behind. bwrap exits before reaping its pid-1 init, so that init would be reparented
// to the host's init as a zombie of the sandbox user, and zombies count against the user's process
// limit until something reaps them. As a child subreaper the keeper inherits such orphans and
// waits for all of them before it exits. Only async-signal-safe calls; it never execs.
[[noreturn]] void run_keeper(const ProcessSpec& spec, char* const* argv, char* const* envp, int stdin_fd,
                             int stdout_fd, int stderr_fd, int error_fd, int report_fd) {
  setpgid(0, 0);
  // The parent's handlers (the daemon's SIGTERM/SIGHUP) must not run here: a timeout's SIGTERM
  // for the child's group would otherwise reach the daemon's signal pipe.
  for (int number : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE}) signal(number, SIG_IGN);
  signal(SIGCHLD, SIG_DFL);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  dup2(stdin_fd, 0);
  dup2(stdout_fd, 1);
  dup2(stderr_fd, 2);
  close_descriptors_from(3, error_fd, report_fd);
  pid_t child = fork();
  if (child < 0) {
    write_report(report_fd, {KeeperReport::kForkFailed, errno, {}});
    _exit(0);
  }
  if (child == 0) {
    close(report_fd);
    exec_child(spec, argv, envp, 0, 1, 2, error_fd);
  }
  setpgid(child, child);  // also done in the child; whichever runs first wins
  write_report(report_fd, {KeeperReport::kStarted, child, {}});
  close(0);
  close(1);
  close(2);
  close(error_fd);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
  }
  kill(-child, SIGKILL);  // whatever the child left in its group goes too (its pid still holds the group)
  KeeperReport exited{KeeperReport::kExited, 0, {}};
  while (wait4(child, &exited.value, 0, &exited.usage) < 0 && errno == EINTR) {
  }
  write_report(report_fd, exited);
  while (wait(nullptr) > 0 || errno == EINTR) {
  }
  _exit(0);
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

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
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

namespace {

// The deadline of one child: SIGTERM to its whole process group when the timeout passes, SIGKILL
// after the grace period; never a signal once the child was reaped (its pid may be reused).
class ChildDeadline {
 public:
  ChildDeadline(const ProcessSpec& spec, Clock::time_point start)
      : deadline_(start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec.timeout_seconds))),
        grace_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(spec.kill_grace_seconds))) {}

  void watch(pid_t group) { group_ = group; }
  void child_reaped() { reaped_ = true; }

  // Sends what is due at `now`; sets `timed_out` once the timeout passed.
  void enforce(Clock::time_point now, bool& timed_out) {
    if (reaped_) return;
    if (!term_sent_ && now >= deadline_) {
      timed_out = true;
      term_sent_ = true;
      kill(-group_, SIGTERM);
      kill_at_ = now + grace_;
    }
    if (term_sent_ && !kill_sent_ && now >= kill_at_) {
      kill(-group_, SIGKILL);
      kill_sent_ = true;
    }
  }
  // Milliseconds until the next thing `enforce` may do (at least 1).
  int next_wakeup_ms(Clock::time_point now) const {
    auto next = term_sent_ ? (kill_sent_ ? now + std::chrono::milliseconds(100) : kill_at_) : deadline_;
    return static_cast<int>(
        std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1));
  }
  // Descendants that escaped the group may hold the pipes open: stop reading a second after KILL.
  bool gave_up_reading() const { return kill_sent_ && seconds_since(kill_at_) > 1.0; }

 private:
  Clock::time_point deadline_;
  Clock::duration grace_;
  pid_t group_ = 0;
  bool term_sent_ = false;
  Clock::time_point kill_at_{};
  bool kill_sent_ = false;
  bool reaped_ = false;
};

// One run of a child through the keeper process (run_keeper): spawn, feed stdin and capture
// stdout and stderr until both close, wait for the keeper's report of the child's end, then the
// result. Each step fills `result`; a failed spawn leaves `result.spawn_error` set.
class ChildRun {
 public:
  explicit ChildRun(const ProcessSpec& spec) : spec_(spec), start_(Clock::now()), deadline_(spec, start_) {}

  bool spawn();
  void exchange_output();
  void wait_for_exit();
  ProcessResult& result() { return result_; }

 private:
  bool read_report(KeeperReport& into);
  void reap_keeper(int* status, rusage* usage);

  const ProcessSpec& spec_;
  ProcessResult result_;
  Clock::time_point start_;
  ChildDeadline deadline_;
  Pipe in_, out_, err_, exec_error_, report_;
  pid_t keeper_ = -1;
  pid_t child_ = -1;  // leader of its own process group
  std::string exec_failure_;
};

// Reads one report; false at end of file (the keeper died) or on a read error.
bool ChildRun::read_report(KeeperReport& into) {
  while (true) {
    ssize_t n = read(report_.read_end, &into, sizeof into);
    if (n == static_cast<ssize_t>(sizeof into)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// Waits for the keeper, which exits once every orphan of the child is reaped: a few seconds at
// most, then it is killed (an orphan that left the sandbox's group and lives on).
void ChildRun::reap_keeper(int* status, rusage* usage) {
  int ignored_status = 0;
  rusage ignored_usage{};
  if (!status) status = &ignored_status;
  if (!usage) usage = &ignored_usage;
  for (int polls = 0; polls < 1000; ++polls) {
    pid_t waited = wait4(keeper_, status, WNOHANG, usage);
    if (waited == keeper_ || (waited < 0 && errno != EINTR)) return;
    usleep(2000);
  }
  kill(keeper_, SIGKILL);
  while (wait4(keeper_, status, 0, usage) < 0 && errno == EINTR) {
  }
}

bool ChildRun::spawn() {
  if (!in_.open() || !out_.open() || !err_.open() || !exec_error_.open() || !report_.open()) {
    result_.spawn_error = std::string("pipe2: ") + strerror(errno);
    return false;
  }
  std::vector<std::string> env_strings = build_environment(spec_);
  std::vector<char*> argv, envp;
  for (const auto& arg : spec_.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  for (const auto& var : env_strings) envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);

  // Signals stay blocked from the fork until the keeper has replaced the daemon's handlers.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  keeper_ = fork();
  if (keeper_ == 0) {
    run_keeper(spec_, argv.data(), envp.data(), in_.read_end, out_.write_end, err_.write_end, exec_error_.write_end,
               report_.write_end);
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (keeper_ < 0) {
    result_.spawn_error = std::string("fork: ") + strerror(errno);
    return false;
  }
  in_.close_read();
  out_.close_write();
  err_.close_write();
  exec_error_.close_write();
  report_.close_write();

  KeeperReport started;
  if (!read_report(started) || started.kind != KeeperReport::kStarted) {
    result_.spawn_error = started.kind == KeeperReport::kForkFailed ? std::string("fork: ") + strerror(started.value)
                                                                    : "the process keeper died before the fork";
    reap_keeper(nullptr, nullptr);
    return false;
  }
  child_ = started.value;
  deadline_.watch(child_);

  // The exec-error pipe closes on a successful exec (O_CLOEXEC) or carries the failure.
  char buffer[256];
  ssize_t n;
  while ((n = read(exec_error_.read_end, buffer, sizeof buffer)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    exec_failure_.append(buffer, static_cast<size_t>(n));
  }
  return true;
}

void ChildRun::exchange_output() {
  fcntl(in_.write_end, F_SETFL, O_NONBLOCK);
  size_t stdin_written = 0;
  if (spec_.stdin_text.empty()) in_.close_write();
  char buffer[65536];
  while (out_.read_end >= 0 || err_.read_end >= 0) {
    pollfd fds[3];
    int count = 0;
    int out_index = -1, err_index = -1, in_index = -1;
    if (out_.read_end >= 0) { out_index = count; fds[count++] = {out_.read_end, POLLIN, 0}; }
    if (err_.read_end >= 0) { err_index = count; fds[count++] = {err_.read_end, POLLIN, 0}; }
    if (in_.write_end >= 0) { in_index = count; fds[count++] = {in_.write_end, POLLOUT, 0}; }
    auto now = Clock::now();
    deadline_.enforce(now, result_.timed_out);
    if (deadline_.gave_up_reading()) break;
    int ready = poll(fds, static_cast<nfds_t>(count), deadline_.next_wakeup_ms(now));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    auto drain = [&](int index, Pipe& pipe, std::string& text, bool& truncated) {
      if (index < 0 || !(fds[index].revents & (POLLIN | POLLHUP | POLLERR))) return;
      ssize_t n = read(pipe.read_end, buffer, sizeof buffer);
      if (n > 0) append_capped(text, truncated, buffer, static_cast<size_t>(n), spec_.output_cap_bytes);
      else if (n == 0 || errno != EINTR) pipe.close_read();
    };
    drain(out_index, out_, result_.stdout_text, result_.stdout_truncated);
    drain(err_index, err_, result_.stderr_text, result_.stderr_truncated);
    if (in_index >= 0 && (fds[in_index].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t n = write(in_.write_end, spec_.stdin_text.data() + stdin_written, spec_.stdin_text.size() - stdin_written);
      if (n > 0) stdin_written += static_cast<size_t>(n);
      if (n < 0 || stdin_written >= spec_.stdin_text.size()) in_.close_write();
    }
  }
  in_.close_write();
}

void ChildRun::wait_for_exit() {
  // The child's end, as the keeper saw it; the deadline still applies while waiting.
  KeeperReport exited;
  bool reported = false;
  while (true) {
    auto now = Clock::now();
    deadline_.enforce(now, result_.timed_out);
    pollfd fd{report_.read_end, POLLIN, 0};
    int ready = poll(&fd, 1, deadline_.next_wakeup_ms(now));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    reported = read_report(exited) && exited.kind == KeeperReport::kExited;
    break;
  }
  if (reported) deadline_.child_reaped();
  int keeper_status = 0;
  rusage keeper_usage{};
  reap_keeper(&keeper_status, &keeper_usage);
  if (!reported) kill(-child_, SIGKILL);  // the keeper died first: what is left of the group goes
  int status = reported ? exited.value : keeper_status;
  const rusage& usage = reported ? exited.usage : keeper_usage;
  result_.wall_seconds = seconds_since(start_);
  // The CPU from the keeper's usage: the child's and that of every orphan the keeper reaped (a
  // sandboxed program runs under bwrap's init, which bwrap leaves to the keeper).
  result_.cpu_seconds = static_cast<double>(keeper_usage.ru_utime.tv_sec + keeper_usage.ru_stime.tv_sec) +
                        static_cast<double>(keeper_usage.ru_utime.tv_usec + keeper_usage.ru_stime.tv_usec) / 1e6;
  result_.peak_rss_kb = usage.ru_maxrss;
  if (!exec_failure_.empty()) {
    result_.spawn_error = exec_failure_;
    return;
  }
  result_.spawned = true;
  if (WIFEXITED(status)) result_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result_.signal = WTERMSIG(status);
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) {
    ProcessResult result;
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
  ChildRun run(spec);
  if (run.spawn()) {
    run.exchange_output();
    run.wait_for_exit();
  }
  return std::move(run.result());
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
