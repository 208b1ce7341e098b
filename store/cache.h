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

}  // namespace tailforge
