// Lineage reports for `tailforge lineage ID [--json]` and GET /v1/samples/{id}/lineage: the
// sample, its ancestors and descendants with relations, reasons and agents. Reads only.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "store/database.h"

namespace tailforge {

// {"sample": {...}, "ancestors": [edges], "descendants": [edges]}; an edge's reason is parsed
// as JSON when it is JSON. An unknown id is an error naming it.
Result<nlohmann::json> lineage_report(Database& db, const std::string& sample_id);
std::string format_lineage_report(const nlohmann::json& report);

}  // namespace tailforge
