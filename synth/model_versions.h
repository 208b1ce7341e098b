// Which model versions are superseded. A lineage is a model and its retrained descendants
// (parent_id); within one, only the newest eval.keep_versions versions are evaluated each cycle,
// the older ones are superseded. Computed from the registry alone; it changes nothing stored.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "store/models.h"

namespace tailforge {

// The id of the lineage's first version: parents followed until one has none (or is not in
// `models`).
int64_t lineage_root(const std::vector<ModelRecord>& models, const ModelRecord& model);

// Ids of the versions older than the newest `keep_versions` of their lineage (newest by
// created_ms, then id); retired versions count too. keep_versions <= 0: none is superseded.
std::set<int64_t> superseded_versions(const std::vector<ModelRecord>& models, int64_t keep_versions);

}  // namespace tailforge
