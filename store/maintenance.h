// Store maintenance for benchmarks and operators: wiping the dataset while keeping caches, and
// checking the file's integrity. It does not touch the schema, the models or the LLM call log.
#pragma once

#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

// Deletes every sample with its feature tags, artifact links and artifacts, verifications,
// failures, evaluations and lineage, plus all jobs, cycles, tail reports and retrain events, in
// one transaction. cache_entry rows (the compile and LLM caches) are kept, so the next run of the
// same programs is a warm-cache run on an empty dataset.
Status clear_dataset_keep_cache(Database& db);

// What PRAGMA quick_check finds wrong with the file; empty when it is sound. SQLite 3.40
// (Debian 12) reports "NULL value in T.C" for every row of a WITHOUT ROWID table whose primary key
// lists its columns in another order than the table (sample_feature): such a line is kept only
// when a row of T really holds a NULL in C.
Result<std::vector<std::string>> integrity_problems(Database& db);

}  // namespace tailforge
