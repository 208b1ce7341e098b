// The status summary shown by `tailforge status` and GET /v1/status: one query function,
// one JSON form whose keys stay stable, one human table. Dead jobs are listed with the reason
// they died, so a weekend's lost work is visible on Monday. The growth series (verified samples
// per time bucket, by track and origin, with the retrain events on the same time axis) is what
// the dashboard's overview draws.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/cycles.h"
#include "store/database.h"
#include "store/models.h"
#include "store/queue.h"
#include "store/workers.h"

namespace tailforge {

// Verified samples created in one time bucket, of one track and origin.
struct GrowthBucket {
  std::string track;
  std::string origin;
  int64_t start_ms = 0;
  int64_t verified = 0;
};

struct RetrainMark {
  int64_t id = 0;
  std::optional<int64_t> cycle_id;
  int64_t created_ms = 0;
  std::string status;
  std::string reason;
  std::optional<int64_t> model_id;
};

// The verifier's own seconds in one stage (slot waits not counted; a result from the compile
// cache counts 0), summed over every verification the store holds.
struct StageSeconds {
  std::string stage;
  double seconds = 0;
  double cpu_seconds = 0;  // user + system CPU of its processes: above `seconds` when they use more than a core
  int64_t runs = 0;
  int64_t cached = 0;  // runs answered by the compile cache
};

struct StatusSummary {
  int64_t samples = 0;
  std::map<std::string, int64_t> samples_by_origin;
  std::map<std::string, int64_t> samples_by_track;
  std::map<std::string, int64_t> samples_by_status;
  int64_t verified = 0;  // samples whose every runnable stage passed
  std::map<std::string, int64_t> failures_by_category;  // by top-level category
  std::map<std::string, int64_t> jobs_by_state;
  // Jobs that used up their attempts (or their leases died with the daemon too often), newest
  // first, at most kDeadJobsShown, each with the error of its last attempt.
  std::vector<Job> dead_jobs;
  int64_t cycles = 0;
  int64_t retrain_events = 0;
  std::optional<CycleRecord> last_cycle;
  // Bucket width: the smallest of 1 min, 5 min, 15 min, 1 h, 6 h and 1 day that keeps the
  // verified samples' time span within kGrowthBuckets buckets.
  int64_t growth_bucket_ms = 60000;
  std::vector<GrowthBucket> growth;  // by start_ms, then track, then origin
  std::vector<RetrainMark> retrains;  // oldest first, the newest kRetrainsShown
  // Verified samples created in the hour up to the newest sample's creation, per minute of
  // that hour (or of the store's whole span when it is shorter).
  double verified_per_min = 0;
  // Where the verifier's time goes: every stage's seconds, most first, and their sum. Over the
  // verified samples, the cost of one (failed samples' stages included).
  double stage_seconds = 0;
  double stage_cpu_seconds = 0;
  std::vector<StageSeconds> stage_seconds_by_stage;
  // The workers that lease jobs (store/workers.h) and the jobs no live worker may lease.
  std::vector<WorkerRecord> workers;
  std::vector<WaitingJobs> waiting;
  // Models whose evaluation waits for their endpoint (store/models.h), with the reason.
  std::vector<ModelPause> paused_models;
  int64_t now_ms = 0;  // when the summary was taken: a worker's liveness is relative to it
};

// A worker seen within this long is live: idle workers poll every second or so, busy ones
// heartbeat at least every 20 s.
inline constexpr int64_t kWorkerLiveMs = 60000;

inline constexpr int kGrowthBuckets = 200;
inline constexpr int kRetrainsShown = 200;

inline constexpr int kDeadJobsShown = 20;

Result<StatusSummary> query_status(Database& db);
nlohmann::json status_to_json(const StatusSummary& status);
std::string format_status_table(const StatusSummary& status);

}  // namespace tailforge
