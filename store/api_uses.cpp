#include "store/api_uses.h"

namespace tailforge {
namespace {

// (key, count) rows of a query on the track ?1 and the cycle bound ?2.
Result<std::map<std::string, int64_t>> counts(Statement& select, const std::string& track,
                                              std::optional<int64_t> up_to_cycle) {
  return counts_by_key(select.bind(1, track).bind(2, up_to_cycle));
}

// A (key, count) query over the API names of the verified samples of the track ?1 made up to the
// cycle ?2, grouped by the key; statements are cached by the address of their text, so callers keep
// it in a static string.
std::string verified_api_counts_sql(const char* key_and_count) {
  return std::string("SELECT ") + key_and_count +
         " FROM sample_api a JOIN sample s ON s.id = a.sample_id"
         " WHERE s.track = ?1 AND s.status = 'verified' AND (?2 IS NULL OR coalesce(s.cycle_id, 0) <= ?2)"
         " GROUP BY 1";
}

}  // namespace

Result<std::optional<ApiIndexMark>> api_index_mark(Database& db) {
  Statement& select = db.cached("SELECT table_key, last_rowid FROM sample_api_progress WHERE id = 1");
  return first_row<ApiIndexMark>(
      select, [](const Statement& row, ApiIndexMark& mark) { read_row(row, mark.table_key, mark.last_rowid); });
}

Status restart_api_index(Database& db, const std::string& table_key) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  if (Status s = db.cached("DELETE FROM sample_api").run(); !s) return s;
  Statement& mark = db.cached(
      "INSERT INTO sample_api_progress (id, table_key, last_rowid) VALUES (1, ?1, 0)"
      " ON CONFLICT(id) DO UPDATE SET table_key = excluded.table_key, last_rowid = 0");
  if (Status s = mark.bind(1, table_key).run(); !s) return s;
  return transaction.commit();
}

Result<std::vector<SampleToCount>> samples_to_count(Database& db, int64_t after_rowid, int limit) {
  Statement& select = db.cached(
      "SELECT rowid, id FROM sample WHERE rowid > ?1 AND language = 'cuda' ORDER BY rowid LIMIT ?2");
  select.bind(1, after_rowid).bind(2, static_cast<int64_t>(limit));
  return collect_rows<SampleToCount>(
      select, [](const Statement& row, SampleToCount& sample) { read_row(row, sample.rowid, sample.id); });
}

Status store_sample_api(Database& db, const std::string& sample_id, const std::vector<SampleApiUse>& uses,
                        int64_t rowid) {
  if (Status s = db.cached("DELETE FROM sample_api WHERE sample_id = ?1").bind(1, sample_id).run(); !s) return s;
  for (const SampleApiUse& use : uses) {
    Statement& insert = db.cached("INSERT INTO sample_api (sample_id, identifier, family, uses) VALUES (?1, ?2, ?3, ?4)");
    insert.bind(1, sample_id).bind(2, use.identifier).bind(3, use.family).bind(4, use.uses);
    if (Status s = insert.run(); !s) return s;
  }
  return db.cached("UPDATE sample_api_progress SET last_rowid = max(last_rowid, ?1) WHERE id = 1").bind(1, rowid).run();
}

Result<std::vector<SampleApiUse>> sample_api_uses(Database& db, const std::string& sample_id) {
  Statement& select = db.cached("SELECT identifier, family, uses FROM sample_api WHERE sample_id = ?1 ORDER BY identifier");
  select.bind(1, sample_id);
  return collect_rows<SampleApiUse>(
      select, [](const Statement& row, SampleApiUse& use) { read_row(row, use.identifier, use.family, use.uses); });
}

Result<std::set<std::string>> sample_api_families(Database& db, const std::string& sample_id) {
  Statement& select = db.cached("SELECT DISTINCT family FROM sample_api WHERE sample_id = ?1");
  select.bind(1, sample_id);
  Result<std::vector<std::string>> families = text_rows(select);
  if (!families) return families.error();
  return std::set<std::string>(families->begin(), families->end());
}

Result<std::map<std::string, std::set<std::string>>> eval_item_api_families(Database& db, const std::string& track) {
  Statement& select = db.cached(
      "SELECT DISTINCT i.sample_id, a.family FROM eval_item i JOIN sample_api a ON a.sample_id = i.sample_id"
      " WHERE i.track = ?1 AND i.retired_ms IS NULL");
  select.bind(1, track);
  std::map<std::string, std::set<std::string>> out;
  while (select.step()) out[select.text(0)].insert(select.text(1));
  if (Status s = select.finish(); !s) return s.error();
  return out;
}

Result<std::map<std::string, int64_t>> verified_samples_by_identifier(Database& db, const std::string& track,
                                                                      std::optional<int64_t> up_to_cycle) {
  static const std::string sql = verified_api_counts_sql("a.identifier, COUNT(*)");
  return counts(db.cached(sql.c_str()), track, up_to_cycle);
}

Result<std::map<std::string, int64_t>> verified_samples_by_api_family(Database& db, const std::string& track,
                                                                      std::optional<int64_t> up_to_cycle) {
  static const std::string sql = verified_api_counts_sql("a.family, COUNT(DISTINCT a.sample_id)");
  return counts(db.cached(sql.c_str()), track, up_to_cycle);
}

Result<int64_t> verified_samples_up_to(Database& db, const std::string& track, std::optional<int64_t> up_to_cycle) {
  Statement& select = db.cached(
      "SELECT COUNT(*) FROM sample s WHERE s.track = ?1 AND s.status = 'verified'"
      " AND (?2 IS NULL OR coalesce(s.cycle_id, 0) <= ?2)");
  return single_int64(select.bind(1, track).bind(2, up_to_cycle));
}

Status replace_tree_api_uses(Database& db, const TreeApiScan& scan, const std::vector<TreeApiUse>& uses) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  if (Status s = db.cached("DELETE FROM tree_api_use WHERE tree = ?1").bind(1, scan.tree).run(); !s) return s;
  Statement& upsert = db.cached(
      "INSERT INTO tree_api_scan (tree, files, api_files, scanned_ms) VALUES (?1, ?2, ?3, ?4)"
      " ON CONFLICT(tree) DO UPDATE SET files = excluded.files, api_files = excluded.api_files,"
      " scanned_ms = excluded.scanned_ms");
  upsert.bind(1, scan.tree).bind(2, scan.files).bind(3, scan.api_files).bind(4, scan.scanned_ms);
  if (Status s = upsert.run(); !s) return s;
  for (const TreeApiUse& use : uses) {
    Statement& insert = db.cached("INSERT INTO tree_api_use (tree, identifier, files, uses) VALUES (?1, ?2, ?3, ?4)");
    insert.bind(1, scan.tree).bind(2, use.identifier).bind(3, use.files).bind(4, use.uses);
    if (Status s = insert.run(); !s) return s;
  }
  return transaction.commit();
}

Result<std::vector<TreeApiScan>> tree_api_scans(Database& db) {
  Statement& select = db.cached("SELECT tree, files, api_files, scanned_ms FROM tree_api_scan ORDER BY tree");
  return collect_rows<TreeApiScan>(select, [](const Statement& row, TreeApiScan& scan) {
    read_row(row, scan.tree, scan.files, scan.api_files, scan.scanned_ms);
  });
}

Result<std::vector<TreeApiUse>> tree_api_uses_all(Database& db) {
  Statement& select =
      db.cached("SELECT identifier, SUM(files), SUM(uses) FROM tree_api_use GROUP BY identifier ORDER BY identifier");
  return collect_rows<TreeApiUse>(
      select, [](const Statement& row, TreeApiUse& use) { read_row(row, use.identifier, use.files, use.uses); });
}

}  // namespace tailforge
