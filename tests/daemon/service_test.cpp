// The daemon as a systemd service, without systemd: `install-service` writes a unit that
// systemd-analyze accepts, and a daemon started with NOTIFY_SOCKET and WATCHDOG_USEC (what
// systemd gives a Type=notify service) tells a socket this test owns that it is ready, its status
// line, watchdog pings, a reload on SIGHUP, and a stop on SIGTERM that drains in time; with
// JOURNAL_STREAM naming its stderr its log lines carry syslog priorities and no timestamps.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "base/files.h"
#include "base/process.h"
#include "test_support/run_tailforge.h"
#include "test_support/spawn.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/stage_runner.h"
#include "verifier/toolchains.h"

using namespace tailforge;

namespace {

using Clock = std::chrono::steady_clock;

// A datagram socket at `path`, read all the time as systemd reads its notify socket (a full
// socket would block the sender).
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof address.sun_path);
    path.copy(address.sun_path, path.size());
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
    timeval timeout{0, 100000};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    reader_ = std::thread([this] {
      while (!done_) {
        char buffer[4096];
        ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
        if (n <= 0) continue;
        std::lock_guard lock(mutex_);
        messages_.emplace_back(buffer, static_cast<size_t>(n));
      }
    });
  }
  ~NotifySocket() {
    done_ = true;
    reader_.join();
    close(fd_);
  }

  // The next message after the ones already returned that contains `needle`, waiting up to
  // `seconds`; "" when none came.
  std::string wait_for(const std::string& needle, double seconds) {
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (true) {
      {
        std::lock_guard lock(mutex_);
        for (; next_ < messages_.size(); ++next_) {
          if (messages_[next_].find(needle) != std::string::npos) return messages_[next_++];
        }
      }
      if (Clock::now() >= deadline) return "";
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  // The messages after the ones wait_for returned so far, once `enough` holds for them or after
  // `seconds`, whichever comes first; moves no position.
  std::vector<std::string> wait_until(const std::function<bool(const std::vector<std::string>&)>& enough,
                                      double seconds) {
    auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (true) {
      std::vector<std::string> unread;
      {
        std::lock_guard lock(mutex_);
        unread.assign(messages_.begin() + static_cast<std::ptrdiff_t>(next_), messages_.end());
      }
      if (enough(unread) || Clock::now() >= deadline) return unread;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::string log() {
    std::lock_guard lock(mutex_);
    std::string all;
    for (const std::string& message : messages_) all += message + "\n--\n";
    return all;
  }

 private:
  int fd_ = -1;
  std::thread reader_;
  std::atomic<bool> done_{false};
  std::mutex mutex_;
  std::vector<std::string> messages_;
  size_t next_ = 0;
};

}  // namespace

TEST_CASE("install-service writes a Type=notify unit for this binary and database that systemd accepts") {
  TempDir dir;
  std::string config = dir.file("my config.json");
  std::ofstream(config) << R"({"daemon": {"drain_grace_seconds": 45}})";
  std::string unit = dir.file("units/tailforge.service");
  ProcessResult written = run_tailforge({"install-service", "--db", dir.file("grow.db"), "--config", config, "--out",
                                         unit, "--watchdog-sec", "90"});
  REQUIRE_MESSAGE(written.exit_code == 0, written.stderr_text);
  CHECK(written.stdout_text.find("systemctl daemon-reload && systemctl enable --now tailforge.service") !=
        std::string::npos);
  std::string text = read_text_file_or_empty(unit);
  CAPTURE(text);
  CHECK(text.find("\nType=notify\n") != std::string::npos);
  CHECK(text.find("\nExecStart=" + std::string(TAILFORGE_BINARY) + " daemon --db " + dir.file("grow.db") + " --config \"" +
                  config + "\" --cycles 0 --no-progress\n") != std::string::npos);
  CHECK(text.find("\nExecReload=/bin/kill -HUP $MAINPID\n") != std::string::npos);
  CHECK(text.find("\nTimeoutStopSec=75\n") != std::string::npos);  // the drain's 45 s and 30 more
  CHECK(text.find("\nWatchdogSec=90\n") != std::string::npos);
  CHECK(text.find("\nKillMode=mixed\n") != std::string::npos);
  CHECK(text.find("\nDelegate=yes\n") != std::string::npos);
  CHECK(text.find("TAILFORGE_HOME=") != std::string::npos);
  CHECK(run_tailforge({"install-service", "--db", dir.file("grow.db"), "--out", unit, "--watchdog-sec", "soon"})
            .exit_code != 0);

  ProcessSpec analyze;
  analyze.argv = {"systemd-analyze", "verify", unit};
  analyze.timeout_seconds = 60;
  ProcessResult verified = run_process(analyze);
  if (!verified.spawned) {
    testing::skip(testing::Missing::setup_tool, "systemd-analyze verify: not installed (" + verified.spawn_error + ")");
    return;
  }
  CHECK_MESSAGE(verified.exit_code == 0, verified.stdout_text << verified.stderr_text);
  CHECK_MESSAGE(verified.stderr_text.find("tailforge.service:") == std::string::npos, verified.stderr_text);
}

TEST_CASE("under a service manager the daemon reports ready, status and watchdog pings, reloads on SIGHUP and "
          "drains on SIGTERM in time" * doctest::test_suite("long")) {
  TempDir dir;
  std::string config = dir.file("service.json");
  std::ofstream(config) << R"({"daemon": {"samples_per_cycle": 4, "drain_grace_seconds": 5},
                               "synth": {"enabled": false}, "eval": {"enabled": false}, "retrain": {"enabled": false}})";
  NotifySocket notify(dir.file("notify"));
  std::string log = dir.file("stderr.log");
  std::ofstream(log).close();
  struct stat info {};
  REQUIRE(stat(log.c_str(), &info) == 0);
  std::string journal_stream = "JOURNAL_STREAM=" + std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino);
  pid_t pid = spawn_in_background({TAILFORGE_BINARY, "daemon", "--db", dir.file("service.db"), "--config", config,
                                   "--cycles", "0", "--no-progress"},
                                  log, {"NOTIFY_SOCKET=" + dir.file("notify"), "WATCHDOG_USEC=400000", journal_stream});
  auto stop = [&] {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  };

  std::string ready = notify.wait_for("READY=1", 60);
  if (ready.empty()) stop();
  REQUIRE_MESSAGE(!ready.empty(), notify.log() << read_text_file_or_empty(log));
  CHECK(ready.find("STATUS=started on " + dir.file("service.db")) != std::string::npos);
  // Pings every 200 ms (half of WATCHDOG_USEC) and the progress line once a second, both from the
  // event loop. A busy machine slows that loop, so the pings are counted against the daemon's own
  // one-second timer rather than the test's clock: the test waits (60 s at most) for ten pings and
  // four progress lines. The socket receives datagrams in the order the loop sent them, and progress
  // lines are sent more than 1 s apart, so the three intervals between the first four span over
  // 3 s. Five pings or fewer in them would leave a gap of over 3 s / 6 = 500 ms between two pings,
  // past WATCHDOG_USEC (400 ms): systemd would have killed the daemon. At the 200 ms pace there are
  // about 15.
  auto is_ping = [](const std::string& message) { return message.find("WATCHDOG=1") != std::string::npos; };
  auto is_progress = [](const std::string& message) {
    return message.find("STATUS=") != std::string::npos && message.find(" | queue ") != std::string::npos;
  };
  auto has_cycle_1 = [](const std::vector<std::string>& messages) {
    return std::any_of(messages.begin(), messages.end(),
                       [](const std::string& message) { return message.find("STATUS=cycle 1") != std::string::npos; });
  };
  std::vector<std::string> seen = notify.wait_until(
      [&](const std::vector<std::string>& messages) {
        return std::count_if(messages.begin(), messages.end(), is_ping) >= 10 &&
               std::count_if(messages.begin(), messages.end(), is_progress) >= 4 && has_cycle_1(messages);
      },
      60);
  {
    CAPTURE(notify.log());
    CHECK(std::count_if(seen.begin(), seen.end(), is_ping) >= 10);
    CHECK(has_cycle_1(seen));
    std::vector<size_t> progress_lines;
    for (size_t i = 0; i < seen.size(); ++i) {
      if (is_progress(seen[i])) progress_lines.push_back(i);
    }
    if (progress_lines.size() < 4) stop();
    REQUIRE(progress_lines.size() >= 4);
    auto pings_in_three_intervals = std::count_if(seen.begin() + static_cast<std::ptrdiff_t>(progress_lines[0]),
                                                  seen.begin() + static_cast<std::ptrdiff_t>(progress_lines[3]), is_ping);
    CHECK(pings_in_three_intervals >= 6);
  }

  kill(pid, SIGHUP);
  std::string reloading = notify.wait_for("RELOADING=1", 10);
  CHECK(reloading.find("MONOTONIC_USEC=") != std::string::npos);
  CHECK(notify.wait_for("READY=1", 10).find("STATUS=configuration reloaded") != std::string::npos);

  auto asked = Clock::now();
  kill(pid, SIGTERM);
  std::string stopping = notify.wait_for("STOPPING=1", 10);
  CHECK(stopping.find("STATUS=stopping: SIGTERM, draining") != std::string::npos);
  int status = -1;
  while (waitpid(pid, &status, WNOHANG) == 0 && Clock::now() - asked < std::chrono::seconds(30)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  double seconds = std::chrono::duration<double>(Clock::now() - asked).count();
  if (!WIFEXITED(status)) stop();
  REQUIRE_MESSAGE(WIFEXITED(status), "the daemon did not stop within 30 s of SIGTERM");
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(seconds < 5 + 10);  // the drain grace and a little: within TimeoutStopSec (grace + 30)

  // The journal gets priorities from "<N>" and stamps lines itself.
  std::string lines = read_text_file_or_empty(log);
  CAPTURE(lines);
  CHECK(lines.find("<6>daemon started on " + dir.file("service.db")) != std::string::npos);
  CHECK(lines.find("<6>SIGHUP: configuration reloaded") != std::string::npos);
  CHECK(lines.find("T" + std::string(2, ':')) == std::string::npos);
  std::istringstream each(lines);
  for (std::string line; std::getline(each, line);) {
    if (!line.empty()) CHECK_MESSAGE(line[0] == '<', line);
  }
}
