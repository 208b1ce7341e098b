// Loop cycles: what each generate -> verify -> categorize -> synthesize cycle did.
// A cycle row is opened when a cycle starts and closed with its counts when it ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

struct CycleRecord {
  int64_t id = 0;
  int64_t started_ms = 0;
  std::optional<int64_t> finished_ms;
  std::string state = "running";  // running, done, interrupted
  int64_t seed = 0;
  int64_t planned = 0;
  int64_t generated = 0;
  int64_t verified = 0;
  int64_t failed = 0;
  int64_t synthesized = 0;
  std::string summary = "{}";  // JSON object
};

Result<int64_t> start_cycle(Database& db, int64_t seed, int64_t planned);
// Records the cycle's end and counts, and releases the verdicts it held back.
Status finish_cycle(Database& db, const CycleRecord& cycle);
// Raises the cycle's planned generate jobs by `more` (the planner's fill of idle workers).
Status add_planned(Database& db, int64_t cycle_id, int64_t more);
// Jobs of any cycle waiting for a worker.
Result<int64_t> pending_jobs(Database& db);
// The cycles still running, oldest first: at most the current one and the next, started early.
Result<std::vector<CycleRecord>> running_cycles(Database& db);
// Gives the samples whose every earlier cycle has finished their deferred verdicts (see
// set_sample_status); finish_cycle calls it. Returns how many it released.
Result<int64_t> release_deferred_statuses(Database& db);
Result<std::optional<CycleRecord>> find_cycle(Database& db, int64_t id);
Result<std::optional<CycleRecord>> last_cycle(Database& db);
Result<std::vector<CycleRecord>> list_cycles(Database& db, int limit);

// Gives a new cycle the work queued outside any cycle (`tailforge import`'s verify jobs): their
// payloads get the cycle, their pending samples its id, so the cycle waits for them and counts
// them. Returns how many jobs it adopted.
Result<int64_t> adopt_unassigned_work(Database& db, int64_t cycle_id);

// Jobs of the cycle (payload field "cycle") that are pending or leased.
Result<int64_t> open_jobs_of_cycle(Database& db, int64_t cycle_id);
// Jobs of the cycle still waiting for a worker (pending).
Result<int64_t> pending_jobs_of_cycle(Database& db, int64_t cycle_id);
// Fills generated, synthesized, verified and failed from the samples the cycle made.
Status count_cycle_samples(Database& db, CycleRecord& cycle);

}  // namespace tailforge
