// How much of the CUDA API that people's code uses the verified corpus covers, cycle by cycle:
// `tailforge daemon --cycles N` on the embedded default (or a given config), then, after each
// cycle, of the API names (agents/api_table.h) that two or more files of the given trees use, the
// share some verified cuda2hip sample uses, and the share of all those trees' name uses whose name
// a verified sample uses. The trees are only read: nothing is imported into the run's store, so the
// figures say what the loop grows on its own; --import imports them first (a user's prior).
// With --baseline PATH a second tailforge (another revision) runs the same and the ratios of the
// two coverages are printed; with --db PATH an existing store is measured and nothing runs.
// Usage: coverage --tree DIR [--tree DIR ...] [--cycles 3] [--config FILE] [--tailforge PATH]
//                 [--baseline PATH] [--db PATH] [--import yes] [--keep]
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/api_table.h"
#include "bench/daemon_process.h"
#include "store/api_uses.h"
#include "store/cycles.h"
#include "synth/api_coverage.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

struct Trees {
  std::vector<std::string> names;
  std::map<std::string, ApiNameCount> counts;  // summed over the trees
  int64_t files = 0;
  int64_t shared = 0;  // names in two or more files
  int64_t uses = 0;
};

struct CyclePoint {
  int64_t cycle = 0;
  int64_t verified = 0;
  int64_t names = 0;  // names any verified sample uses
  int64_t covered_shared = 0;
  int64_t covered_uses = 0;
};

// Coverage of the trees' names by the store's verified samples after each cycle.
std::optional<std::vector<CyclePoint>> measure(const std::string& db_path, const ApiTable& table, const Trees& trees) {
  Result<Database> db = Database::open(db_path);
  if (!db) {
    std::fprintf(stderr, "%s\n", db.message().c_str());
    return std::nullopt;
  }
  if (Result<int64_t> counted = count_sample_api(*db, table); !counted) {
    std::fprintf(stderr, "%s\n", counted.message().c_str());
    return std::nullopt;
  }
  Result<std::vector<CycleRecord>> cycles = list_cycles(*db, 100000);
  if (!cycles) return std::nullopt;
  std::vector<int64_t> ids;
  for (const CycleRecord& cycle : *cycles) ids.push_back(cycle.id);
  std::sort(ids.begin(), ids.end());
  std::vector<CyclePoint> points;
  for (int64_t id : ids) {
    Result<std::map<std::string, int64_t>> used = verified_samples_by_identifier(*db, "cuda2hip", id);
    Result<int64_t> verified = verified_samples_up_to(*db, "cuda2hip", id);
    if (!used || !verified) return std::nullopt;
    CyclePoint point{id, *verified, static_cast<int64_t>(used->size()), 0, 0};
    for (const auto& [name, count] : trees.counts) {
      if (!used->count(name)) continue;
      point.covered_shared += count.files >= 2;
      point.covered_uses += count.uses;
    }
    points.push_back(point);
  }
  return points;
}

std::optional<std::vector<CyclePoint>> run_and_measure(const std::string& tailforge, const fs::path& dir,
                                                       const std::string& config, int cycles,
                                                       const std::vector<std::string>& imports, const ApiTable& table,
                                                       const Trees& trees) {
  fs::create_directories(dir);
  std::string db = (dir / "coverage.db").string();
  for (const std::string& tree : imports) {
    std::vector<std::string> args = {tailforge, "import", tree, "--db", db, "--no-progress"};
    if (!config.empty()) args.insert(args.end(), {"--config", config});
    FinishedRun imported = run_daemon_to_end(args, (dir / "import.log").string());
    if (imported.status != 0) {
      std::fprintf(stderr, "import of %s failed (%d): see %s\n", tree.c_str(), imported.status, (dir / "import.log").c_str());
      return std::nullopt;
    }
  }
  std::vector<std::string> args = {tailforge, "daemon", "--cycles", std::to_string(cycles), "--db", db, "--no-progress"};
  if (!config.empty()) args.insert(args.end(), {"--config", config});
  std::printf("running %s daemon --cycles %d ...\n", tailforge.c_str(), cycles);
  std::fflush(stdout);
  FinishedRun run = run_daemon_to_end(args, (dir / "daemon.log").string());
  if (run.status != 0) {
    std::fprintf(stderr, "the daemon exited %d: see %s\n", run.status, (dir / "daemon.log").c_str());
    return std::nullopt;
  }
  std::printf("  %.0f s\n", run.seconds);
  return measure(db, table, trees);
}

double ratio(int64_t part, int64_t whole) { return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0; }

void print_points(const std::string& label, const std::vector<CyclePoint>& points, const Trees& trees) {
  std::printf("\n%s\n  cycle  verified  names used  shared names covered  uses covered\n", label.c_str());
  for (const CyclePoint& p : points) {
    std::printf("  %5lld  %8lld  %10lld  %6lld of %-4lld %5.3f  %5.3f\n", static_cast<long long>(p.cycle),
                static_cast<long long>(p.verified), static_cast<long long>(p.names),
                static_cast<long long>(p.covered_shared), static_cast<long long>(trees.shared),
                ratio(p.covered_shared, trees.shared), ratio(p.covered_uses, trees.uses));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> tree_paths;
  std::string config, db_path, baseline, import = "no";
  std::string tailforge = default_tailforge_binary();
  int cycles = 3;
  bool keep = false;
  bool parsed = parse_bench_flags(argc, argv,
                                  {{"--tree", [&](const std::string& v) { tree_paths.push_back(v); }},
                                   {"--cycles", [&](const std::string& v) { cycles = std::max(1, std::atoi(v.c_str())); }},
                                   {"--config", [&](const std::string& v) { config = fs::absolute(v).string(); }},
                                   {"--tailforge", [&](const std::string& v) { tailforge = fs::absolute(v).string(); }},
                                   {"--baseline", [&](const std::string& v) { baseline = fs::absolute(v).string(); }},
                                   {"--db", [&](const std::string& v) { db_path = fs::absolute(v).string(); }},
                                   {"--import", [&](const std::string& v) { import = v; }}},
                                  keep);
  if (!parsed || tree_paths.empty()) {
    std::fprintf(stderr,
                 "usage: coverage --tree DIR [--tree DIR ...] [--cycles 3] [--config FILE] [--tailforge PATH]\n"
                 "                [--baseline PATH] [--db PATH] [--import yes] [--keep]\n");
    return 2;
  }
  Result<const ApiTable*> table = load_default_api_table();
  if (!table) {
    std::fprintf(stderr, "%s\n", table.message().c_str());
    return 1;
  }
  Trees trees;
  std::vector<std::string> imports;
  for (std::string& path : tree_paths) {
    path = fs::absolute(path).string();
    Result<TreeApiCount> count = count_tree_api_uses(path, **table);
    if (!count) {
      std::fprintf(stderr, "%s\n", count.message().c_str());
      return 1;
    }
    trees.names.push_back(fs::path(path).filename().string() + " (" + std::to_string(count->files) + " files)");
    trees.files += count->files;
    for (const auto& [name, n] : count->names) {
      trees.counts[name].files += n.files;
      trees.counts[name].uses += n.uses;
    }
    if (import == "yes") imports.push_back(path);
  }
  for (const auto& [name, n] : trees.counts) {
    trees.shared += n.files >= 2;
    trees.uses += n.uses;
  }
  std::printf("trees:");
  for (const std::string& name : trees.names) std::printf(" %s", name.c_str());
  std::printf("\n  %zu API names, %lld of them in two or more files; %lld uses\n", trees.counts.size(),
              static_cast<long long>(trees.shared), static_cast<long long>(trees.uses));

  if (!db_path.empty()) {
    std::optional<std::vector<CyclePoint>> points = measure(db_path, **table, trees);
    if (!points) return 1;
    print_points("store " + db_path, *points, trees);
    return 0;
  }
  fs::path dir = fs::temp_directory_path() / ("tailforge-coverage-" + std::to_string(getpid()));
  if (!enter_run_dir(dir, tailforge)) return 1;
  std::optional<std::vector<CyclePoint>> ours = run_and_measure(tailforge, dir / "ours", config, cycles, imports, **table, trees);
  if (!ours || ours->empty()) return 1;
  print_points(tailforge, *ours, trees);
  const CyclePoint& last = ours->back();
  std::printf("\nafter %d cycles: shared names covered %.3f (%lld of %lld), uses covered %.3f\n", cycles,
              ratio(last.covered_shared, trees.shared), static_cast<long long>(last.covered_shared),
              static_cast<long long>(trees.shared), ratio(last.covered_uses, trees.uses));
  if (!baseline.empty()) {
    std::optional<std::vector<CyclePoint>> base =
        run_and_measure(baseline, dir / "baseline", config, cycles, imports, **table, trees);
    if (!base || base->empty()) return 1;
    print_points(baseline + " (baseline)", *base, trees);
    const CyclePoint& b = base->back();
    std::printf("\nratio to the baseline: shared names covered %.2fx (%lld vs %lld), uses covered %.2fx\n",
                ratio(last.covered_shared, std::max<int64_t>(1, b.covered_shared)),
                static_cast<long long>(last.covered_shared), static_cast<long long>(b.covered_shared),
                ratio(last.covered_uses, std::max<int64_t>(1, b.covered_uses)));
  }
  leave_run_dir(dir, keep);
  return 0;
}
