#include "store/cycles.h"

namespace tailforge {

namespace {

const char* kSelectCycle =
    "SELECT id, started_ms, finished_ms, state, seed, planned, generated, verified, failed, synthesized, summary"
    " FROM cycle";

CycleRecord read_cycle(const Statement& row) {
  CycleRecord c;
  c.id = row.int64(0);
  c.started_ms = row.int64(1);
  c.finished_ms = row.optional_int64(2);
  c.state = row.text(3);
  c.seed = row.int64(4);
  c.planned = row.int64(5);
  c.generated = row.int64(6);
  c.verified = row.int64(7);
  c.failed = row.int64(8);
  c.synthesized = row.int64(9);
  c.summary = row.text(10);
  return c;
}

Result<std::vector<CycleRecord>> select_cycles(Database& db, const std::string& tail, std::optional<int64_t> arg) {
  Result<Statement> select = db.prepare(std::string(kSelectCycle) + " " + tail);
  if (!select) return select.error();
  if (arg) select->bind(1, *arg);
  std::vector<CycleRecord> cycles;
  while (select->step()) cycles.push_back(read_cycle(*select));
  if (!select->status()) return select->status().error();
  return cycles;
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
  Status updated = db.cached(
                         "UPDATE sample SET status = (SELECT d.status FROM deferred_sample_status d WHERE d.sample_id = sample.id)"
                         " WHERE id IN (SELECT d.sample_id FROM deferred_sample_status d JOIN sample s ON s.id = d.sample_id"
                         "  WHERE NOT EXISTS (SELECT 1 FROM cycle c WHERE c.state = 'running' AND c.id < s.cycle_id))")
                       .run();
  if (!updated) return updated.error();
  int64_t released = db.changes();
  Status deleted = db.cached(
                         "DELETE FROM deferred_sample_status WHERE sample_id IN (SELECT d.sample_id FROM"
                         " deferred_sample_status d JOIN sample s ON s.id = d.sample_id"
                         "  WHERE NOT EXISTS (SELECT 1 FROM cycle c WHERE c.state = 'running' AND c.id < s.cycle_id))")
                       .run();
  if (!deleted) return deleted.error();
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
  std::vector<std::string> sample_ids;
  while (jobs.step()) sample_ids.push_back(jobs.text(0));
  Status s = jobs.status();
  jobs.reset();
  if (!s) return s.error();
  Statement& samples = db.cached("UPDATE sample SET cycle_id = ?1 WHERE id = ?2 AND cycle_id IS NULL");
  for (const std::string& id : sample_ids) {
    samples.bind(1, cycle_id);
    samples.bind(2, id);
    samples.step();
    s = samples.status();
    samples.reset();
    if (!s) return s.error();
  }
  return static_cast<int64_t>(sample_ids.size());
}

namespace {

Result<int64_t> count_with_cycle(Statement& count, int64_t cycle_id) {
  count.bind(1, cycle_id);
  int64_t n = count.step() ? count.int64(0) : 0;
  Status s = count.status();
  count.reset();
  if (!s) return s.error();
  return n;
}

}  // namespace

Result<int64_t> open_jobs_of_cycle(Database& db, int64_t cycle_id) {
  return count_with_cycle(
      db.cached("SELECT count(*) FROM job WHERE state IN ('pending','leased') AND json_extract(payload, '$.cycle') = ?1"),
      cycle_id);
}

Result<int64_t> pending_jobs(Database& db) {
  Statement& count = db.cached("SELECT count(*) FROM job WHERE state = 'pending'");
  int64_t n = count.step() ? count.int64(0) : 0;
  Status s = count.status();
  count.reset();
  if (!s) return s.error();
  return n;
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
  if (count.step()) {
    cycle.generated = count.int64(0);
    cycle.synthesized = count.int64(1);
    cycle.verified = count.int64(2);
    cycle.failed = count.int64(3);
  }
  Status s = count.status();
  count.reset();
  return s;
}

}  // namespace tailforge
