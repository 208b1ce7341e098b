// Small pieces several benches share (each bench is an executable of its own, so this is
// header-only): the usage error and run folder, a fresh store in the temp folder, a failure row
// of a sample, and the flags, daemon run and store of the benches that drive `tailforge daemon`
// for some cycles. Wall-clock seconds (seconds_since) come with base/clock.h.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "bench/daemon_process.h"
#include "store/database.h"
#include "store/failures.h"
#include "store/samples.h"

namespace tailforge {

// Prints "usage: TEXT" and returns the exit status of a usage error.
inline int bench_usage(const std::string& text) {
  std::fprintf(stderr, "usage: %s\n", text.c_str());
  return 2;
}

// This run's folder for `name` in the temp folder: tf-NAME-PID.
inline std::filesystem::path bench_run_dir(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("tf-" + name + "-" + std::to_string(getpid()));
}

// Removes the store at `path` with its WAL and shared-memory files.
inline void remove_bench_database(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// `file_name` in the temp folder, with any store left there by an earlier run removed.
inline std::string fresh_bench_database_path(const std::string& file_name) {
  std::string path = (std::filesystem::temp_directory_path() / file_name).string();
  remove_bench_database(path);
  return path;
}

// A fresh store at `file_name` in the temp folder (see fresh_bench_database_path); when it
// cannot be opened, the message (after `label`) goes to stderr.
inline Result<Database> open_fresh_bench_database(const std::string& file_name, const std::string& label) {
  Result<Database> opened = Database::open(fresh_bench_database_path(file_name));
  if (!opened) std::fprintf(stderr, "%s%s\n", label.c_str(), opened.message().c_str());
  return opened;
}

// 256 MiB of page cache, so that one big transaction of a bench stays in memory.
inline void use_big_cache(Database& db) { (void)db.exec("PRAGMA cache_size = -262144"); }

// A failure of `sample` (stored as `sample_id`) at `stage`, with the sample's track, origin and
// domain.
inline FailureRecord sample_failure(const Sample& sample, const std::string& sample_id, const std::string& stage,
                                    const std::string& category, const std::string& message, int64_t created_ms) {
  FailureRecord failure;
  failure.sample_id = sample_id;
  failure.stage = stage;
  failure.category = category;
  failure.message = message;
  failure.track = sample.track;
  failure.origin = sample.origin;
  failure.domain = sample.domain;
  failure.created_ms = created_ms;
  return failure;
}

// The options of a bench that runs `tailforge daemon --cycles N` (or reads a store it made).
struct DaemonBenchOptions {
  int cycles = 5;
  std::string config;
  std::string tailforge = default_tailforge_binary();
  std::string db;  // a store to read instead of running the daemon
  bool keep = false;
};

// --cycles N, --config FILE, --tailforge PATH and --db PATH, setting `options`.
inline std::vector<ValueFlag> daemon_bench_flags(DaemonBenchOptions& options) {
  DaemonBenchOptions* set = &options;
  return {{"--cycles", [set](const std::string& value) { set->cycles = std::max(1, std::atoi(value.c_str())); }},
          {"--config", [set](const std::string& value) { set->config = std::filesystem::absolute(value).string(); }},
          {"--tailforge", [set](const std::string& value) { set->tailforge = value; }},
          {"--db", [set](const std::string& value) { set->db = value; }}};
}

// Runs `tailforge daemon --cycles N --db DB --no-progress` with `extra_args` to its end, its log
// in dir/daemon.log, after printing "BENCH: `tailforge daemon --cycles N` on NOTE". False, with a
// message, when it could not start or did not exit cleanly.
inline bool run_daemon_cycles(const std::string& bench, const DaemonBenchOptions& options, const std::string& db_path,
                              const std::vector<std::string>& extra_args, const std::string& note,
                              const std::filesystem::path& dir) {
  std::vector<std::string> args = {options.tailforge, "daemon", "--cycles", std::to_string(options.cycles),
                                   "--db", db_path, "--no-progress"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::printf("%s: `tailforge daemon --cycles %d` on %s\n", bench.c_str(), options.cycles, note.c_str());
  std::fflush(stdout);
  std::string log_path = (dir / "daemon.log").string();
  FinishedRun run = run_daemon_to_end(args, log_path);
  if (run.status < 0) {
    std::fprintf(stderr, "cannot start %s\n", options.tailforge.c_str());
    return false;
  }
  std::printf("daemon exited with status %d after %.0f s (log: %s)\n", run.status, run.seconds, log_path.c_str());
  return run.status == 0;
}

// The store a daemon bench reads: --db's when given; otherwise the run folder `dir` is entered
// (relative paths of the configuration, snapshots included, land there) and `run_daemon` fills
// dir/FILE_NAME, given that path. nullopt, with a message, when the run or the opening failed.
inline std::optional<Database> open_daemon_bench_store(const DaemonBenchOptions& options,
                                                       const std::filesystem::path& dir, const std::string& file_name,
                                                       const std::function<bool(const std::string&)>& run_daemon) {
  std::string db_path = options.db;
  if (db_path.empty()) {
    if (!enter_run_dir(dir, options.tailforge)) return std::nullopt;
    db_path = (dir / file_name).string();
    if (!run_daemon(db_path)) return std::nullopt;
  }
  Result<Database> db = Database::open(db_path);
  if (!db) {
    std::fprintf(stderr, "%s\n", db.message().c_str());
    return std::nullopt;
  }
  return std::move(*db);
}

}  // namespace tailforge
