// GET /metrics: the store's counts in the Prometheus text exposition format.
#pragma once

#include <string>

#include "store/database.h"
#include "synth/policy.h"

namespace tailforge {

// With `api` (the synth policy's api section), also the CUDA API coverage of `track`.
Result<std::string> prometheus_metrics(Database& db, const ApiPolicy* api = nullptr, const std::string& track = "");

}  // namespace tailforge
