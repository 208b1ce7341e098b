// The daemon's memory over a long unbounded run of the embedded default: spawns
// `tailforge daemon --cycles 0` on a fresh database, samples its VmRSS, and prints the RSS at the
// start and at the end, the maximum, and end/start against the target (within 10%). The start is
// what the target names, the RSS after the first cycle; --start-by S starts at S seconds instead
// when no cycle has finished by then (for configurations whose first cycle takes hours).
// RSS at one instant is the retained memory plus whatever the two running jobs hold at that
// moment (tool output, compiled executables, corpus texts), which moves it by up to ~20 MiB
// from one sample to the next. So start and end are read off the least-squares line through
// every sample from the start point on, which is what decides PASS; the floor and median of a
// window at each end, and the first and last single samples, are printed beside it. The whole
// trace (total, anonymous and file-backed) goes to rss.csv in the run's folder (kept with --keep), and the fitted
// line of each part says which one grows. Ends the daemon with SIGTERM, then
// prints the database and artifact growth per verified sample.
// Usage: soak [--minutes 30] [--samples N (daemon.samples_per_cycle; default: the embedded
//        default)] [--interval 5] [--window 300] [--start-by S] [--tailforge PATH] [--keep]
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_support.h"
#include "bench/daemon_process.h"
#include "store/cache.h"
#include "store/cycles.h"
#include "store/retention.h"
#include "store/status.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const char* const kUsage =
    "soak [--minutes M] [--samples N] [--interval S] [--window S] [--start-by S] [--tailforge PATH] [--keep]";

struct SoakOptions {
  double minutes = 30;
  int samples = 0;  // 0: the embedded default
  double interval_seconds = 5;
  double window_seconds = 300;
  double start_by_seconds = 0;  // 0: wait for the first cycle, however long it takes
  std::string tailforge;
  bool keep = false;
};

std::optional<SoakOptions> parse_options(int argc, char** argv) {
  SoakOptions options;
  options.tailforge = default_tailforge_binary();
  bool ok = parse_bench_flags(
      argc, argv,
      {{"--minutes", [&](const std::string& value) { options.minutes = std::atof(value.c_str()); }},
       {"--samples", [&](const std::string& value) { options.samples = std::atoi(value.c_str()); }},
       {"--interval",
        [&](const std::string& value) { options.interval_seconds = std::max(0.5, std::atof(value.c_str())); }},
       {"--window",
        [&](const std::string& value) { options.window_seconds = std::max(0.0, std::atof(value.c_str())); }},
       {"--start-by", [&](const std::string& value) { options.start_by_seconds = std::atof(value.c_str()); }},
       {"--tailforge", [&](const std::string& value) { options.tailforge = value; }}},
      options.keep);
  if (!ok) return std::nullopt;
  return options;
}

// The resident memory of `pid` in KiB, in all and split into anonymous memory (heaps, SQLite's
// caches) and file pages (the binary's code as it is touched, shared libraries); zeros when the
// process is gone.
struct Resident {
  int64_t total_kb = 0, anon_kb = 0, file_kb = 0;
};

Resident resident_kb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  Resident resident;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) resident.total_kb = std::atoll(line.c_str() + 6);
    if (line.rfind("RssAnon:", 0) == 0) resident.anon_kb = std::atoll(line.c_str() + 8);
    if (line.rfind("RssFile:", 0) == 0) resident.file_kb = std::atoll(line.c_str() + 8);
  }
  return resident;
}

// True when the database has a finished cycle (opened fresh each time: the daemon writes it).
bool first_cycle_finished(const std::string& db_path) {
  if (!fs::exists(db_path)) return false;
  Result<Database> db = Database::open(db_path);
  if (!db) return false;
  Result<std::optional<CycleRecord>> first = find_cycle(*db, 1);
  return first && first->has_value() && (*first)->finished_ms.has_value();
}

double mib(int64_t kb) { return kb / 1024.0; }

struct RssSample {
  double at_seconds;
  int64_t kb;
};

std::vector<RssSample> part_of(const std::vector<RssSample>& totals, const std::vector<Resident>& parts,
                               int64_t Resident::*field) {
  std::vector<RssSample> trace;
  for (size_t i = 0; i < totals.size() && i < parts.size(); ++i) trace.push_back({totals[i].at_seconds, parts[i].*field});
  return trace;
}

// The least-squares line through the samples, read at `from` and `to` seconds (KiB).
std::pair<double, double> fitted_line(const std::vector<RssSample>& samples, double from, double to) {
  double n = static_cast<double>(samples.size()), mean_t = 0, mean_kb = 0;
  for (const RssSample& sample : samples) {
    mean_t += sample.at_seconds / n;
    mean_kb += static_cast<double>(sample.kb) / n;
  }
  double covariance = 0, variance = 0;
  for (const RssSample& sample : samples) {
    covariance += (sample.at_seconds - mean_t) * (static_cast<double>(sample.kb) - mean_kb);
    variance += (sample.at_seconds - mean_t) * (sample.at_seconds - mean_t);
  }
  double slope = variance > 0 ? covariance / variance : 0;
  return {mean_kb + slope * (from - mean_t), mean_kb + slope * (to - mean_t)};
}

struct WindowFigures {
  int64_t floor_kb = 0;
  int64_t median_kb = 0;
};

// Floor and median of the samples taken in [from, to] seconds.
WindowFigures window_figures(const std::vector<RssSample>& samples, double from, double to) {
  std::vector<int64_t> in_window;
  for (const RssSample& sample : samples) {
    if (sample.at_seconds >= from && sample.at_seconds <= to) in_window.push_back(sample.kb);
  }
  if (in_window.empty()) return {};
  std::sort(in_window.begin(), in_window.end());
  return {in_window.front(), in_window[in_window.size() / 2]};
}

using Clock = std::chrono::steady_clock;

// The daemon's resident memory, sampled every interval until the soak's minutes are up or the
// daemon exits: from the start point (the first finished cycle, or the start-by time) on.
struct RssTrace {
  std::vector<RssSample> trace;  // every sample from the start point on
  std::vector<Resident> parts;   // the same samples' anonymous and file parts
  int64_t start_rss = 0, end_rss = 0, max_rss = 0;
  double start_at = 0;
  std::string start_when;
  bool exited_early = false;
  int status = 0;  // the daemon's wait status when it exited early
};

RssTrace trace_daemon(pid_t pid, const SoakOptions& options, const std::string& db_path, Clock::time_point started) {
  RssTrace out;
  double next_trace = 60;
  while (seconds_since(started) < options.minutes * 60) {
    std::this_thread::sleep_for(std::chrono::duration<double>(options.interval_seconds));
    if (waitpid(pid, &out.status, WNOHANG) == pid) {
      out.exited_early = true;
      break;
    }
    Resident resident = resident_kb(pid);
    int64_t rss = resident.total_kb;
    if (rss == 0) continue;
    out.end_rss = rss;
    if (out.start_rss == 0) {
      if (first_cycle_finished(db_path)) {
        out.start_when = "after the first cycle finished";
      } else if (options.start_by_seconds > 0 && seconds_since(started) >= options.start_by_seconds) {
        out.start_when = "at the start-by time (no cycle had finished yet)";
      }
      if (!out.start_when.empty()) {
        out.start_rss = rss;
        out.start_at = seconds_since(started);
        std::printf("start RSS %.1f MiB taken at %.0f s, %s\n", mib(rss), out.start_at, out.start_when.c_str());
        std::fflush(stdout);
      }
    }
    if (out.start_rss != 0) {
      out.trace.push_back({seconds_since(started), rss});
      out.parts.push_back(resident);
      out.max_rss = std::max(out.max_rss, rss);
    }
    if (seconds_since(started) >= next_trace) {
      std::printf("  %5.1f min  RSS %.1f MiB\n", seconds_since(started) / 60, mib(rss));
      std::fflush(stdout);
      next_trace += 60;
    }
  }
  return out;
}

// SIGTERM, then up to 120 s for the daemon to drain and exit (then SIGKILL); the seconds it took.
double stop_daemon(pid_t pid, int& status) {
  kill(pid, SIGTERM);
  auto term_at = Clock::now();
  while (waitpid(pid, &status, WNOHANG) != pid) {
    if (Clock::now() - term_at > std::chrono::seconds(120)) {
      std::printf("daemon still running 120 s after SIGTERM: SIGKILL\n");
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return seconds_since(term_at);
}

// Cycles and samples from the store, and what a weekend costs on disk: the database file (with
// its WAL) and the artifacts in it.
void print_store_figures(const std::string& db_path) {
  int64_t cycles_done = 0, cycles = 0, verified = 0, samples = 0, stored_artifact_bytes = 0, compile_cache_bytes = 0;
  if (Result<Database> db = Database::open(db_path); db) {
    if (Result<StatusSummary> summary = query_status(*db); summary) {
      cycles = summary->cycles;
      verified = summary->verified;
      samples = summary->samples;
    }
    if (Result<int64_t> bytes = artifact_bytes(*db); bytes) stored_artifact_bytes = *bytes;
    if (Result<int64_t> bytes = cache_bytes(*db, "compile"); bytes) compile_cache_bytes = *bytes;
    if (Result<std::vector<CycleRecord>> list = list_cycles(*db, 1000000); list) {
      cycles_done = std::count_if(list->begin(), list->end(), [](const CycleRecord& c) { return c.state == "done"; });
    }
  }
  std::printf("cycles: %lld started, %lld finished; samples %lld, verified %lld\n", static_cast<long long>(cycles),
              static_cast<long long>(cycles_done), static_cast<long long>(samples), static_cast<long long>(verified));
  std::error_code ignored;
  uintmax_t file_bytes = fs::file_size(db_path, ignored);
  if (fs::exists(db_path + "-wal")) file_bytes += fs::file_size(db_path + "-wal", ignored);
  if (verified > 0) {
    std::printf("growth per verified sample: database %.1f KiB (%.1f MiB in all), artifacts %.1f KiB (%.1f MiB)\n",
                static_cast<double>(file_bytes) / 1024.0 / static_cast<double>(verified), file_bytes / 1048576.0,
                static_cast<double>(stored_artifact_bytes) / 1024.0 / static_cast<double>(verified),
                stored_artifact_bytes / 1048576.0);
    std::printf("  of the database: compile cache %.1f MiB (bounded by verifier.cache_max_mb), artifacts %.1f MiB "
                "(bounded by store.artifact_cap_mb)\n", compile_cache_bytes / 1048576.0, stored_artifact_bytes / 1048576.0);
  }
}

// The trace as rss.csv in the run's folder, then the RSS figures: single samples, the start and
// end windows' floors and medians, and the line fitted through the samples, against the target.
void print_rss_figures(const RssTrace& rss, double window_seconds, const fs::path& dir) {
  const std::vector<RssSample>& trace = rss.trace;
  double start_at = rss.start_at;
  double end_at = trace.back().at_seconds;
  double window = std::min(window_seconds, (end_at - start_at) / 2);
  WindowFigures start = window_figures(trace, start_at, start_at + window);
  WindowFigures end = window_figures(trace, end_at - window, end_at);
  if (std::FILE* csv = std::fopen((dir / "rss.csv").c_str(), "w")) {
    std::fprintf(csv, "seconds,rss_kb,anon_kb,file_kb\n");
    for (size_t i = 0; i < trace.size(); ++i) {
      std::fprintf(csv, "%.1f,%lld,%lld,%lld\n", trace[i].at_seconds, static_cast<long long>(trace[i].kb),
                   static_cast<long long>(rss.parts[i].anon_kb), static_cast<long long>(rss.parts[i].file_kb));
    }
    std::fclose(csv);
  }
  std::printf("single samples: first %.1f MiB (at %.0f s, %s), last %.1f MiB (at %.0f s, before SIGTERM), max %.1f MiB\n",
              mib(rss.start_rss), start_at, rss.start_when.c_str(), mib(rss.end_rss), end_at, mib(rss.max_rss));
  std::printf("start window %.0f-%.0f s: floor %.1f MiB, median %.1f MiB\n", start_at, start_at + window,
              mib(start.floor_kb), mib(start.median_kb));
  std::printf("end window   %.0f-%.0f s: floor %.1f MiB, median %.1f MiB\n", end_at - window, end_at,
              mib(end.floor_kb), mib(end.median_kb));
  auto [fitted_start, fitted_end] = fitted_line(trace, start_at, end_at);
  std::printf("fitted line through %zu samples: %.1f MiB at %.0f s, %.1f MiB at %.0f s (%+.3f MiB per minute)\n",
              trace.size(), fitted_start / 1024, start_at, fitted_end / 1024, end_at,
              (fitted_end - fitted_start) / 1024 / ((end_at - start_at) / 60));
  for (auto [name, field] : {std::pair{"anonymous", &Resident::anon_kb}, std::pair{"file-backed", &Resident::file_kb}}) {
    auto [part_start, part_end] = fitted_line(part_of(trace, rss.parts, field), start_at, end_at);
    std::printf("  of which %-11s %.1f MiB -> %.1f MiB (%+.3f MiB per minute)\n", name, part_start / 1024, part_end / 1024,
                (part_end - part_start) / 1024 / ((end_at - start_at) / 60));
  }
  std::printf("end/start ratio (floors of the windows): %.3f\n", static_cast<double>(end.floor_kb) / start.floor_kb);
  std::printf("end/start ratio (medians of the windows): %.3f\n", static_cast<double>(end.median_kb) / start.median_kb);
  double ratio = fitted_end / fitted_start;
  std::printf("end/start ratio (fitted line): %.3f   target <= 1.10   %s\n", ratio, ratio <= 1.10 ? "PASS" : "BELOW");
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<SoakOptions> options = parse_options(argc, argv);
  if (!options) return bench_usage(kUsage);
  fs::path dir = bench_run_dir("soak");
  if (!enter_run_dir(dir, options->tailforge)) return 1;
  std::string db_path = (dir / "soak.db").string();
  std::vector<std::string> args = {options->tailforge, "daemon", "--cycles", "0", "--db", db_path, "--no-progress"};
  std::string config_note = "the embedded default configuration";
  if (options->samples > 0) {
    std::string config_path = (dir / "config.json").string();
    std::ofstream(config_path) << nlohmann::json{{"daemon", {{"samples_per_cycle", options->samples}}}}.dump();
    args.insert(args.end(), {"--config", config_path});
    config_note = "the embedded default with daemon.samples_per_cycle = " + std::to_string(options->samples);
  }
  std::printf("soak: %.1f minutes of `tailforge daemon --cycles 0` on %s\n", options->minutes, config_note.c_str());
  std::fflush(stdout);

  auto started = Clock::now();
  pid_t pid = spawn_daemon(args, (dir / "daemon.log").string());
  if (pid < 0) {
    std::fprintf(stderr, "cannot start %s\n", options->tailforge.c_str());
    return 1;
  }
  RssTrace rss = trace_daemon(pid, *options, db_path, started);
  int status = rss.status;
  double drain_seconds = rss.exited_early ? 0 : stop_daemon(pid, status);
  double run_seconds = seconds_since(started);
  bool exited_early = rss.exited_early;
  std::printf("daemon %s after %.0f s%s; exit %s %d\n", exited_early ? "EXITED EARLY" : "stopped by SIGTERM", run_seconds,
              exited_early ? "" : (", drained in " + std::to_string(static_cast<int>(drain_seconds + 0.5)) + " s").c_str(),
              WIFSIGNALED(status) ? "signal" : "status", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  print_store_figures(db_path);
  if (rss.start_rss == 0 || rss.end_rss == 0) {
    std::printf("no RSS figures: the daemon did not run long enough (see %s/daemon.log)\n", dir.c_str());
    return 1;
  }
  print_rss_figures(rss, options->window_seconds, dir);
  leave_run_dir(dir, options->keep);
  return exited_early ? 1 : 0;
}
