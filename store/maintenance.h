// Store maintenance for benchmarks and operators: wiping the dataset while keeping caches.
// It does not touch the schema, the models or the LLM call log.
#pragma once

#include "store/database.h"

namespace tailforge {

// Deletes every sample with its feature tags, artifact links and artifacts, verifications,
// failures, evaluations and lineage, plus all jobs, cycles, tail reports and retrain events, in
// one transaction. cache_entry rows (the compile and LLM caches) are kept, so the next run of the
// same programs is a warm-cache run on an empty dataset.
Status clear_dataset_keep_cache(Database& db);

}  // namespace tailforge
