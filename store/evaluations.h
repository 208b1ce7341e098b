// The frozen evaluation set and the models' results on it. An eval_item is a verified sample
// held out of every training export, added at a version of its track's set; an evaluation is
// one model's verdict on one item (its first failing stage and category, with the stage rows as
// detail). Also the samples that training exports used, which never become items. SQL only:
// choosing items and judging answers is synth/eval_set.h and synth/evaluate.h.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

struct EvalItem {
  std::string track;
  std::string sample_id;
  int64_t version = 0;
  std::optional<std::string> reference_target_id;  // artifact id of the oracle's answer
  std::optional<std::string> reference_stdout_id;  // artifact id of the source program's stdout
  int64_t added_ms = 0;
  // "template:<id>" or "tree:<name>": the item's template or source tree is reserved for
  // evaluation (synth/held_out.h); none: drawn by eval.fraction.
  std::optional<std::string> held_out;
};

// The newest version of the track's set (0 while it is empty) and its size (retired items not
// counted).
Result<int64_t> eval_set_version(Database& db, const std::string& track);
Result<int64_t> eval_set_size(Database& db, const std::string& track);
// Verified samples of the track that are neither items nor were ever in a training split, nor a
// kernelopt candidate (an answer to a task, not a question; a task sample carries its task in
// its variables' "kernel_task" and stays one even when a candidate repeats its text), by id.
Result<std::vector<std::string>> eval_candidate_ids(Database& db, const std::string& track);
// How many samples a training split held, by template id (samples without one not counted).
Result<std::map<std::string, int64_t>> trained_samples_by_template(Database& db, const std::string& track);
// Inserts the items (an item already present is left as it is). Use inside a transaction.
Status add_eval_items(Database& db, const std::vector<EvalItem>& items);
// The track's items that are not retired, oldest version first, then by sample id. Only these are
// asked, judged and counted.
Result<std::vector<EvalItem>> list_eval_items(Database& db, const std::string& track);
// Every item of the track, retired ones too: what training exports hold back.
Result<std::set<std::string>> eval_item_ids(Database& db, const std::string& track);
// Retires an item (its evaluations stay, uncounted), saying why; an item retired before keeps its
// first reason. Returns whether it was active.
Result<bool> retire_eval_item(Database& db, const std::string& track, const std::string& sample_id,
                              const std::string& reason);
struct RetiredItem {
  std::string sample_id;
  int64_t version = 0;
  int64_t retired_ms = 0;
  std::string reason;
};
Result<std::vector<RetiredItem>> retired_eval_items(Database& db, const std::string& track);
Result<std::optional<EvalItem>> find_eval_item(Database& db, const std::string& track, const std::string& sample_id);
// The id of the sample's artifact of `kind` made by a stage starting with `stage_prefix`.
Result<std::optional<std::string>> sample_artifact_id(Database& db, const std::string& sample_id,
                                                      const std::string& stage_prefix, const std::string& kind);
Result<std::optional<std::string>> artifact_text(Database& db, const std::string& artifact_id);

// Records that a training export held these samples (the first export that did is kept).
Status record_trained_samples(Database& db, const std::string& snapshot_hash, const std::vector<std::string>& ids);
// Calls `visit(id, text)` for every sample of the track that a training export held.
Status for_each_trained_sample_text(Database& db, const std::string& track,
                                    const std::function<void(const std::string&, const std::string&)>& visit);

struct EvaluationStageRecord {
  std::string stage;
  std::string status;  // ok, fail, timeout, skipped, error
  std::optional<std::string> category;
  std::optional<std::string> message;
  double seconds = 0;
  bool cached = false;
};

struct EvaluationRecord {
  int64_t id = 0;
  int64_t model_id = 0;
  std::string sample_id;
  std::string track;
  bool ok = false;
  std::string status = "fail";  // ok, fail, timeout, error
  std::optional<std::string> stage;     // the first failing stage
  std::optional<std::string> category;  // its category; empty when ok
  std::optional<std::string> message;   // the evidence line
  std::string checked;                  // the deepest check that ran: answer, compile, run, compare
  std::optional<std::string> output_id;  // artifact id of the model's answer
  std::optional<double> metric;
  double seconds = 0;
  std::string details = "{}";  // JSON object
  std::vector<EvaluationStageRecord> stages;
  int64_t created_ms = 0;
};

// Stores the evaluation with its stage rows unless the model already has one for the sample;
// true when stored. Use inside the transaction that completes the evaluate job.
Result<bool> insert_evaluation(Database& db, const EvaluationRecord& evaluation);
Result<std::optional<EvaluationRecord>> find_evaluation(Database& db, int64_t model_id, const std::string& sample_id);
// The track's items that the model has no evaluation for, oldest version first.
Result<std::vector<std::string>> items_without_evaluation(Database& db, int64_t model_id, const std::string& track);

// One evaluation seen from its item: what the model comparisons and the tails read.
struct EvaluationOutcome {
  std::string sample_id;
  int64_t version = 0;  // the item's version
  bool ok = false;
  std::optional<std::string> category;
  std::string checked;
  std::optional<std::string> held_out;  // the item's reserved template or tree (EvalItem::held_out)
};
// The model's evaluations of items of its track, by item version then sample id.
Result<std::vector<EvaluationOutcome>> evaluation_outcomes(Database& db, int64_t model_id);
// Item ids with the feature tag (dimension "feature"), domain ("domain"), API family
// ("api_family") or API name ("api"), among the track's items.
Result<std::set<std::string>> eval_items_with(Database& db, const std::string& track, const std::string& dimension,
                                              const std::string& name);
// Items of the model's evaluations that failed with `category` (or a category under it).
Result<std::set<std::string>> items_failed_with(Database& db, int64_t model_id, const std::string& category);

}  // namespace tailforge
