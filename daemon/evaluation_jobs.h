// The daemon's evaluation work: a per-cycle "evaluate_models" step that refreshes the frozen
// evaluation set and queues one "evaluate" job per active model and item it has no result for,
// and the "evaluate" job that asks the model, judges the answer (synth/evaluate.h) and stores
// the evaluation in the transaction that completes the job. An endpoint fault (down, rate
// limited, a wrong key, URL or model id) is never judged: the model's evaluation pauses
// (store/models.h's ModelPause, shown by status, the dashboard and /metrics) and its jobs wait
// in the queue, without using up attempts, for eval.endpoint_pause_seconds or a Retry-After.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "agents/model_runner.h"
#include "daemon/planner.h"
#include "store/queue.h"
#include "synth/eval_set.h"
#include "synth/evaluate.h"

namespace tailforge {

class EvaluationJobs {
 public:
  // `setup.taxonomy`, `runtime`'s pointers and `synth` must outlive this object.
  EvaluationJobs(EvalPolicy eval, const SynthPolicy& synth, EvaluationSetup setup, ModelRuntime runtime)
      : eval_(eval), synth_(synth), setup_(std::move(setup)), runtime_(std::move(runtime)) {}

  Status plan(Database& db, JobQueue& queue, const Job& job, const std::string& owner);
  Status evaluate(Database& db, JobQueue& queue, const Job& job, const std::string& owner);

 private:
  // One caller per model, kept for the daemon's life (an endpoint's breaker state lives in it).
  Result<std::shared_ptr<ModelUnderTest>> model_for(const ModelRecord& model);

  EvalPolicy eval_;
  const SynthPolicy& synth_;
  EvaluationSetup setup_;
  ModelRuntime runtime_;
  std::mutex mutex_;
  std::map<int64_t, std::shared_ptr<ModelUnderTest>> models_;
};

}  // namespace tailforge
