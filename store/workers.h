// The worker registry: which workers lease jobs (the daemon's own pool, recorded as "local", and
// `tailforge worker` processes on other hosts), what each can run, what it holds and has done;
// jobs that wait because no live worker may lease their kind; and the staging area for artifacts
// a remote worker uploads before it posts its result.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/database.h"

namespace tailforge {

inline constexpr const char* kLocalWorkerName = "local";

struct WorkerRecord {
  std::string name;
  std::string host;
  nlohmann::json capabilities = nlohmann::json::object();  // {"stages": [...], "tools": {...}, "gpus": [...]}
  std::vector<std::string> kinds;                         // the job kinds it may lease
  std::map<std::string, std::vector<std::string>> missing;  // kind -> needed stages it lacks
  int64_t started_ms = 0;
  int64_t last_seen_ms = 0;
  std::optional<int64_t> job_id;
  int64_t jobs_done = 0;
  int64_t jobs_failed = 0;
};

// Inserts or refreshes a worker: host, capabilities, kinds and missing are replaced, last_seen is
// now; started_ms is kept for a known worker.
Status upsert_worker(Database& db, const WorkerRecord& worker);
// Marks a worker seen now, holding `job_id` (or nothing).
Status touch_worker(Database& db, const std::string& name, std::optional<int64_t> job_id);
// Counts a finished job for a worker and clears the job it holds.
Status count_worker_job(Database& db, const std::string& name, bool done);
// Forgets workers not seen since `older_than_ms` (they stay listed, as gone, until then).
Status forget_workers(Database& db, int64_t older_than_ms);
// Every worker, local first, then by name.
Result<std::vector<WorkerRecord>> list_workers(Database& db);
// The host a worker registered from; empty when the worker is not registered.
Result<std::string> worker_host(Database& db, const std::string& name);
bool worker_is_live(const WorkerRecord& worker, int64_t now_ms, int64_t live_ms);

struct WaitingJobs {
  std::string kind;
  int64_t count = 0;
  std::string reason;  // why no live worker leases them
};

// Ready pending jobs of kinds no live worker may lease (a worker is live when seen within
// `live_ms`), with the reason: what each live worker lacks, or that none is connected.
Result<std::vector<WaitingJobs>> waiting_jobs(Database& db, int64_t live_ms);

// Content-addressed uploads. `missing_artifacts` returns the ids among `ids` that are neither
// stored artifacts nor staged uploads; `stage_upload` checks the content's SHA-256 against `id`.
Result<std::vector<std::string>> missing_artifacts(Database& db, const std::vector<std::string>& ids);
Status stage_upload(Database& db, const std::string& id, const std::string& content);
// The content of an artifact or staged upload.
Result<std::optional<std::string>> find_artifact_content(Database& db, const std::string& id);
// Drops staged uploads named in `ids`, and any staged before `older_than_ms`.
Status drop_uploads(Database& db, const std::vector<std::string>& ids, int64_t older_than_ms);

nlohmann::json worker_to_json(const WorkerRecord& worker, int64_t now_ms, int64_t live_ms);

}  // namespace tailforge
