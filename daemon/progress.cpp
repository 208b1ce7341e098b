#include "daemon/progress.h"

#include <unistd.h>

#include <cstdio>
#include <mutex>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "store/corpus.h"
#include "store/queue.h"

namespace tailforge {

namespace {

// A stderr sink that keeps the status line as the terminal's last line: each log message
// clears it, prints, and redraws it.
class StatusLineSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  void set_status(const std::string& status) {
    std::lock_guard lock(mutex_);
    status_ = status;
    std::fprintf(stderr, "\r\033[K%s", status_.c_str());
    std::fflush(stderr);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(message, formatted);
    std::fprintf(stderr, "\r\033[K%.*s%s", static_cast<int>(formatted.size()), formatted.data(), status_.c_str());
    std::fflush(stderr);
  }
  void flush_() override { std::fflush(stderr); }

 private:
  std::string status_;
};

std::shared_ptr<StatusLineSink> g_status_sink;

}  // namespace

std::string format_duration(double seconds) {
  long total = static_cast<long>(seconds + 0.5);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof(text), "%ldh%02ldm", total / 3600, (total % 3600) / 60);
  } else if (total >= 60) {
    std::snprintf(text, sizeof(text), "%ldm%02lds", total / 60, total % 60);
  } else {
    std::snprintf(text, sizeof(text), "%lds", total);
  }
  return text;
}

ProgressLine::ProgressLine(bool enabled, int64_t cycles_to_run)
    : enabled_(enabled), terminal_(enabled && isatty(STDERR_FILENO)), cycles_to_run_(cycles_to_run) {
  if (terminal_) {
    g_status_sink = std::make_shared<StatusLineSink>();
    g_status_sink->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
    spdlog::default_logger()->sinks().clear();
    spdlog::default_logger()->sinks().push_back(g_status_sink);
  }
}

ProgressLine::~ProgressLine() { finish(); }

void ProgressLine::cycle_finished(const CycleRecord&) { ++cycles_finished_; }

std::string ProgressLine::update(Database& db, std::optional<int64_t> cycle, int64_t cycles_run) {
  Result<int64_t> verified = verified_count_all(db);
  int64_t verified_now = verified ? *verified : 0;
  if (!verified_at_start_) verified_at_start_ = verified_now;
  double elapsed = seconds_since(started_);
  double per_minute = elapsed > 0 ? (verified_now - *verified_at_start_) * 60.0 / elapsed : 0;

  JobQueue queue(db);
  int64_t depth = 0;
  if (Result<std::map<std::string, int64_t>> counts = queue.counts_by_state(); counts) {
    depth = (*counts)["pending"] + (*counts)["leased"];
  }

  std::string line;
  double cycle_fraction = 0;
  if (cycle) {
    CycleRecord record;
    record.id = *cycle;
    (void)count_cycle_samples(db, record);
    int64_t made = record.generated + record.synthesized;
    int64_t settled = record.verified + record.failed;
    cycle_fraction = made > 0 ? static_cast<double>(settled) / static_cast<double>(made) : 0;
    line = "cycle " + std::to_string(*cycle);
    if (cycles_to_run_ > 0) line += " (" + std::to_string(cycles_run) + "/" + std::to_string(cycles_to_run_) + ")";
    line += " | verified " + std::to_string(record.verified) + ", failed " + std::to_string(record.failed) + " of " +
            std::to_string(made);
  } else {
    line = "between cycles";
  }
  char rate[64];
  std::snprintf(rate, sizeof(rate), " | queue %lld | %.1f verified/min", static_cast<long long>(depth), per_minute);
  line += rate;
  if (cycles_to_run_ > 0) {
    double done = (static_cast<double>(cycles_finished_) + cycle_fraction) / static_cast<double>(cycles_to_run_);
    if (done > 0.01) line += " | ETA " + format_duration(elapsed * (1 - done) / done);
  }

  if (!enabled_) return line;
  if (terminal_) {
    g_status_sink->set_status(line);
  } else if (std::chrono::steady_clock::now() - last_logged_ >= std::chrono::seconds(30)) {
    last_logged_ = std::chrono::steady_clock::now();
    spdlog::info("progress: {}", line);
  }
  return line;
}

void ProgressLine::finish() {
  if (terminal_ && g_status_sink) {
    g_status_sink->set_status("");
    terminal_ = false;
  }
}

}  // namespace tailforge
