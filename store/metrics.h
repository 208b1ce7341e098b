// Counts behind GET /metrics, all derived from the store so they survive restarts:
// verifications by stage and status, stage duration histograms, LLM token totals.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "store/database.h"

namespace tailforge {

struct StageHistogram {
  std::string stage;
  std::vector<int64_t> cumulative_counts;  // one per bucket bound, then +Inf
  int64_t count = 0;
  double sum_seconds = 0;
};

struct StoreMetrics {
  std::map<std::pair<std::string, std::string>, int64_t> samples_by_track_origin;
  std::map<std::string, int64_t> samples_by_status;
  std::map<std::pair<std::string, std::string>, int64_t> verifications_by_stage_status;
  std::vector<StageHistogram> stage_durations;
  std::map<std::string, int64_t> llm_tokens;  // prompt, completion, reasoning
  int64_t llm_requests = 0;
};

// The bucket bounds (seconds) of the stage duration histograms.
const std::vector<double>& stage_duration_buckets();

Result<StoreMetrics> query_store_metrics(Database& db);

}  // namespace tailforge
