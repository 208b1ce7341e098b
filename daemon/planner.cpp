#include "daemon/planner.h"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "daemon/memory_usage.h"

namespace tailforge {

int64_t fill_samples_for(int64_t configured, int workers) {
  constexpr int64_t kPerWorker = 24;
  return configured >= 0 ? configured : kPerWorker * std::max(1, workers);
}

int64_t cycle_seed(int64_t seed, int64_t cycle_id) { return seed * 1000003 + cycle_id; }

Result<int64_t> CyclePlanner::start_new_cycle(int64_t priority) {
  Transaction transaction(db_);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  Result<int64_t> id = start_cycle(db_, options_.seed, options_.samples_per_cycle);
  if (!id) return id.error();
  Result<int64_t> adopted = adopt_unassigned_work(db_, *id);
  if (!adopted) return adopted.error();
  if (*adopted > 0) spdlog::info("cycle {} adopts {} queued verifications (imported programs)", *id, *adopted);
  if (Status s = enqueue_generate(*id, 0, options_.samples_per_cycle, priority); !s) return s.error();
  if (Status s = transaction.commit(); !s) return s.error();
  return id;
}

Status CyclePlanner::enqueue_generate(int64_t cycle_id, int64_t first, int64_t count, int64_t priority) {
  int64_t seed = cycle_seed(options_.seed, cycle_id);
  for (int64_t index = first; index < first + count; ++index) {
    nlohmann::json payload = {{"cycle", cycle_id}, {"index", index}, {"seed", seed}};
    NewJob job{.kind = kGenerateJob,
               .payload = payload.dump(),
               .idempotency_key = "cycle:" + std::to_string(cycle_id) + ":generate:" + std::to_string(index),
               .priority = priority};
    if (Result<EnqueueOutcome> enqueued = queue_.enqueue(job); !enqueued) return enqueued.error();
  }
  return {};
}

Result<bool> CyclePlanner::fill_idle_workers(const CycleRecord& newest) {
  int64_t room = options_.samples_per_cycle + options_.fill_samples - newest.planned;
  if (room <= 0) return false;
  Result<int64_t> pending = pending_jobs(db_);
  if (!pending) return pending.error();
  if (*pending > 0) return false;
  // A few at a time: the next tick adds more while nothing is pending.
  int64_t batch = std::min(room, std::max<int64_t>(1, options_.samples_per_cycle / 4));
  Transaction transaction(db_);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  if (Status s = add_planned(db_, newest.id, batch); !s) return s.error();
  if (Status s = enqueue_generate(newest.id, newest.planned, batch, -1); !s) return s.error();
  if (Status s = transaction.commit(); !s) return s.error();
  spdlog::debug("cycle {} generates {} more while workers idle ({} planned)", newest.id, batch, newest.planned + batch);
  return true;
}

bool CyclePlanner::cycles_left() const {
  return options_.cycles_to_run <= 0 || cycles_run_ < options_.cycles_to_run;
}

Result<bool> CyclePlanner::next_may_start(int64_t cycle_id) {
  // Once every job of the cycle has a worker, the next cycle's jobs take the idle ones.
  Result<int64_t> pending = pending_jobs_of_cycle(db_, cycle_id);
  if (!pending) return pending.error();
  return *pending == 0;
}

Result<bool> CyclePlanner::enqueue_once(int64_t cycle_id, const char* kind, const char* step) {
  std::string key = "cycle:" + std::to_string(cycle_id) + ":" + step;
  Result<std::optional<Job>> existing = queue_.find_by_key(key);
  if (!existing) return existing.error();
  if (existing->has_value()) return false;
  NewJob job{.kind = kind, .payload = nlohmann::json{{"cycle", cycle_id}, {"step", step}}.dump(), .idempotency_key = key};
  Result<EnqueueOutcome> enqueued = queue_.enqueue(job);
  if (!enqueued) return enqueued.error();
  return true;
}

Result<PlannerStep> CyclePlanner::tick(bool may_start) {
  PlannerStep step;
  Result<std::vector<CycleRecord>> running = running_cycles(db_);
  if (!running) return running.error();
  if (first_tick_) {
    first_tick_ = false;
    for (const CycleRecord& cycle : *running) {
      ++cycles_run_;
      spdlog::info("cycle {} resumed", cycle.id);
    }
  }

  if (running->empty()) {
    current_.reset();
    if (!cycles_left()) {
      done_ = true;
      return step;
    }
    if (!may_start) return step;
    Result<int64_t> id = start_new_cycle(0);
    if (!id) return id.error();
    ++cycles_run_;
    current_ = *id;
    step.started_cycle = *id;
    step.enqueued = true;
    spdlog::info("cycle {} started: {} generate jobs, seed {}", *id, options_.samples_per_cycle,
                 cycle_seed(options_.seed, *id));
    return step;
  }

  // The oldest running cycle is the current one; its steps run in order. A second running cycle
  // is the next one, started early to keep the cores busy while the current one finishes.
  CycleRecord cycle = running->front();
  current_ = cycle.id;
  Result<int64_t> open = open_jobs_of_cycle(db_, cycle.id);
  if (!open) return open.error();
  if (*open > 0) {
    if (!may_start) return step;
    if (static_cast<int64_t>(running->size()) >= options_.cycles_in_flight || !cycles_left()) {
      if (running->size() < 2) return step;  // the current cycle's own set of samples stays as planned
      Result<bool> filled = fill_idle_workers(running->back());
      if (!filled) return filled.error();
      step.enqueued = *filled;
      return step;
    }
    Result<bool> may_start_next = next_may_start(running->back().id);
    if (!may_start_next) return may_start_next.error();
    if (!*may_start_next) return step;
    // Below the current cycle's jobs, so that the current cycle finishes first (and by id after
    // the other early cycle's).
    Result<int64_t> id = start_new_cycle(-1);
    if (!id) return id.error();
    ++cycles_run_;
    step.started_cycle = *id;
    step.enqueued = true;
    spdlog::info("cycle {} started early (cycle {} is current): {} generate jobs, seed {}", *id, cycle.id,
                 options_.samples_per_cycle, cycle_seed(options_.seed, *id));
    return step;
  }

  struct Step {
    bool enabled;
    const char* kind;
    const char* name;
  };
  const Step steps[] = {{options_.evaluation, kEvaluateModelsJob, "evaluate_models"},
                        {options_.synthesis, kSynthesizeJob, "synthesize"},
                        {options_.retrain, kRetrainJob, "retrain"},
                        {options_.evaluation, kEvaluateModelsJob, "evaluate_models_after_retrain"}};
  for (const Step& step_job : steps) {
    if (!step_job.enabled) continue;
    Result<bool> enqueued = enqueue_once(cycle.id, step_job.kind, step_job.name);
    if (!enqueued) return enqueued.error();
    if (*enqueued) {
      step.enqueued = true;
      return step;
    }
  }

  if (Status s = count_cycle_samples(db_, cycle); !s) return s.error();
  cycle.state = "done";
  cycle.finished_ms = now_ms();
  if (Status s = finish_cycle(db_, cycle); !s) return s.error();
  spdlog::info("cycle {} done: generated {}, synthesized {}, verified {}, failed {}; {}", cycle.id, cycle.generated,
               cycle.synthesized, cycle.verified, cycle.failed, describe(current_memory_usage()));
  current_.reset();
  if (running->size() > 1) current_ = (*running)[1].id;
  step.finished_cycle = cycle;
  if (running->size() == 1 && !cycles_left()) done_ = true;
  return step;
}

}  // namespace tailforge
