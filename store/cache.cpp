#include "store/cache.h"

namespace tailforge {

std::optional<std::string> cache_lookup(Database& db, std::string_view ns, std::string_view key) {
  Statement& select = db.cached("SELECT value FROM cache_entry WHERE namespace = ?1 AND key = ?2");
  select.bind(1, ns).bind(2, key);
  if (!select.step()) return std::nullopt;
  std::string value = select.text(0);
  select.reset();
  Statement& hit = db.cached("UPDATE cache_entry SET hits = hits + 1 WHERE namespace = ?1 AND key = ?2");
  (void)hit.bind(1, ns).bind(2, key).run();
  return value;
}

Status cache_store(Database& db, std::string_view ns, std::string_view key, std::string_view value) {
  Statement& insert = db.cached(
      "INSERT INTO cache_entry (namespace, key, value, created_ms) VALUES (?1, ?2, ?3, ?4) "
      "ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, created_ms = excluded.created_ms");
  return insert.bind(1, ns).bind(2, key).bind_blob(3, value).bind(4, now_ms()).run();
}

int64_t cache_count(Database& db, std::string_view ns) {
  Statement& count = db.cached("SELECT count(*) FROM cache_entry WHERE namespace = ?1");
  count.bind(1, ns);
  int64_t n = count.step() ? count.int64(0) : 0;
  count.reset();
  return n;
}

}  // namespace tailforge
