// What `tailforge models` and GET /v1/models report: each model version of a track with its
// accuracy on the frozen evaluation set, its accuracy on the tails that caused its retraining,
// and the difference to its parent, and which model is under test; one track, or every track
// that has models. Two models are only compared on the same evaluation set version: the newest
// version both have evaluated completely. Reads only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/evaluations.h"
#include "store/models.h"
#include "synth/kernelopt/report.h"
#include "synth/model_selection.h"
#include "synth/policy.h"

namespace tailforge {

// A model's evaluations and the newest version of the set it has evaluated every item of.
struct ModelScore {
  ModelRecord model;
  std::vector<EvaluationOutcome> outcomes;  // by item version
  int64_t complete_version = 0;             // 0: not even version 1 is complete
  int64_t items_at(int64_t version) const;  // its evaluations of items up to `version`
  int64_t ok_at(int64_t version) const;
};

// Scores of every model of the track, oldest first; the set's newest version and size too.
struct TrackScores {
  std::string track;
  int64_t eval_version = 0;
  int64_t eval_items = 0;
  std::vector<ModelScore> models;
};
Result<TrackScores> track_scores(Database& db, const std::string& track);

double accuracy(int64_t ok, int64_t items);

// A tail named by the retrain event that produced a model (a model-failure tail of its parent).
struct TailAccuracy {
  std::string dimension, name, signal;
  int64_t items = 0;      // evaluation items of the tail, up to the compared version
  int64_t parent_ok = 0;  // of those, answered correctly by the parent
  int64_t ok = 0;         // and by this model
};

struct ModelSummary {
  ModelRecord model;
  // Older than the newest eval.keep_versions of its lineage (synth/model_versions.h): no longer
  // evaluated each cycle. Unset until mark_superseded ran; the JSON leaves it out then.
  std::optional<bool> superseded;
  // Its evaluation waits for its endpoint (store/models.h): the fault and the server's message.
  std::optional<ModelPause> paused;
  std::optional<std::string> parent;
  int64_t version = 0;  // the set version its accuracy is on (its complete version)
  int64_t items = 0;
  int64_t ok = 0;
  int64_t evaluated = 0;                  // all its evaluations, complete version or not
  std::map<std::string, int64_t> checked;  // evaluations by deepest check: answer, compile, run, compare
  // `items` and `ok` split: the items eval.fraction drew (near-duplicate-free: memorization shows
  // here) and the items of templates and trees reserved for evaluation (generalization).
  int64_t drawn_items = 0, drawn_ok = 0;
  int64_t held_out_items = 0, held_out_ok = 0;
  std::optional<int64_t> retrain_event_id;
  std::string snapshot_hash;
  int64_t snapshot_train_samples = 0;
  // Against the parent, on the newest version both evaluated completely.
  std::optional<int64_t> compared_version;
  int64_t compared_items = 0, parent_ok = 0, compared_ok = 0;
  std::vector<TailAccuracy> tails;
  // Its items and right answers per CUDA API family (an item counts for each family its code
  // uses), up to its complete version.
  std::map<std::string, std::pair<int64_t, int64_t>> families;  // family -> (items, ok)
  // kernelopt: its speed on the evaluation items (synth/kernelopt/version_speed.h).
  std::optional<KernelFigures> kernels;
};

// How near the training rows of the snapshots written for a track came to its evaluation items,
// per version of the set at the time (the manifest's evaluation_set, exact, on the written files).
struct ItemLeakage {
  int64_t version = 0;
  int64_t snapshots = 0;
  std::optional<double> largest_similarity;  // unset: every pair below the compared-from floor
  int64_t items_with_near_duplicate = 0;     // the most in one snapshot
};

struct ModelsReport {
  std::string track;
  int64_t eval_version = 0;
  int64_t eval_items = 0;
  int64_t retired_items = 0;  // items retired as near-duplicates of trained samples (not in eval_items)
  std::vector<ItemLeakage> leakage;  // by version; retrain events from before the measure are not listed
  double near_duplicate_threshold = 0.8;
  std::vector<ModelSummary> models;
  int64_t keep_versions = 0;  // what mark_superseded used
  // The track's model under test and why (synth/model_selection.h). Unset until
  // mark_model_under_test ran; the JSON leaves it out then.
  std::optional<UnderTest> under_test;
  std::map<std::string, int64_t> held_out_groups;  // "template:<id>" / "tree:<name>" -> active items
  // Per reserved template among the groups: the samples a training export held anyway (0 unless the
  // template was reserved after a snapshot trained on it).
  std::map<std::string, int64_t> held_out_trained;
};

Result<ModelsReport> models_report(Database& db, const std::string& track);
// Sets each summary's `superseded` under `keep_versions` (lineages span every track's models).
Status mark_superseded(Database& db, ModelsReport& report, int64_t keep_versions);
// Sets the report's model under test, synth.model_under_test being `configured`.
Status mark_model_under_test(Database& db, ModelsReport& report, const std::optional<std::string>& configured);
nlohmann::json models_report_to_json(const ModelsReport& report);
std::string format_models_table(const ModelsReport& report);

// What `tailforge models` and GET /v1/models list, from the configuration and the request.
struct ModelsListing {
  std::optional<std::string> track;             // one track; unset: every track that has models
  std::string configured_track = "cuda2hip";    // synth's track: listed first, models or not
  std::optional<std::string> configured_model;  // synth.model_under_test
  int64_t keep_versions = 3;                    // eval.keep_versions
  ApiPolicy api;  // synth's api section: the evaluation items' API names are counted before the report
};
// The listing's tracks and keep_versions from a configuration ("synth", "eval"); `source_dir`
// holds the synth policy files. Sections it lacks keep the defaults.
Result<ModelsListing> models_listing_from_config(const nlohmann::json& config, const std::string& source_dir);
// The report of each listed track (the configured track, then the others by name), superseded
// versions and the model under test marked.
Result<std::vector<ModelsReport>> list_models_reports(Database& db, const ModelsListing& listing);
// A single track asked for: its report's object, as models_report_to_json; every track:
// {"tracks": [report, ...]}.
nlohmann::json models_listing_to_json(const std::vector<ModelsReport>& reports, bool one_track);
// One table per report, a blank line between them.
std::string format_models_listing(const std::vector<ModelsReport>& reports);

}  // namespace tailforge
