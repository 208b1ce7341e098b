#include "store/metrics.h"

namespace tailforge {

const std::vector<double>& stage_duration_buckets() {
  static const std::vector<double> buckets = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120};
  return buckets;
}

Result<StoreMetrics> query_store_metrics(Database& db) {
  StoreMetrics m;
  Statement& samples = db.cached("SELECT track, origin, count(*) FROM sample GROUP BY track, origin");
  while (samples.step()) m.samples_by_track_origin[{samples.text(0), samples.text(1)}] = samples.int64(2);
  if (Status s = samples.finish(); !s) return s.error();

  Statement& statuses = db.cached("SELECT status, count(*) FROM sample GROUP BY status");
  while (statuses.step()) m.samples_by_status[statuses.text(0)] = statuses.int64(1);
  if (Status s = statuses.finish(); !s) return s.error();

  Statement& verifications = db.cached("SELECT stage, status, count(*) FROM verification GROUP BY stage, status");
  while (verifications.step()) {
    m.verifications_by_stage_status[{verifications.text(0), verifications.text(1)}] = verifications.int64(2);
  }
  if (Status s = verifications.finish(); !s) return s.error();

  // Bucket counts aggregated in SQL, one row per stage.
  static const std::string histogram_sql = [] {
    std::string sql = "SELECT stage, count(*), coalesce(sum(seconds), 0)";
    for (double bound : stage_duration_buckets()) sql += ", sum(seconds <= " + std::to_string(bound) + ")";
    return sql + " FROM verification WHERE status <> 'skipped' GROUP BY stage";
  }();
  Statement& durations = db.cached(histogram_sql.c_str());
  const size_t bucket_count = stage_duration_buckets().size();
  while (durations.step()) {
    StageHistogram histogram{durations.text(0), {}, durations.int64(1), durations.real(2)};
    for (size_t i = 0; i < bucket_count; ++i) histogram.cumulative_counts.push_back(durations.int64(3 + static_cast<int>(i)));
    histogram.cumulative_counts.push_back(histogram.count);
    m.stage_durations.push_back(std::move(histogram));
  }
  if (Status s = durations.finish(); !s) return s.error();

  Statement& llm = db.cached(
      "SELECT count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),"
      " coalesce(sum(reasoning_tokens), 0) FROM llm_call WHERE cached = 0");
  if (llm.step()) {
    m.llm_requests = llm.int64(0);
    m.llm_tokens["prompt"] = llm.int64(1);
    m.llm_tokens["completion"] = llm.int64(2);
    m.llm_tokens["reasoning"] = llm.int64(3);
  }
  if (Status s = llm.finish(); !s) return s.error();
  return m;
}

}  // namespace tailforge
