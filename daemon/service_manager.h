// What the daemon tells systemd when it runs as a Type=notify service (NOTIFY_SOCKET set):
// readiness, a status line for `systemctl status`, reload and stop notices, more time while a
// stop drains, and watchdog pings from the event loop, so a loop that hangs stops pinging and
// systemd restarts it. Outside systemd every call does nothing. Also how log lines are written
// when stderr is the journal: no timestamp (journald keeps its own), a syslog priority prefix.
#pragma once

#include <chrono>
#include <string>

namespace tailforge {

class ServiceManager {
 public:
  ServiceManager();  // reads NOTIFY_SOCKET and WATCHDOG_USEC

  // True when a service manager listens (NOTIFY_SOCKET is set).
  bool supervised() const { return supervised_; }
  // The watchdog interval systemd asked for (WatchdogSec=), zero when none.
  std::chrono::microseconds watchdog_interval() const { return watchdog_interval_; }

  void ready(const std::string& status);
  void status(const std::string& line);
  void reloading();
  void stopping(const std::string& why);
  // Asks for `seconds` more before systemd's stop timeout (EXTEND_TIMEOUT_USEC).
  void extend_stop_timeout(double seconds);
  // Sends WATCHDOG=1 once half the interval has passed since the last ping; call it from the
  // event loop's timer, often.
  void watchdog_tick();

 private:
  void notify(const std::string& state);

  bool supervised_ = false;
  std::chrono::microseconds watchdog_interval_{0};
  std::chrono::steady_clock::time_point last_ping_{};
};

// True when stderr is the stream systemd connected to the journal (JOURNAL_STREAM names its
// device and inode).
bool stderr_is_journal();

}  // namespace tailforge
