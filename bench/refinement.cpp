// Does the refinement loop make the model better where it failed? Runs `tailforge daemon
// --cycles N` (default 5) of the embedded default (built-in generator and translator, the
// offline baseline learner as the retrained model) on a fresh database, then prints, from what
// the daemon stored, one row per model version:
//   version, parent, training snapshot size, accuracy on the evaluation set (at the newest set
//   version it has evaluated completely), accuracy against its parent on the newest set version
//   both evaluated completely, and the accuracy of parent and child on each tail that triggered
//   its retraining (a tail the parent failed, synthesized up since).
// Exit status 0 when there are at least 3 versions and, for every version retrained for a tail,
// the tail accuracy rose from parent to child.
// Usage: refinement [--cycles 5] [--config FILE] [--tailforge PATH] [--db PATH (reuse a finished
//        run)] [--keep]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "bench/daemon_process.h"
#include "store/status.h"
#include "synth/model_report.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const char* const kUsage = "refinement [--cycles N] [--config FILE] [--tailforge PATH] [--db PATH] [--keep]";

std::optional<DaemonBenchOptions> parse_options(int argc, char** argv) {
  DaemonBenchOptions options;
  if (!parse_bench_flags(argc, argv, daemon_bench_flags(options), options.keep)) return std::nullopt;
  return options;
}

std::string percent(int64_t ok, int64_t items) {
  if (items == 0) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", accuracy(ok, items));
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<DaemonBenchOptions> options = parse_options(argc, argv);
  if (!options) return bench_usage(kUsage);
  fs::path dir = bench_run_dir("refinement");
  std::optional<Database> db = open_daemon_bench_store(*options, dir, "refinement.db", [&](const std::string& db_path) {
    std::vector<std::string> config_args;
    if (!options->config.empty()) config_args = {"--config", options->config};
    std::string note = "the embedded default" + (options->config.empty() ? "" : " with " + options->config);
    return run_daemon_cycles("refinement", *options, db_path, config_args, note, dir);
  });
  if (!db) return 1;
  if (Result<StatusSummary> summary = query_status(*db); summary) {
    std::printf("store: %lld cycles, %lld samples, %lld verified, %lld retrain events\n",
                static_cast<long long>(summary->cycles), static_cast<long long>(summary->samples),
                static_cast<long long>(summary->verified), static_cast<long long>(summary->retrain_events));
  }
  Result<ModelsReport> report = models_report(*db, "cuda2hip");
  if (!report) {
    std::fprintf(stderr, "%s\n", report.message().c_str());
    return 1;
  }
  std::printf("evaluation set v%lld, %lld items\n\n", static_cast<long long>(report->eval_version),
              static_cast<long long>(report->eval_items));
  std::printf("%-14s %-14s %8s %10s %18s   %s\n", "version", "parent", "snapshot", "accuracy", "vs parent",
              "tail that triggered it: parent -> child");
  int retrained_for_tails = 0, tails_rose = 0;
  for (const ModelSummary& m : report->models) {
    std::string own = percent(m.ok, m.items) + " v" + std::to_string(m.version);
    std::string versus = m.compared_version ? percent(m.parent_ok, m.compared_items) + "->" +
                                                  percent(m.compared_ok, m.compared_items)
                                            : "-";
    std::printf("%-14s %-14s %8lld %10s %18s", m.model.name.c_str(), m.parent.value_or("-").c_str(),
                static_cast<long long>(m.snapshot_train_samples), own.c_str(), versus.c_str());
    if (m.tails.empty()) std::printf("   -");
    bool all_rose = true;
    for (const TailAccuracy& t : m.tails) {
      bool rose = t.items > 0 && t.ok > t.parent_ok;
      all_rose = all_rose && rose;
      std::printf("   %s/%s %s->%s (%lld items)%s", t.dimension.c_str(), t.name.c_str(),
                  percent(t.parent_ok, t.items).c_str(), percent(t.ok, t.items).c_str(),
                  static_cast<long long>(t.items), rose ? "" : " DID NOT RISE");
    }
    if (!m.tails.empty()) {
      ++retrained_for_tails;
      tails_rose += all_rose;
    }
    std::printf("\n");
  }
  bool enough = report->models.size() >= 3;
  std::printf("\n%zu versions (want >= 3); %d of %d versions retrained for a tail gained on all of their tails\n",
              report->models.size(), tails_rose, retrained_for_tails);
  if (options->db.empty()) leave_run_dir(dir, options->keep);
  return enough && retrained_for_tails > 0 && tails_rose == retrained_for_tails ? 0 : 1;
}
