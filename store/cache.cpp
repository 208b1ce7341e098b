#include "store/cache.h"

#include <utility>
#include <vector>

namespace tailforge {

std::optional<std::string> cache_lookup(Database& db, std::string_view ns, std::string_view key) {
  Statement& select = db.cached("SELECT value FROM cache_entry WHERE namespace = ?1 AND key = ?2");
  select.bind(1, ns).bind(2, key);
  if (!select.step()) return std::nullopt;
  std::string value = select.text(0);
  select.reset();
  Statement& hit =
      db.cached("UPDATE cache_entry SET hits = hits + 1, used_ms = ?3 WHERE namespace = ?1 AND key = ?2");
  (void)hit.bind(1, ns).bind(2, key).bind(3, now_ms()).run();
  return value;
}

Status cache_store(Database& db, std::string_view ns, std::string_view key, std::string_view value) {
  Statement& insert = db.cached(
      "INSERT INTO cache_entry (namespace, key, value, created_ms, bytes, used_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?4) "
      "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, created_ms = excluded.created_ms, "
      "bytes = excluded.bytes, used_ms = excluded.used_ms");
  return insert.bind(1, ns)
      .bind(2, key)
      .bind_blob(3, value)
      .bind(4, now_ms())
      .bind(5, static_cast<int64_t>(value.size()))
      .run();
}

int64_t cache_count(Database& db, std::string_view ns) {
  Statement& count = db.cached("SELECT count(*) FROM cache_entry WHERE namespace = ?1");
  count.bind(1, ns);
  int64_t n = count.step() ? count.int64(0) : 0;
  count.reset();
  return n;
}

Result<int64_t> cache_bytes(Database& db, std::string_view ns) {
  Statement& sum = db.cached("SELECT coalesce(sum(bytes), 0) FROM cache_entry WHERE namespace = ?1");
  sum.bind(1, ns);
  if (!sum.step()) {
    Error error{"cache size of '" + std::string(ns) + "': " + sum.status().message()};
    sum.reset();
    return error;
  }
  int64_t bytes = sum.int64(0);
  sum.reset();
  return bytes;
}

Result<CacheTrimOutcome> cache_trim(Database& db, std::string_view ns, int64_t max_bytes) {
  CacheTrimOutcome outcome;
  Result<int64_t> total = cache_bytes(db, ns);
  if (!total) return total.error();
  outcome.bytes_before = outcome.bytes_after = *total;
  if (max_bytes <= 0 || *total <= max_bytes) return outcome;
  int64_t goal = max_bytes / 10 * 9;
  std::vector<std::pair<int64_t, int64_t>> victims;  // id, bytes
  {
    Statement& oldest =
        db.cached("SELECT id, bytes FROM cache_entry WHERE namespace = ?1 ORDER BY used_ms, id");
    oldest.bind(1, ns);
    int64_t left = *total;
    while (left > goal && oldest.step()) {
      victims.emplace_back(oldest.int64(0), oldest.int64(1));
      left -= oldest.int64(1);
    }
    oldest.reset();
  }
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  Statement& remove = db.cached("DELETE FROM cache_entry WHERE id = ?1");
  for (const auto& [id, bytes] : victims) {
    if (Status s = remove.bind(1, id).run(); !s) return s.error();
    outcome.bytes_after -= bytes;
    ++outcome.removed;
  }
  if (Status s = transaction.commit(); !s) return s.error();
  return outcome;
}

}  // namespace tailforge
