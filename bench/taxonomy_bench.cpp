// taxonomy_bench: 1,000,000 stored failure rows (125,000 samples x 8 stages, spread over categories,
// tracks, origins, domains and 7 days); prints the bulk insert rate, the time of the whole tree
// (target < 200 ms) and of a filtered trend (target < 500 ms), and each time's ratio to target.
// Failures are counted as distinct (sample, category) pairs at their first stage row, with stage
// rows by stage as detail; the (category, stage, novelty) index answers the whole tree in one pass
// and the covering failure_track_time_novelty index the filtered trend. A day's window (no target)
// shows the cost of counting distinct failed samples under a time filter.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "base/clock.h"
#include "bench/bench_support.h"
#include "store/failures.h"
#include "store/samples.h"

using namespace tailforge;

namespace {

const std::vector<std::string> kStages = {"nvidia.ptx", "nvidia.cubin.sm_80", "translate.hip", "amd.asm.gfx1100",
                                          "amd.assemble.gfx1100", "nvidia.run", "compare", "x86.run"};
const std::vector<std::string> kCategories = {
    "amd.asm.invalid_instruction", "amd.asm.register_alignment", "amd.asm.vgpr_bank", "amd.asm.literal_limit",
    "amd.asm.undefined_label", "amd.asm.operand_type", "amd.asm.directive", "amd.compile.undeclared_identifier",
    "nvidia.compile.syntax", "nvidia.compile.ptxas", "translate.unsupported.inline_ptx", "translate.unsupported.wmma",
    "run.timeout", "run.crash.sigsegv", "run.cuda_error.illegal_address", "run.output_mismatch.numeric",
    "sandbox.memory_limit", "c2x86.io_mismatch", "agent.llm.rate_limited", "amd.assemble.gfx1100.uncategorized"};
const std::vector<std::string> kTracks = {"cuda2hip", "sass2rdna3", "ptx2cuda", "c2x86", "kernelopt"};
const std::vector<std::string> kOrigins = {"template", "llm", "synthesized", "imported", "mutated"};
const std::vector<std::string> kDomains = {"machine learning", "scientific computing", "graphics and image",
                                           "data structures and algorithms", "cryptography and security",
                                           "simulation", "general compute"};

struct Timing {
  double tree_ms = 0, trend_ms = 0, day_ms = 0;
  int64_t total = 0, failed_samples = 0, day_total = 0, day_failed_samples = 0;
  size_t trend_points = 0;
};

Timing time_queries(Database& db, int64_t now) {
  Timing t;
  for (int round = 0; round < 3; ++round) {  // best of three: the first round warms the page cache
    auto start = std::chrono::steady_clock::now();
    TaxonomyQuery all;
    all.clusters = 0;
    Result<TaxonomyReport> tree = taxonomy_report(db, all);
    double tree_ms = seconds_since(start) * 1000;
    start = std::chrono::steady_clock::now();
    TaxonomyQuery filtered;
    filtered.clusters = 0;
    filtered.track = "cuda2hip";
    filtered.since_ms = now - 48LL * 3600000;
    filtered.trend = "hour";
    Result<TaxonomyReport> trend = taxonomy_report(db, filtered);
    double trend_ms = seconds_since(start) * 1000;
    start = std::chrono::steady_clock::now();
    TaxonomyQuery day;
    day.clusters = 0;
    day.since_ms = now - 24LL * 3600000;
    Result<TaxonomyReport> last_day = taxonomy_report(db, day);
    double day_ms = seconds_since(start) * 1000;
    if (!tree || !trend || !last_day) {
      std::fprintf(stderr, "query failed: %s %s %s\n", tree.message().c_str(), trend.message().c_str(),
                   last_day.message().c_str());
      std::exit(1);
    }
    if (round == 0 || tree_ms < t.tree_ms) t.tree_ms = tree_ms;
    if (round == 0 || trend_ms < t.trend_ms) t.trend_ms = trend_ms;
    if (round == 0 || day_ms < t.day_ms) t.day_ms = day_ms;
    t.total = tree->total;
    t.failed_samples = tree->failed_samples;
    t.day_total = last_day->total;
    t.day_failed_samples = last_day->failed_samples;
    t.trend_points = trend->trend.size();
  }
  return t;
}

void print(const char* label, const Timing& t) {
  std::printf("%s: %lld failures (distinct sample x category) in %lld failed samples\n", label,
              static_cast<long long>(t.total), static_cast<long long>(t.failed_samples));
  std::printf("  whole tree:      %8.1f ms  (target 200 ms, ratio %.2f)\n", t.tree_ms, t.tree_ms / 200.0);
  std::printf("  filtered trend:  %8.1f ms  (target 500 ms, ratio %.2f; track=cuda2hip, since 48h, per hour, %zu points)\n",
              t.trend_ms, t.trend_ms / 500.0, t.trend_points);
  std::printf("  last day tree:   %8.1f ms  (no target; since 24h: %lld failures in %lld failed samples)\n", t.day_ms,
              static_cast<long long>(t.day_total), static_cast<long long>(t.day_failed_samples));
}

}  // namespace

int main(int argc, char** argv) {
  int samples = argc > 1 ? std::atoi(argv[1]) : 125000;
  Result<Database> opened = open_fresh_bench_database("tailforge-taxonomy-bench.db", "");
  if (!opened) return 1;
  Database& db = opened.value();
  use_big_cache(db);
  int64_t now = now_ms();
  std::mt19937_64 random(42);
  auto start = std::chrono::steady_clock::now();
  {
    Transaction transaction(db);
    for (int i = 0; i < samples; ++i) {
      Sample s;
      s.track = kTracks[random() % kTracks.size()];
      s.origin = kOrigins[random() % kOrigins.size()];
      s.language = "cuda";
      s.text = "__global__ void k" + std::to_string(i) + "(float* a) { a[threadIdx.x] = " + std::to_string(i) + "; }";
      s.domain = kDomains[random() % kDomains.size()];
      if (i % 3 == 0) s.features = {"shared_memory"};
      s.created_ms = now;
      Result<InsertOutcome> inserted = insert_sample_if_absent(db, s);
      if (!inserted) {
        std::fprintf(stderr, "%s\n", inserted.message().c_str());
        return 1;
      }
      for (const std::string& stage : kStages) {
        // skewed: low category indexes are common, high ones form the long tail
        size_t c = static_cast<size_t>(std::min<double>(kCategories.size() - 1, std::exponential_distribution<>(0.25)(random)));
        int64_t created_ms = now - static_cast<int64_t>(random() % (7LL * 86400000));
        FailureRecord f = sample_failure(s, inserted->id, stage, kCategories[c],
                                         "error: something about " + kCategories[c], created_ms);
        if (Status st = insert_failure(db, f); !st) {
          std::fprintf(stderr, "%s\n", st.message().c_str());
          return 1;
        }
      }
    }
    if (Status s = transaction.commit(); !s) return 1;
  }
  double insert_s = seconds_since(start);
  int64_t failures = static_cast<int64_t>(samples) * static_cast<int64_t>(kStages.size());
  std::printf("inserted %d samples and %lld failures in %.1f s (%.0f failures/s, one transaction)\n", samples,
              static_cast<long long>(failures), insert_s, failures / insert_s);
  (void)db.exec("ANALYZE");
  print("schema indexes", time_queries(db, now));
  if (!std::getenv("TAILFORGE_BENCH_KEEP_DB")) {
    remove_bench_database(db.path());
  }
  return 0;
}
