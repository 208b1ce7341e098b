#include "daemon/crash_recorder.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/number.h"
#include "verifier/work_label.h"

namespace tailforge {
namespace {

constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
int record_fd = -1;

// Writes `value` in decimal at `out`; returns the characters written. Async-signal-safe.
size_t write_decimal(char* out, int64_t value) {
  char digits[24];
  size_t count = 0;
  bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  do {
    digits[count++] = static_cast<char>('0' + magnitude % 10);
    magnitude /= 10;
  } while (magnitude > 0);
  size_t written = 0;
  if (negative) out[written++] = '-';
  while (count > 0) out[written++] = digits[--count];
  return written;
}

// One line "crash JOB SIGNAL STAGE\n" with write(2) only, then the default action, which the
// signal's return (or re-raise, for abort) takes.
void record_fatal_signal(int signal) {
  int saved_errno = errno;
  char line[160];
  size_t length = 0;
  std::memcpy(line, "crash ", 6);
  length += 6;
  length += write_decimal(line + length, current_job_id());
  line[length++] = ' ';
  length += write_decimal(line + length, signal);
  line[length++] = ' ';
  const char* stage = current_stage_name();
  for (size_t i = 0; stage[i] != '\0' && length < sizeof(line) - 2; ++i) {
    line[length++] = stage[i] == ' ' || stage[i] == '\n' ? '_' : stage[i];
  }
  line[length++] = '\n';
  if (record_fd >= 0) {
    ssize_t ignored = write(record_fd, line, length);
    (void)ignored;
  }
  errno = saved_errno;
  raise(signal);  // SA_RESETHAND made it the default action: the process ends as it would have
}

}  // namespace

std::string crash_record_path(const std::string& db_path) { return db_path + ".crashes"; }

Status install_crash_recorder(const std::string& db_path) {
  std::string path = crash_record_path(db_path);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return make_error("cannot open " + path + ": " + std::strerror(errno));
  if (record_fd >= 0) close(record_fd);
  record_fd = fd;
  ensure_alternate_signal_stack();
  struct sigaction action {};
  action.sa_handler = record_fatal_signal;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signal : kFatalSignals) {
    if (sigaction(signal, &action, nullptr) != 0) return make_error("cannot handle signal " + std::to_string(signal));
  }
  return {};
}

Result<std::vector<CrashRecord>> take_crash_records(const std::string& db_path) {
  std::string path = crash_record_path(db_path);
  std::vector<CrashRecord> records;
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return records;
  std::ifstream file(path);
  std::string word, job, signal, stage;
  for (std::string line; std::getline(file, line);) {
    std::istringstream fields(line);
    stage.clear();
    if (!(fields >> word >> job >> signal) || word != "crash") continue;
    fields >> stage;
    int64_t job_id = 0, signal_number = 0;
    if (!parse_int64(job, job_id) || !parse_int64(signal, signal_number)) continue;
    records.push_back({job_id, static_cast<int>(signal_number), stage});
  }
  file.close();
  if (!std::filesystem::remove(path, error) && error) return make_error("cannot remove " + path + ": " + error.message());
  return records;
}

std::string fatal_signal_name(int signal) {
  switch (signal) {
    case SIGSEGV: return "sigsegv";
    case SIGBUS: return "sigbus";
    case SIGFPE: return "sigfpe";
    case SIGILL: return "sigill";
    case SIGABRT: return "sigabrt";
    default: return "signal " + std::to_string(signal);
  }
}

}  // namespace tailforge
