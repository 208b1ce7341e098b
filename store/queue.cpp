#include "store/queue.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace tailforge {

namespace {

constexpr const char* kJobColumns =
    "id, kind, payload, state, priority, idempotency_key, lease_owner, lease_expires_ms, attempts, max_attempts,"
    " next_attempt_ms, last_error";

void read_job(const Statement& row, Job& j) {
  read_row(row, j.id, j.kind, j.payload, j.state, j.priority, j.idempotency_key, j.lease_owner, j.lease_expires_ms,
           j.attempts, j.max_attempts, j.next_attempt_ms, j.last_error);
}

}  // namespace

int64_t JobQueue::backoff_ms(int64_t attempts) const {
  int64_t delay = policy_.backoff_base_ms;
  for (int64_t i = 1; i < attempts && delay < policy_.backoff_max_ms; ++i) delay *= 2;
  return std::min(delay, policy_.backoff_max_ms);
}

Result<EnqueueOutcome> JobQueue::enqueue(const NewJob& job) {
  int64_t now = now_ms();
  Statement& insert = db_.cached(
      "INSERT INTO job (kind, payload, priority, idempotency_key, max_attempts, next_attempt_ms, created_ms,"
      " updated_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?6) ON CONFLICT (idempotency_key) DO NOTHING");
  insert.bind(1, job.kind).bind(2, job.payload).bind(3, job.priority).bind(4, job.idempotency_key);
  insert.bind(5, job.max_attempts.value_or(policy_.max_attempts)).bind(6, now);
  if (Status s = insert.run(); !s) return make_error("enqueueing " + job.kind + " job: " + s.message());
  if (db_.changes() > 0) return EnqueueOutcome{db_.last_insert_rowid(), true};
  Statement& existing = db_.cached("SELECT id FROM job WHERE idempotency_key = ?1");
  existing.bind(1, job.idempotency_key);
  if (!existing.step()) return make_error("enqueueing " + job.kind + " job: conflicting job not found");
  int64_t id = existing.int64(0);
  existing.reset();
  return EnqueueOutcome{id, false};
}

Result<std::optional<Job>> JobQueue::lease(const std::string& owner, int64_t lease_ms,
                                           const std::vector<std::string>& kinds) {
  int64_t now = now_ms();
  Transaction transaction(db_);
  if (!transaction.begin_status()) return transaction.begin_status().error();

  Statement& bury = db_.cached(
      "UPDATE job SET state = 'dead', lease_owner = NULL, updated_ms = ?1,"
      " last_error = 'lease expired after ' || attempts || ' attempts' || coalesce(': ' || last_error, '')"
      " WHERE state = 'leased' AND lease_expires_ms <= ?1 AND attempts >= max_attempts");
  if (Status s = bury.bind(1, now).run(); !s) return s.error();

  Statement& pick = db_.cached(
      "SELECT id FROM job INDEXED BY job_ready WHERE state IN ('pending','leased')"
      " AND ((state = 'pending' AND next_attempt_ms <= ?1) OR (state = 'leased' AND lease_expires_ms <= ?1))"
      " AND (?2 IS NULL OR kind IN (SELECT value FROM json_each(?2)))"
      " ORDER BY priority DESC, id LIMIT 1");
  pick.bind(1, now);
  if (kinds.empty()) {
    pick.bind_null(2);
  } else {
    pick.bind(2, nlohmann::json(kinds).dump());
  }
  if (!pick.step()) {
    Status s = pick.finish();
    if (!s) return s.error();
    if (Status c = transaction.commit(); !c) return c.error();
    return std::optional<Job>();
  }
  int64_t id = pick.int64(0);
  pick.reset();

  Statement& take = db_.cached(
      "UPDATE job SET state = 'leased', lease_owner = ?2, lease_expires_ms = ?3, attempts = attempts + 1,"
      " updated_ms = ?4, started_ms = ?4 WHERE id = ?1 RETURNING id, kind, payload, state, priority, idempotency_key,"
      " lease_owner, lease_expires_ms, attempts, max_attempts, next_attempt_ms, last_error");
  take.bind(1, id).bind(2, owner).bind(3, now + lease_ms).bind(4, now);
  if (!take.step()) {
    Status s = take.finish();
    return make_error("leasing job " + std::to_string(id) + ": " + (s ? "vanished" : s.message()));
  }
  Job job;
  read_job(take, job);
  take.reset();
  if (Status c = transaction.commit(); !c) return c.error();
  return std::optional<Job>(std::move(job));
}

Status JobQueue::complete(int64_t id, const std::string& owner) {
  Statement& done = db_.cached(
      "UPDATE job SET state = 'done', lease_owner = NULL, lease_expires_ms = NULL, updated_ms = ?3"
      " WHERE id = ?1 AND state = 'leased' AND lease_owner = ?2");
  if (Status s = done.bind(1, id).bind(2, owner).bind(3, now_ms()).run(); !s) return s;
  if (db_.changes() == 0) return make_error("job " + std::to_string(id) + " is not leased by " + owner);
  return {};
}

Status JobQueue::fail(int64_t id, const std::string& owner, const std::string& error) {
  Transaction transaction(db_);
  if (!transaction.begin_status()) return transaction.begin_status();
  Statement& select = db_.cached("SELECT attempts, max_attempts FROM job WHERE id = ?1 AND state = 'leased' AND lease_owner = ?2");
  select.bind(1, id).bind(2, owner);
  if (!select.step()) {
    Status s = select.finish();
    return s ? make_error("job " + std::to_string(id) + " is not leased by " + owner) : s;
  }
  int64_t attempts = select.int64(0);
  int64_t max_attempts = select.int64(1);
  select.reset();
  int64_t now = now_ms();
  bool dead = attempts >= max_attempts;
  Statement& update = db_.cached(
      "UPDATE job SET state = ?2, lease_owner = NULL, lease_expires_ms = NULL, next_attempt_ms = ?3,"
      " last_error = ?4, updated_ms = ?5 WHERE id = ?1");
  update.bind(1, id).bind(2, dead ? "dead" : "pending").bind(3, dead ? now : now + backoff_ms(attempts));
  update.bind(4, error).bind(5, now);
  if (Status s = update.run(); !s) return s;
  return transaction.commit();
}

Status JobQueue::defer(int64_t id, const std::string& owner, int64_t due_ms, const std::string& reason) {
  Statement& update = db_.cached(
      "UPDATE job SET state = 'pending', attempts = max(attempts - 1, 0), lease_owner = NULL, lease_expires_ms = NULL,"
      " next_attempt_ms = ?3, last_error = ?4, updated_ms = ?5 WHERE id = ?1 AND state = 'leased' AND lease_owner = ?2");
  if (Status s = update.bind(1, id).bind(2, owner).bind(3, due_ms).bind(4, reason).bind(5, now_ms()).run(); !s) return s;
  if (db_.changes() == 0) return make_error("job " + std::to_string(id) + " is not leased by " + owner);
  return {};
}

Status JobQueue::heartbeat(int64_t id, const std::string& owner, int64_t lease_ms) {
  int64_t now = now_ms();
  Statement& extend = db_.cached(
      "UPDATE job SET lease_expires_ms = ?3, updated_ms = ?4 WHERE id = ?1 AND state = 'leased' AND lease_owner = ?2");
  if (Status s = extend.bind(1, id).bind(2, owner).bind(3, now + lease_ms).bind(4, now).run(); !s) return s;
  if (db_.changes() == 0) return make_error("job " + std::to_string(id) + " is not leased by " + owner);
  return {};
}

namespace {

// Back to pending as an interruption (not a failed attempt); dead after too many.
constexpr const char* kInterrupt =
    "UPDATE job SET state = CASE WHEN interruptions + 1 >= ?3 THEN 'dead' ELSE 'pending' END,"
    " attempts = max(attempts - 1, 0), interruptions = interruptions + 1,"
    " last_error = CASE WHEN interruptions + 1 >= ?3 THEN 'interrupted ' || (interruptions + 1) || ' times'"
    " ELSE last_error END,"
    " lease_owner = NULL, lease_expires_ms = NULL, next_attempt_ms = ?2, updated_ms = ?2";

}  // namespace

Result<int> JobQueue::release_leases(const std::optional<std::string>& keep_owner, const std::string& keep_prefix) {
  // The statement cache keys on the text's address: a static string keeps it.
  static const std::string sql = std::string(kInterrupt) +
                                 " WHERE state = 'leased' AND (?1 IS NULL OR lease_owner <> ?1)"
                                 " AND (?4 = '' OR substr(lease_owner, 1, length(?4)) <> ?4)";
  Statement& release = db_.cached(sql.c_str());
  release.bind(1, keep_owner).bind(2, now_ms()).bind(3, policy_.max_interruptions).bind(4, keep_prefix);
  if (Status s = release.run(); !s) return s.error();
  return db_.changes();
}

Status JobQueue::release(int64_t id, const std::string& owner) {
  static const std::string sql = std::string(kInterrupt) + " WHERE id = ?1 AND state = 'leased' AND lease_owner = ?4";
  Statement& release = db_.cached(sql.c_str());
  if (Status s = release.bind(1, id).bind(2, now_ms()).bind(3, policy_.max_interruptions).bind(4, owner).run(); !s) return s;
  if (db_.changes() == 0) return make_error("job " + std::to_string(id) + " is not leased by " + owner);
  return {};
}

Result<bool> JobQueue::record_crash(int64_t id, const std::string& error) {
  Statement& crash = db_.cached(
      "UPDATE job SET crashes = crashes + 1, state = CASE WHEN crashes + 1 >= ?3 THEN 'dead' ELSE 'pending' END,"
      " attempts = max(attempts - 1, 0), last_error = ?2, lease_owner = NULL, lease_expires_ms = NULL,"
      " next_attempt_ms = ?4, updated_ms = ?4 WHERE id = ?1 AND state = 'leased' RETURNING state");
  crash.bind(1, id).bind(2, error).bind(3, policy_.max_crashes).bind(4, now_ms());
  bool updated = crash.step();
  bool dead = updated && crash.text(0) == "dead";
  Status s = crash.finish();
  if (!s) return make_error("recording a crash of job " + std::to_string(id) + ": " + s.message());
  return dead;
}

Result<std::optional<Job>> JobQueue::find(int64_t id) {
  Statement& select = db_.cached(
      "SELECT id, kind, payload, state, priority, idempotency_key, lease_owner, lease_expires_ms, attempts,"
      " max_attempts, next_attempt_ms, last_error FROM job WHERE id = ?1");
  select.bind(1, id);
  return first_row<Job>(select, read_job);
}

Result<std::optional<Job>> JobQueue::find_by_key(const std::string& idempotency_key) {
  Statement& select = db_.cached(
      "SELECT id, kind, payload, state, priority, idempotency_key, lease_owner, lease_expires_ms, attempts,"
      " max_attempts, next_attempt_ms, last_error FROM job WHERE idempotency_key = ?1");
  select.bind(1, idempotency_key);
  return first_row<Job>(select, read_job);
}

Result<std::vector<Job>> JobQueue::list(const std::optional<std::string>& state, int limit) {
  Result<Statement> select = db_.prepare(std::string("SELECT ") + kJobColumns +
                                         " FROM job WHERE (?1 IS NULL OR state = ?1) ORDER BY id DESC LIMIT ?2");
  if (!select) return select.error();
  select->bind(1, state).bind(2, limit);
  return collect_rows<Job>(*select, read_job);
}

Result<std::map<std::string, int64_t>> JobQueue::counts_by_state() {
  return counts_by_key(db_.cached("SELECT state, count(*) FROM job GROUP BY state"));
}

}  // namespace tailforge
