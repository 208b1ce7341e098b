#include "daemon/service_manager.h"

#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <spdlog/spdlog.h>

namespace tailforge {

ServiceManager::ServiceManager() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  supervised_ = socket && *socket;
  uint64_t usec = 0;
  if (supervised_ && sd_watchdog_enabled(0, &usec) > 0) watchdog_interval_ = std::chrono::microseconds(usec);
}

void ServiceManager::notify(const std::string& state) {
  if (!supervised_) return;
  if (int sent = sd_notify(0, state.c_str()); sent < 0) {
    spdlog::debug("sd_notify({}) failed: error {}", state.substr(0, state.find('\n')), -sent);
  }
}

void ServiceManager::ready(const std::string& status) { notify("READY=1\nSTATUS=" + status); }

void ServiceManager::status(const std::string& line) { notify("STATUS=" + line); }

void ServiceManager::reloading() {
  // systemd 253 and later want the monotonic time with RELOADING=1; older ones ignore it.
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  uint64_t usec = static_cast<uint64_t>(now.tv_sec) * 1000000 + static_cast<uint64_t>(now.tv_nsec) / 1000;
  notify("RELOADING=1\nMONOTONIC_USEC=" + std::to_string(usec));
}

void ServiceManager::stopping(const std::string& why) { notify("STOPPING=1\nSTATUS=stopping: " + why); }

void ServiceManager::extend_stop_timeout(double seconds) {
  if (seconds <= 0) return;
  notify("EXTEND_TIMEOUT_USEC=" + std::to_string(static_cast<uint64_t>(seconds * 1e6)));
}

void ServiceManager::watchdog_tick() {
  if (watchdog_interval_.count() == 0) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_ping_ < watchdog_interval_ / 2) return;
  last_ping_ = now;
  notify("WATCHDOG=1");
}

bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (!stream) return false;
  unsigned long long device = 0, inode = 0;
  if (std::sscanf(stream, "%llu:%llu", &device, &inode) != 2) return false;
  struct stat info {};
  if (fstat(STDERR_FILENO, &info) != 0) return false;
  return static_cast<unsigned long long>(info.st_dev) == device && static_cast<unsigned long long>(info.st_ino) == inode;
}

}  // namespace tailforge
