#include "store/growth.h"

#include <string>

namespace tailforge {
namespace {

struct Counted {
  int64_t rows = 0, bytes = 0, first_ms = 0;
};

Result<Counted> count_since(Database& db, const char* sql, int64_t since_ms) {
  Statement& select = db.cached(sql);
  select.bind(1, since_ms);
  if (!select.step()) {
    Error error{"store growth: " + (select.status().ok() ? std::string("no row") : select.status().message())};
    select.reset();
    return error;
  }
  Counted counted{select.int64(0), select.int64(1), select.int64(2)};
  select.reset();
  return counted;
}

}  // namespace

Result<StoreGrowth> store_growth_since(Database& db, int64_t since_ms) {
  Result<Counted> samples = count_since(
      db, "SELECT count(*), coalesce(sum(length(text) + coalesce(length(variables), 0)), 0), coalesce(min(created_ms), 0)"
          " FROM sample WHERE created_ms >= ?1", since_ms);
  if (!samples) return samples.error();
  Result<Counted> artifacts = count_since(
      db, "SELECT count(*), coalesce(sum(size), 0), coalesce(min(created_ms), 0) FROM artifact WHERE created_ms >= ?1",
      since_ms);
  if (!artifacts) return artifacts.error();
  Result<Counted> cache = count_since(
      db, "SELECT count(*), coalesce(sum(bytes), 0), coalesce(min(created_ms), 0) FROM cache_entry WHERE created_ms >= ?1",
      since_ms);
  if (!cache) return cache.error();
  StoreGrowth growth;
  growth.since_ms = since_ms;
  growth.samples = samples->rows, growth.sample_bytes = samples->bytes;
  growth.artifacts = artifacts->rows, growth.artifact_bytes = artifacts->bytes;
  growth.cache_entries = cache->rows, growth.cache_bytes = cache->bytes;
  for (const Counted* counted : {&*samples, &*artifacts, &*cache}) {
    if (counted->rows > 0 && (growth.first_ms == 0 || counted->first_ms < growth.first_ms)) growth.first_ms = counted->first_ms;
  }
  return growth;
}

}  // namespace tailforge
