// The cycle planner: starts a cycle (a cycle row and its generate jobs, in one transaction),
// watches its jobs drain, then runs the cycle's steps one after another, each once its jobs are
// done: evaluate the models under test, synthesize for the tails, check the retrain trigger,
// evaluate again (the new version and the new items); then closes the cycle with its counts.
// Once every job of the newest running cycle has a worker, the next cycle starts (up to
// daemon.cycles_in_flight at once), its jobs below the current one's, so that idle workers take them
// instead of waiting for the current cycle's last jobs and steps. When no more cycles may start
// and no job at all waits for a worker (the current cycle's last verifications and its serial
// steps: evaluate, synthesize, retrain), the newest early cycle generates more samples, a few at
// each tick, up to daemon.fill_samples beyond its samples_per_cycle. How many it adds depends on
// timing; the programs themselves still come from the cycle's seed and index. The current cycle's steps do
// not see later cycles: their verdicts stay deferred until every earlier cycle has finished
// (set_sample_status), tail detection reads judged samples only, and synthesis's near-duplicate
// checks see cycles up to its own. Each cycle counts its own samples; a cycle's steps wait until
// every earlier cycle has finished.
// Every step is idempotent, so a restarted daemon resumes mid-cycle.
// It runs on the daemon's event-loop thread; it does no generation or verification itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/cycles.h"
#include "store/queue.h"

namespace tailforge {

struct PlannerOptions {
  int64_t cycles_to_run = 0;  // 0: until stopped
  int64_t samples_per_cycle = 12;
  int64_t cycles_in_flight = 2;  // 1: a cycle starts only after the one before it has closed
  int64_t fill_samples = 48;     // most extra generate jobs an early cycle takes on; 0: none
  int64_t seed = 1;
  bool evaluation = true;
  bool synthesis = true;
  bool retrain = true;
};

// Job kinds of a cycle; their payloads all carry "cycle". "evaluate_models" refreshes the
// evaluation set and queues one "evaluate" job per model and item (daemon/evaluation_jobs.h).
inline constexpr const char* kGenerateJob = "generate";
inline constexpr const char* kVerifyJob = "verify";
inline constexpr const char* kSynthesizeJob = "synthesize";
inline constexpr const char* kRetrainJob = "retrain";
inline constexpr const char* kEvaluateModelsJob = "evaluate_models";
inline constexpr const char* kEvaluateJob = "evaluate";

// The fill of a host with `workers` general workers: daemon.fill_samples when 0 or more, else 24
// per worker, so that a wider host, whose workers drain a cycle's step tails sooner, gets as many
// seconds of fill as a narrow one.
int64_t fill_samples_for(int64_t configured, int workers);

// The seed of cycle `cycle_id` of a run seeded with `seed`: the same for every restart.
int64_t cycle_seed(int64_t seed, int64_t cycle_id);

struct PlannerStep {
  std::optional<int64_t> started_cycle;
  std::optional<CycleRecord> finished_cycle;
  bool enqueued = false;  // jobs were added: wake the workers
};

class CyclePlanner {
 public:
  CyclePlanner(Database& db, JobQueue& queue, PlannerOptions options)
      : db_(db), queue_(queue), options_(options) {}

  // Advances the current cycle one step, or starts a new one when `may_start` is true.
  Result<PlannerStep> tick(bool may_start);
  // True once the bounded number of cycles has run and the last one is closed.
  bool done() const { return done_; }
  int64_t cycles_run() const { return cycles_run_; }
  std::optional<int64_t> current_cycle() const { return current_; }
  const PlannerOptions& options() const { return options_; }
  void set_options(const PlannerOptions& options) { options_ = options; }

 private:
  // Its generate jobs get `priority`.
  Result<int64_t> start_new_cycle(int64_t priority);
  bool cycles_left() const;
  // True once every job of cycle `cycle_id` has a worker.
  Result<bool> next_may_start(int64_t cycle_id);
  // Adds generate jobs to `newest` (an early cycle) while nothing waits for a worker.
  Result<bool> fill_idle_workers(const CycleRecord& newest);
  // Enqueues generate jobs [first, first + count) of the cycle, with `priority`.
  Status enqueue_generate(int64_t cycle_id, int64_t first, int64_t count, int64_t priority);
  // Enqueues the cycle's step job (kind `kind`, key "cycle:<id>:<step>") unless it exists; true
  // when it was enqueued.
  Result<bool> enqueue_once(int64_t cycle_id, const char* kind, const char* step);

  Database& db_;
  JobQueue& queue_;
  PlannerOptions options_;
  int64_t cycles_run_ = 0;
  bool first_tick_ = true;
  bool done_ = false;
  std::optional<int64_t> current_;
};

}  // namespace tailforge
