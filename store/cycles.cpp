#include "store/cycles.h"

namespace tailforge {

namespace {

const char* kSelectCycle =
    "SELECT id, started_ms, finished_ms, state, seed, planned, generated, verified, failed, synthesized, summary"
    " FROM cycle";

void read_cycle(const Statement& row, CycleRecord& c) {
  read_row(row, c.id, c.started_ms, c.finished_ms, c.state, c.seed, c.planned, c.generated, c.verified, c.failed,
           c.synthesized, c.summary);
}

Result<std::vector<CycleRecord>> select_cycles(Database& db, const std::string& tail, std::optional<int64_t> arg) {
  Result<Statement> select = db.prepare(std::string(kSelectCycle) + " " + tail);
  if (!select) return select.error();
  if (arg) select->bind(1, *arg);
  return collect_rows<CycleRecord>(*select, read_cycle);
}

Result<std::optional<CycleRecord>> first_of(Result<std::vector<CycleRecord>> cycles) {
  if (!cycles) return cycles.error();
  if (cycles->empty()) return std::optional<CycleRecord>();
  return std::optional<CycleRecord>(cycles->front());
}

}  // namespace

Result<int64_t> start_cycle(Database& db, int64_t seed, int64_t planned) {
  Statement& insert = db.cached("INSERT INTO cycle (started_ms, seed, planned) VALUES (?1, ?2, ?3)");
  if (Status s = insert.bind(1, now_ms()).bind(2, seed).bind(3, planned).run(); !s) return s.error();
  return db.last_insert_rowid();
}

Status add_planned(Database& db, int64_t cycle_id, int64_t more) {
  return db.cached("UPDATE cycle SET planned = planned + ?2 WHERE id = ?1").bind(1, cycle_id).bind(2, more).run();
}

Status finish_cycle(Database& db, const CycleRecord& c) {
  Statement& update = db.cached(
      "UPDATE cycle SET finished_ms = ?2, state = ?3, generated = ?4, verified = ?5, failed = ?6,"
      " synthesized = ?7, summary = ?8 WHERE id = ?1");
  update.bind(1, c.id).bind(2, c.finished_ms.value_or(now_ms())).bind(3, c.state).bind(4, c.generated);
  update.bind(5, c.verified).bind(6, c.failed).bind(7, c.synthesized).bind(8, c.summary);
  if (Status s = update.run(); !s) return s;
  Result<int64_t> released = release_deferred_statuses(db);
  if (!released) return released.error();
  return {};
}

Result<std::vector<CycleRecord>> running_cycles(Database& db) {
  return select_cycles(db, "WHERE state = 'running' ORDER BY id", std::nullopt);
}

Result<int64_t> release_deferred_statuses(Database& db) {
  // The samples with a deferred verdict whose every earlier cycle has finished.
  const std::string releasable =
      "(SELECT d.sample_id FROM deferred_sample_status d JOIN sample s ON s.id = d.sample_id"
      "  WHERE NOT EXISTS (SELECT 1 FROM cycle c WHERE c.state = 'running' AND c.id < s.cycle_id))";
  // Statements are cached by the address of their text: static strings keep it.
  static const std::string update =
      "UPDATE sample SET status = (SELECT d.status FROM deferred_sample_status d WHERE d.sample_id = sample.id)"
      " WHERE id IN " + releasable;
  static const std::string remove = "DELETE FROM deferred_sample_status WHERE sample_id IN " + releasable;
  if (Status updated = db.cached(update.c_str()).run(); !updated) return updated.error();
  int64_t released = db.changes();
  if (Status deleted = db.cached(remove.c_str()).run(); !deleted) return deleted.error();
  return released;
}

Result<std::optional<CycleRecord>> find_cycle(Database& db, int64_t id) {
  return first_of(select_cycles(db, "WHERE id = ?1", id));
}

Result<std::optional<CycleRecord>> last_cycle(Database& db) {
  return first_of(select_cycles(db, "ORDER BY id DESC LIMIT 1", std::nullopt));
}

Result<std::vector<CycleRecord>> list_cycles(Database& db, int limit) {
  return select_cycles(db, "ORDER BY id DESC LIMIT ?1", static_cast<int64_t>(limit));
}

Result<int64_t> adopt_unassigned_work(Database& db, int64_t cycle_id) {
  Statement& jobs = db.cached(
      "UPDATE job SET payload = json_set(payload, '$.cycle', ?1) WHERE kind = 'verify' AND state IN ('pending', 'leased')"
      " AND json_extract(payload, '$.cycle') IS NULL"
      " RETURNING json_extract(payload, '$.sample_id')");
  jobs.bind(1, cycle_id);
  Result<std::vector<std::string>> sample_ids = text_rows(jobs);
  if (!sample_ids) return sample_ids.error();
  Statement& samples = db.cached("UPDATE sample SET cycle_id = ?1 WHERE id = ?2 AND cycle_id IS NULL");
  for (const std::string& id : *sample_ids) {
    if (Status s = samples.bind(1, cycle_id).bind(2, id).run(); !s) return s.error();
  }
  return static_cast<int64_t>(sample_ids->size());
}

namespace {

Result<int64_t> count_with_cycle(Statement& count, int64_t cycle_id) { return single_int64(count.bind(1, cycle_id)); }

}  // namespace

Result<int64_t> open_jobs_of_cycle(Database& db, int64_t cycle_id) {
  return count_with_cycle(
      db.cached("SELECT count(*) FROM job WHERE state IN ('pending','leased') AND json_extract(payload, '$.cycle') = ?1"),
      cycle_id);
}

Result<int64_t> pending_jobs(Database& db) {
  return single_int64(db.cached("SELECT count(*) FROM job WHERE state = 'pending'"));
}

Result<int64_t> pending_jobs_of_cycle(Database& db, int64_t cycle_id) {
  return count_with_cycle(
      db.cached("SELECT count(*) FROM job WHERE state = 'pending' AND json_extract(payload, '$.cycle') = ?1"), cycle_id);
}

Status count_cycle_samples(Database& db, CycleRecord& cycle) {
  Statement& count = db.cached(
      "SELECT coalesce(sum(origin <> 'synthesized'), 0), coalesce(sum(origin = 'synthesized'), 0),"
      " coalesce(sum(status = 'verified'), 0), coalesce(sum(status = 'failed'), 0) FROM sample WHERE cycle_id = ?1");
  count.bind(1, cycle.id);
  if (count.step()) read_row(count, cycle.generated, cycle.synthesized, cycle.verified, cycle.failed);
  return count.finish();
}

}  // namespace tailforge
