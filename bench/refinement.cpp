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

#include "bench/daemon_process.h"
#include "store/status.h"
#include "synth/model_report.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

struct Options {
  int cycles = 5;
  std::string config;
  std::string tailforge;
  std::string db;
  bool keep = false;
};

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  options.tailforge = default_tailforge_binary();
  bool ok = parse_bench_flags(
      argc, argv,
      {{"--cycles", [&](const std::string& value) { options.cycles = std::max(1, std::atoi(value.c_str())); }},
       {"--config", [&](const std::string& value) { options.config = fs::absolute(value).string(); }},
       {"--tailforge", [&](const std::string& value) { options.tailforge = value; }},
       {"--db", [&](const std::string& value) { options.db = value; }}},
      options.keep);
  if (!ok) return std::nullopt;
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
  std::optional<Options> options = parse_options(argc, argv);
  if (!options) {
    std::fprintf(stderr, "usage: refinement [--cycles N] [--config FILE] [--tailforge PATH] [--db PATH] [--keep]\n");
    return 2;
  }
  fs::path dir = fs::temp_directory_path() / ("tf-refinement-" + std::to_string(getpid()));
  std::string db_path = options->db;
  if (db_path.empty()) {
    if (!enter_run_dir(dir, options->tailforge)) return 1;  // the snapshots land there
    db_path = (dir / "refinement.db").string();
    std::vector<std::string> args = {options->tailforge, "daemon", "--cycles", std::to_string(options->cycles),
                                     "--db", db_path, "--no-progress"};
    if (!options->config.empty()) args.insert(args.end(), {"--config", options->config});
    std::printf("refinement: `tailforge daemon --cycles %d` on the embedded default%s%s\n", options->cycles,
                options->config.empty() ? "" : " with ", options->config.c_str());
    std::fflush(stdout);
    std::string log_path = (dir / "daemon.log").string();
    FinishedRun run = run_daemon_to_end(args, log_path);
    std::printf("daemon exited with status %d after %.0f s (log: %s)\n", run.status, run.seconds, log_path.c_str());
    if (run.status != 0) return 1;
  }

  Result<Database> db = Database::open(db_path);
  if (!db) {
    std::fprintf(stderr, "%s\n", db.message().c_str());
    return 1;
  }
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
