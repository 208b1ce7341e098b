#include "store/workers.h"

#include <algorithm>
#include <set>

#include "base/sha256.h"

namespace tailforge {

namespace {

nlohmann::json parse_or(const std::string& text, nlohmann::json fallback) {
  nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
  return value.is_discarded() ? fallback : value;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

}  // namespace

Status upsert_worker(Database& db, const WorkerRecord& worker) {
  Statement& upsert = db.cached(
      "INSERT INTO worker (name, host, capabilities, kinds, missing, started_ms, last_seen_ms)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT (name) DO UPDATE SET host = ?2, capabilities = ?3,"
      " kinds = ?4, missing = ?5, last_seen_ms = ?6");
  upsert.bind(1, worker.name).bind(2, worker.host).bind(3, worker.capabilities.dump());
  upsert.bind(4, nlohmann::json(worker.kinds).dump()).bind(5, nlohmann::json(worker.missing).dump()).bind(6, now_ms());
  return upsert.run();
}

Status touch_worker(Database& db, const std::string& name, std::optional<int64_t> job_id) {
  Statement& touch = db.cached("UPDATE worker SET last_seen_ms = ?2, job_id = ?3 WHERE name = ?1");
  return touch.bind(1, name).bind(2, now_ms()).bind(3, job_id).run();
}

Status count_worker_job(Database& db, const std::string& name, bool done) {
  Statement& count = db.cached(
      "UPDATE worker SET last_seen_ms = ?2, job_id = NULL, jobs_done = jobs_done + ?3,"
      " jobs_failed = jobs_failed + ?4 WHERE name = ?1");
  return count.bind(1, name).bind(2, now_ms()).bind(3, done ? 1 : 0).bind(4, done ? 0 : 1).run();
}

Status forget_workers(Database& db, int64_t older_than_ms) {
  Statement& forget = db.cached("DELETE FROM worker WHERE last_seen_ms < ?1");
  return forget.bind(1, older_than_ms).run();
}

Result<std::vector<WorkerRecord>> list_workers(Database& db) {
  Statement& select = db.cached(
      "SELECT name, host, capabilities, kinds, missing, started_ms, last_seen_ms, job_id, jobs_done, jobs_failed"
      " FROM worker ORDER BY name <> ?1, name");
  select.bind(1, kLocalWorkerName);
  return collect_rows<WorkerRecord>(select, [](const Statement& row, WorkerRecord& worker) {
    std::string capabilities, kinds_json, missing_json;
    read_row(row, worker.name, worker.host, capabilities, kinds_json, missing_json, worker.started_ms,
             worker.last_seen_ms, worker.job_id, worker.jobs_done, worker.jobs_failed);
    worker.capabilities = parse_or(capabilities, nlohmann::json::object());
    nlohmann::json kinds = parse_or(kinds_json, nlohmann::json::array());
    if (kinds.is_array()) {
      for (const nlohmann::json& kind : kinds)
        if (kind.is_string()) worker.kinds.push_back(kind.get<std::string>());
    }
    nlohmann::json missing = parse_or(missing_json, nlohmann::json::object());
    if (missing.is_object()) {
      for (const auto& [kind, stages] : missing.items()) {
        if (!stages.is_array()) continue;
        for (const nlohmann::json& stage : stages)
          if (stage.is_string()) worker.missing[kind].push_back(stage.get<std::string>());
      }
    }
  });
}

Result<std::string> worker_host(Database& db, const std::string& name) {
  Statement& select = db.cached("SELECT host FROM worker WHERE name = ?1");
  select.bind(1, name);
  std::string host = select.step() ? select.text(0) : "";
  if (Status s = select.finish(); !s) return s.error();
  return host;
}

bool worker_is_live(const WorkerRecord& worker, int64_t now_ms, int64_t live_ms) {
  return now_ms - worker.last_seen_ms <= live_ms;
}

Result<std::vector<WaitingJobs>> waiting_jobs(Database& db, int64_t live_ms) {
  Result<std::vector<WorkerRecord>> workers = list_workers(db);
  if (!workers) return workers.error();
  int64_t now = now_ms();
  std::set<std::string> leasable;
  std::vector<const WorkerRecord*> live;
  for (const WorkerRecord& worker : *workers) {
    if (!worker_is_live(worker, now, live_ms)) continue;
    live.push_back(&worker);
    leasable.insert(worker.kinds.begin(), worker.kinds.end());
  }
  Statement& select = db.cached(
      "SELECT kind, count(*) FROM job WHERE state = 'pending' AND next_attempt_ms <= ?1 GROUP BY kind ORDER BY kind");
  select.bind(1, now);
  std::vector<WaitingJobs> waiting;
  while (select.step()) {
    std::string kind = select.text(0);
    if (leasable.count(kind)) continue;
    WaitingJobs jobs{kind, select.int64(1), ""};
    std::vector<std::string> why;
    for (const WorkerRecord* worker : live) {
      auto lacking = worker->missing.find(kind);
      why.push_back(worker->name + (lacking == worker->missing.end() || lacking->second.empty()
                                        ? " does not take them"
                                        : " lacks " + join(lacking->second, ", ")));
    }
    jobs.reason = why.empty() ? "no worker is connected" : "no connected worker can run them: " + join(why, "; ");
    waiting.push_back(std::move(jobs));
  }
  if (Status s = select.finish(); !s) return s.error();
  return waiting;
}

Result<std::vector<std::string>> missing_artifacts(Database& db, const std::vector<std::string>& ids) {
  Statement& select = db.cached(
      "SELECT value FROM json_each(?1) WHERE value NOT IN (SELECT id FROM artifact WHERE id = value)"
      " AND value NOT IN (SELECT id FROM artifact_upload WHERE id = value)");
  select.bind(1, nlohmann::json(ids).dump());
  Result<std::vector<std::string>> missing = text_rows(select);
  if (!missing) return missing.error();
  std::sort(missing->begin(), missing->end());
  missing->erase(std::unique(missing->begin(), missing->end()), missing->end());
  return missing;
}

Status stage_upload(Database& db, const std::string& id, const std::string& content) {
  std::string actual = sha256_hex(content);
  if (actual != id) return make_error("the content's SHA-256 is " + actual + ", not " + id);
  Statement& insert = db.cached(
      "INSERT INTO artifact_upload (id, content, created_ms) VALUES (?1, ?2, ?3)"
      " ON CONFLICT (id) DO UPDATE SET created_ms = ?3");
  return insert.bind(1, id).bind_blob(2, content).bind(3, now_ms()).run();
}

Result<std::optional<std::string>> find_artifact_content(Database& db, const std::string& id) {
  Statement& select = db.cached(
      "SELECT content FROM artifact WHERE id = ?1 UNION ALL SELECT content FROM artifact_upload WHERE id = ?1 LIMIT 1");
  select.bind(1, id);
  return first_text(select);
}

Status drop_uploads(Database& db, const std::vector<std::string>& ids, int64_t older_than_ms) {
  Statement& drop = db.cached(
      "DELETE FROM artifact_upload WHERE id IN (SELECT value FROM json_each(?1)) OR created_ms < ?2");
  return drop.bind(1, nlohmann::json(ids).dump()).bind(2, older_than_ms).run();
}

nlohmann::json worker_to_json(const WorkerRecord& worker, int64_t now_ms, int64_t live_ms) {
  nlohmann::json out = {{"name", worker.name},
                        {"host", worker.host},
                        {"live", worker_is_live(worker, now_ms, live_ms)},
                        {"seen_seconds_ago", (now_ms - worker.last_seen_ms) / 1000.0},
                        {"kinds", worker.kinds},
                        {"missing", worker.missing},
                        {"capabilities", worker.capabilities},
                        {"jobs_done", worker.jobs_done},
                        {"jobs_failed", worker.jobs_failed}};
  out["job_id"] = worker.job_id ? nlohmann::json(*worker.job_id) : nlohmann::json(nullptr);
  return out;
}

}  // namespace tailforge
