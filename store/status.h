// The status summary shown by `tailforge status` and GET /v1/status: one query function,
// one JSON form whose keys stay stable, one human table. Dead jobs are listed with the reason
// they died, so a weekend's lost work is visible on Monday.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "store/cycles.h"
#include "store/database.h"
#include "store/queue.h"

namespace tailforge {

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
};

inline constexpr int kDeadJobsShown = 20;

Result<StatusSummary> query_status(Database& db);
nlohmann::json status_to_json(const StatusSummary& status);
std::string format_status_table(const StatusSummary& status);

}  // namespace tailforge
