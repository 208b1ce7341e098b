// GET /metrics: the store's counts in the Prometheus text exposition format.
#pragma once

#include <string>

#include "store/database.h"

namespace tailforge {

Result<std::string> prometheus_metrics(Database& db);

}  // namespace tailforge
