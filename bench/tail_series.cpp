// Does synthesis fill the long tail? Runs `tailforge daemon --cycles N` (default 5) of the
// embedded default on a fresh database, then prints, from what the daemon stored:
//   - each cycle's top tail (rank 1 of its stored tail list) with the numbers behind it, and that
//     tail's share of the verified corpus when the list was made (its "share" number, else the
//     share after the cycle before) and after the cycle, once its synthesized samples verified;
//   - the share of cycle 1's top tail after every cycle.
// Shares count the verified samples that a cycle and the earlier ones made (tailforge tails).
// Usage: tail_series [--cycles 5] [--samples N (daemon.samples_per_cycle)] [--config FILE (instead
//        of --samples)] [--tailforge PATH] [--db PATH (reuse a finished run instead of starting
//        one)] [--keep]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench_support.h"
#include "bench/daemon_process.h"
#include "store/corpus.h"
#include "store/status.h"
#include "synth/tails.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const char* const kUsage =
    "tail_series [--cycles N] [--samples N | --config FILE] [--tailforge PATH] [--db PATH] [--keep]";

struct Options : DaemonBenchOptions {
  int samples = 0;
};

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  std::vector<ValueFlag> flags = daemon_bench_flags(options);
  flags.push_back({"--samples", [&](const std::string& value) { options.samples = std::atoi(value.c_str()); }});
  if (!parse_bench_flags(argc, argv, flags, options.keep)) return std::nullopt;
  if (options.samples > 0 && !options.config.empty()) return std::nullopt;
  return options;
}

// Runs the daemon to the end of its bounded cycles; false when it did not exit cleanly.
bool run_daemon(const Options& options, const fs::path& dir, const std::string& db_path) {
  std::vector<std::string> config_args;
  std::string note = "the embedded default";
  if (options.samples > 0) {
    std::string config_path = (dir / "config.json").string();
    std::ofstream(config_path) << nlohmann::json{{"daemon", {{"samples_per_cycle", options.samples}}}}.dump();
    config_args = {"--config", config_path};
    note += " with daemon.samples_per_cycle = " + std::to_string(options.samples);
  } else if (!options.config.empty()) {
    config_args = {"--config", options.config};
    note += " with " + options.config;
  }
  return run_daemon_cycles("tail_series", options, db_path, config_args, note, dir);
}

// The share after cycle `cycle` in a series; 0 before the first cycle.
double share_after(const std::vector<TailSharePoint>& series, int64_t cycle) {
  double share = 0;
  for (const TailSharePoint& point : series) {
    if (point.cycle_id <= cycle) share = point.share;
  }
  return share;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Options> options = parse_options(argc, argv);
  if (!options) return bench_usage(kUsage);
  fs::path dir = bench_run_dir("tail-series");
  std::optional<Database> db = open_daemon_bench_store(
      *options, dir, "tail_series.db", [&](const std::string& db_path) { return run_daemon(*options, dir, db_path); });
  if (!db) return 1;
  const std::string track = "cuda2hip";
  if (Result<StatusSummary> summary = query_status(*db); summary) {
    std::printf("store: %lld cycles, %lld samples, %lld verified\n\n", static_cast<long long>(summary->cycles),
                static_cast<long long>(summary->samples), static_cast<long long>(summary->verified));
  }

  std::printf("each cycle's top tail, and its share of the verified %s corpus when the tail list was made\n"
              "(before synthesis) and after the cycle\n",
              track.c_str());
  std::printf("  cycle  top tail                          signal          score   before   after\n");
  int rose = 0, measured = 0;
  std::optional<std::pair<std::string, std::string>> first_top;
  for (int64_t cycle = 1; cycle <= options->cycles; ++cycle) {
    Result<std::vector<TailReportRow>> rows = tail_report_rows(*db, cycle);
    if (!rows || rows->empty()) {
      std::printf("  %5lld  (no tail list)\n", static_cast<long long>(cycle));
      continue;
    }
    const TailReportRow& top = rows->front();
    if (!first_top) first_top = std::pair{top.dimension, top.name};
    std::string label = top.dimension + "/" + top.name;
    Result<std::vector<TailSharePoint>> series = tail_share_series(*db, track, top.dimension, top.name);
    if (!series) {
      std::printf("  %5lld  %-33s %-14s %6.3f   (no share series: %s)\n", static_cast<long long>(cycle),
                  label.c_str(), top.signal.c_str(), top.score, series.message().c_str());
      continue;
    }
    nlohmann::json numbers = nlohmann::json::parse(top.numbers, nullptr, false);
    double before = numbers.is_object() && numbers.contains("share") && numbers["share"].is_number()
                        ? numbers["share"].get<double>()
                        : share_after(*series, cycle - 1);
    double after = share_after(*series, cycle);
    ++measured;
    if (after > before) ++rose;
    std::printf("  %5lld  %-33s %-14s %6.3f   %6.3f  %6.3f  %s\n", static_cast<long long>(cycle), label.c_str(),
                top.signal.c_str(), top.score, before, after, after > before ? "rose" : "DID NOT RISE");
    std::printf("         numbers: %s\n", top.numbers.c_str());
  }
  std::printf("the top tail's share rose in %d of %d cycles\n\n", rose, measured);

  if (first_top) {
    Result<std::vector<TailSharePoint>> series = tail_share_series(*db, track, first_top->first, first_top->second);
    if (series) std::printf("%s", format_tail_share_series(track, first_top->first, first_top->second, *series).c_str());
  }
  if (options->db.empty()) leave_run_dir(dir, options->keep);
  return measured > 0 && rose == measured ? 0 : 1;
}
