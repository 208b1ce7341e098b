// A persistent key-value cache in the store, split by namespace ('compile', 'llm', ...).
// Callers build the key (a hash of everything that decides the value); the store only keeps bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "store/database.h"

namespace tailforge {

// The stored value for (ns, key), counting the hit; nullopt when absent.
std::optional<std::string> cache_lookup(Database& db, std::string_view ns, std::string_view key);
// Stores value under (ns, key), replacing an older value.
Status cache_store(Database& db, std::string_view ns, std::string_view key, std::string_view value);
// Number of entries in a namespace.
int64_t cache_count(Database& db, std::string_view ns);
// Bytes of the values stored in a namespace.
Result<int64_t> cache_bytes(Database& db, std::string_view ns);

struct CacheTrimOutcome {
  int64_t bytes_before = 0;
  int64_t bytes_after = 0;
  int64_t removed = 0;  // entries evicted
};

// Holds a namespace under max_bytes: when it is over, evicts the least recently used entries
// (stored or looked up last) until it is at 90% of max_bytes, so trims are not back to back.
Result<CacheTrimOutcome> cache_trim(Database& db, std::string_view ns, int64_t max_bytes);

}  // namespace tailforge
