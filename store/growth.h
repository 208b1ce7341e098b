// How fast the store grows: the bytes of samples, artifacts and cache entries recorded since a
// time, read from their created_ms. For `tailforge doctor`'s projection of disk use per day; it
// counts what the rows hold, not SQLite's pages or indexes.
#pragma once

#include <cstdint>

#include "store/database.h"

namespace tailforge {

struct StoreGrowth {
  int64_t since_ms = 0;
  int64_t first_ms = 0;  // the oldest row counted; 0 when none was recorded since
  int64_t samples = 0, sample_bytes = 0;      // their text and variables
  int64_t artifacts = 0, artifact_bytes = 0;  // content sizes
  int64_t cache_entries = 0, cache_bytes = 0; // compile and LLM caches
  int64_t bytes() const { return sample_bytes + artifact_bytes + cache_bytes; }
};

// What was recorded at or after `since_ms` (scans the tables; for reports, not hot paths).
Result<StoreGrowth> store_growth_since(Database& db, int64_t since_ms);

}  // namespace tailforge
