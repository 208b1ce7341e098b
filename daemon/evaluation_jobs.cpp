#include "daemon/evaluation_jobs.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "base/files.h"
#include "store/evaluations.h"
#include "store/models.h"
#include "synth/model_versions.h"
#include "synth/tracks.h"

namespace tailforge {

using nlohmann::json;

Status EvaluationJobs::plan(Database& db, JobQueue& queue, const Job& job, const std::string& owner) {
  json payload = json::parse(job.payload, nullptr, false);
  if (!payload.is_object() || !payload.contains("cycle") || !payload["cycle"].is_number_integer()) {
    return make_error("evaluate_models job payload needs cycle: " + job.payload);
  }
  int64_t cycle = payload["cycle"].get<int64_t>();
  if (!eval_.enabled) return queue.complete(job.id, owner);
  Result<std::vector<ModelRecord>> models = list_models(db);
  if (!models) return models.error();
  std::set<std::string> tracks = {synth_.track};
  for (const ModelRecord& model : *models) {
    // Some tracks' models are measured elsewhere (kernelopt's by `tailforge kernelopt run --model`).
    const Track* track = find_track(model.track);
    if (model.active && track && track->evaluated) tracks.insert(model.track);
  }
  for (const std::string& track : tracks) {
    Result<EvalSetRefresh> refreshed = refresh_eval_set(db, eval_, synth_, track);
    if (!refreshed) return refreshed.error();
    if (refreshed->retired > 0) {
      spdlog::info("cycle {}: evaluation set of {}: {} items retired as near-duplicates of trained samples "
                   "(tailforge rejudge lists them)", cycle, track, refreshed->retired);
    }
    if (refreshed->added > 0) {
      spdlog::info("cycle {}: evaluation set of {} is v{}: +{} items, {} in all", cycle, track, refreshed->version,
                   refreshed->added, refreshed->size);
    }
  }
  // A version older than the newest eval.keep_versions of its lineage gets no new jobs; its results stay.
  const std::set<int64_t> superseded = superseded_versions(*models, eval_.keep_versions);
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  int queued = 0, active = 0, skipped = 0;
  for (const ModelRecord& model : *models) {
    if (!model.active || !tracks.count(model.track)) continue;
    if (superseded.count(model.id)) {
      ++skipped;
      continue;
    }
    // A paused model's jobs wait in the queue for the pause's end; queueing more would pile up
    // a copy per cycle while its endpoint is down.
    Result<std::optional<ModelPause>> pause = find_model_pause(db, model.id);
    if (!pause) return pause.error();
    if (*pause && (*pause)->resume_ms > now_ms()) {
      spdlog::info("cycle {}: evaluation of {} paused until its endpoint answers: {}", cycle, model.name,
                   (*pause)->message);
      continue;
    }
    ++active;
    Result<std::vector<std::string>> missing = items_without_evaluation(db, model.id, model.track);
    if (!missing) return missing.error();
    for (const std::string& sample_id : *missing) {
      NewJob evaluate{.kind = kEvaluateJob,
                      .payload = json{{"cycle", cycle}, {"model_id", model.id}, {"sample_id", sample_id}}.dump(),
                      .idempotency_key = "cycle:" + std::to_string(cycle) + ":evaluate:" + std::to_string(model.id) +
                                         ":" + sample_id};
      Result<EnqueueOutcome> enqueued = queue.enqueue(evaluate);
      if (!enqueued) return enqueued.error();
      queued += enqueued->inserted;
    }
  }
  if (Status s = queue.complete(job.id, owner); !s) return s;
  if (Status s = transaction.commit(); !s) return s;
  if (queued > 0) spdlog::info("cycle {}: {} evaluations queued for {} active models", cycle, queued, active);
  if (skipped > 0) {
    spdlog::debug("cycle {}: {} active models not evaluated: superseded (older than the newest {} of their lineage, "
                  "eval.keep_versions)", cycle, skipped, eval_.keep_versions);
  }
  return {};
}

Result<std::shared_ptr<ModelUnderTest>> EvaluationJobs::model_for(const ModelRecord& model) {
  std::lock_guard lock(mutex_);
  auto found = models_.find(model.id);
  if (found != models_.end()) return found->second;
  Result<std::unique_ptr<ModelUnderTest>> made = make_model_under_test(model, runtime_);
  if (!made) return made.error();
  std::shared_ptr<ModelUnderTest> shared = std::move(*made);
  models_[model.id] = shared;
  return shared;
}

Status EvaluationJobs::evaluate(Database& db, JobQueue& queue, const Job& job, const std::string& owner) {
  json payload = json::parse(job.payload, nullptr, false);
  if (!payload.is_object() || !payload.contains("model_id") || !payload["model_id"].is_number_integer() ||
      !payload.contains("sample_id") || !payload["sample_id"].is_string()) {
    return make_error("evaluate job payload needs model_id and sample_id: " + job.payload);
  }
  int64_t model_id = payload["model_id"].get<int64_t>();
  std::string sample_id = payload["sample_id"].get<std::string>();
  Result<std::optional<ModelRecord>> model = find_model_by_id(db, model_id);
  if (!model) return model.error();
  Result<std::optional<EvaluationRecord>> done = find_evaluation(db, model_id, sample_id);
  if (!done) return done.error();
  std::optional<EvalItem> item;
  if (*model) {
    Result<std::optional<EvalItem>> found = find_eval_item(db, (*model)->track, sample_id);
    if (!found) return found.error();
    item = *found;
  }
  // A retired or removed model, an item judged already (by an earlier lease or `tailforge eval`):
  // nothing to do.
  if (!*model || !(*model)->active || *done || !item) return queue.complete(job.id, owner);

  // While the model's endpoint is paused, no request goes out; the job waits for the pause's end.
  Result<std::optional<ModelPause>> pause = find_model_pause(db, model_id);
  if (!pause) return pause.error();
  if (*pause && (*pause)->resume_ms > now_ms()) {
    return queue.defer(job.id, owner, (*pause)->resume_ms,
                       "model " + (*model)->name + " paused: " + (*pause)->category + ": " + (*pause)->message);
  }

  Result<std::shared_ptr<ModelUnderTest>> caller = model_for(**model);
  if (!caller) return caller.error();
  Result<JudgedAnswer> judged = evaluate_item(db, **caller, **model, *item, setup_);
  if (!judged) return judged.error();
  if (judged->fault) {
    // The endpoint failed, not the model: nothing is judged, the model's evaluation pauses and
    // the item is asked again when the pause ends.
    const EndpointFault& fault = *judged->fault;
    if (!*pause) spdlog::warn("evaluation of {} paused: {}: {}", (*model)->name, fault.category, fault.message);
    Result<int64_t> resume = pause_after_fault(db, model_id, fault, eval_.endpoint_pause_seconds);
    if (!resume) return resume.error();
    return queue.defer(job.id, owner, *resume, "model " + (*model)->name + " paused: " + fault.category + ": " + fault.message);
  }

  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  Result<bool> stored = store_evaluation(db, **model, *judged);
  if (!stored) return stored.error();
  // The server answered: a pause (this job's or one another job began meanwhile) ends.
  Result<bool> resumed = end_model_pause(db, model_id);
  if (!resumed) return resumed.error();
  if (Status s = queue.complete(job.id, owner); !s) return s;
  if (Status s = transaction.commit(); !s) return s;
  if (*resumed) spdlog::info("evaluation of {} resumed: its endpoint answered", (*model)->name);
  return {};
}

}  // namespace tailforge
