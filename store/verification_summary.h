// Verification summaries over a set of samples: how many of them have each stage's result, by
// status, host and toolchain (what a dataset card says each exported row passed, and where). Only
// SQL and counting; what the counts mean is the caller's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

struct StageResultCount {
  std::string stage;
  std::string status;     // ok, fail, timeout, skipped, error
  std::string host;       // "" when not recorded
  std::string toolchain;  // "" when not recorded
  int64_t samples = 0;
};

// The stage results of `sample_ids`, counted by (stage, status, host, toolchain), in that order.
Result<std::vector<StageResultCount>> stage_result_counts(Database& db, const std::vector<std::string>& sample_ids);

}  // namespace tailforge
