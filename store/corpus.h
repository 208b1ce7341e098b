// Corpus queries for long-tail detection, synthesis, export and retraining: shares and yields
// per feature/domain/failure category, stored tail reports, export rows, retrain events, models.
// Only SQL and row mapping; what the numbers mean is decided in synth/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

// ---- shares of the verified corpus -------------------------------------------------------
Result<int64_t> verified_count(Database& db, const std::string& track);
// Verified samples of every track.
Result<int64_t> verified_count_all(Database& db);
Result<std::map<std::string, int64_t>> verified_count_by_feature(Database& db, const std::string& track);
Result<std::map<std::string, int64_t>> verified_count_by_domain(Database& db, const std::string& track);
// Feature tags / domains seen among the track's samples with a verdict, verified or failed (a
// pending sample is not judged yet, or belongs to the next cycle running beside this one).
Result<std::vector<std::string>> features_seen(Database& db, const std::string& track);
Result<std::vector<std::string>> domains_seen(Database& db, const std::string& track);

// ---- pipeline yield ------------------------------------------------------------------------
struct YieldCounts {
  int64_t finished = 0;  // verified + failed
  int64_t failed = 0;
  std::map<std::string, int64_t> failed_by_stage;  // top stage component: generate, translate, ...
};
// Samples with a failure whose category starts with one of `excluded_prefixes` are left out of
// the counts (failures that more samples cannot fix).
Result<YieldCounts> overall_yield(Database& db, const std::string& track,
                                  const std::vector<std::string>& excluded_prefixes = {});
Result<std::map<std::string, YieldCounts>> yield_by_feature(Database& db, const std::string& track,
                                                            const std::vector<std::string>& excluded_prefixes = {});
Result<std::map<std::string, YieldCounts>> yield_by_domain(Database& db, const std::string& track,
                                                           const std::vector<std::string>& excluded_prefixes = {});

// A failure category of the track, how many samples failed with it, and how many verified
// samples were synthesized for it (lineage reason {"dimension":"category","name":...}).
struct FailureCategoryCoverage {
  std::string category;
  int64_t failed_samples = 0;
  int64_t covered_verified = 0;
};
Result<std::vector<FailureCategoryCoverage>> failure_category_coverage(Database& db, const std::string& track);

// ---- model under test ---------------------------------------------------------------------
struct EvaluationCounts {
  int64_t evaluated = 0;
  int64_t failed = 0;
};
// The track's newest active model that has evaluations (whose model is under test is decided
// in synth/model_selection.h).
Result<std::optional<int64_t>> newest_evaluated_model(Database& db, const std::string& track);
// The model's evaluations of the track's items, by "feature:<tag>", "domain:<name>",
// "api_family:<family>" (the families of the item's counted API names, store/api_uses.h) and
// "category:<category>" (for categories, `evaluated` counts every evaluation of the model).
Result<std::map<std::string, EvaluationCounts>> evaluation_counts(Database& db, int64_t model_id);
// Items the model failed that have the feature tag, domain, failure category, API family or API
// name (by dimension), by id: the seeds a model-failure tail is synthesized from.
Result<std::vector<std::string>> model_failure_seed_ids(Database& db, int64_t model_id, const std::string& dimension,
                                                        const std::string& name, int limit);
// Verified samples of the track synthesized for the tail (lineage reason dimension/name) and
// created at or after `since_ms`.
Result<int64_t> verified_synthesized_for_tail(Database& db, const std::string& track, const std::string& dimension,
                                              const std::string& name, int64_t since_ms);

// ---- tail reports -------------------------------------------------------------------------
struct TailReportRow {
  int64_t rank = 0;
  std::string dimension;  // feature, domain, category
  std::string name;
  std::string signal;     // corpus_share, pipeline_yield, model_failure
  double score = 0;
  std::string numbers = "{}";  // JSON object text
};
// Replaces the cycle's rows with `rows` in one transaction.
Status replace_tail_report(Database& db, int64_t cycle_id, const std::vector<TailReportRow>& rows);
Result<std::vector<TailReportRow>> tail_report_rows(Database& db, int64_t cycle_id);
Result<bool> tail_report_exists(Database& db, int64_t cycle_id);
// The newest cycle that has a stored tail report, if any.
Result<std::optional<int64_t>> latest_tail_report_cycle(Database& db);

// Every cycle, with the track's verified samples it made and how many of them have feature tag
// `name` (dimension "feature"), domain `name` ("domain"), use API family or name `name`
// ("api_family", "api"), or were synthesized for failure category `name` ("category", as
// failure_category_coverage counts them). Ordered by cycle id.
struct CycleVerifiedCounts {
  int64_t cycle_id = 0;
  int64_t verified = 0;
  int64_t matching = 0;
};
Result<std::vector<CycleVerifiedCounts>> verified_by_cycle(Database& db, const std::string& track,
                                                           const std::string& dimension, const std::string& name);

// ---- synthesis seeds and dedup ---------------------------------------------------------
// Seeds for a tail value of the track (feature, domain, category, api_family, api): failed
// samples first, then verified ones, by id;
// samples synthesized in `exclude_cycle` are skipped so a re-run picks the same seeds.
// dimension "corpus" (name ignored): any finished sample of the track, verified first.
Result<std::vector<std::string>> tail_seed_ids(Database& db, const std::string& track, const std::string& dimension,
                                               const std::string& name, int64_t exclude_cycle, int limit);
// Calls `visit(id, text)` for every sample of the track, by id.
Status for_each_sample_text(Database& db, const std::string& track,
                            const std::function<void(const std::string&, const std::string&)>& visit);
Result<bool> lineage_edge_exists(Database& db, const std::string& parent_id, const std::string& child_id,
                                 const std::string& relation);

// ---- export ---------------------------------------------------------------------------------
struct ExportRow {
  std::string sample_id;
  std::string track;
  std::string origin;
  std::string domain;
  std::string features = "[]";  // JSON array text
  std::string source;
  std::string target;
  std::string variables = "{}";  // the sample's variables (JSON object text)
  std::string template_id;       // provenance, for the manifest (never in the text): "" when none
  std::optional<int64_t> seed;
};
// Verified samples of `tracks` having both kinds; "text" names the sample's own text. When a
// sample holds several artifacts of a kind, the one named like the kind wins, else all are
// joined in (stage, name) order. Ordered by sample id.
Result<std::vector<ExportRow>> verified_export_rows(Database& db, const std::vector<std::string>& tracks,
                                                    const std::string& source_kind, const std::string& target_kind);

// ---- retrain events -------------------------------------------------------------
struct RetrainEventRecord {
  int64_t id = 0;
  std::optional<int64_t> cycle_id;
  std::string reason = "{}";  // JSON text
  std::string snapshot_hash;
  std::optional<std::string> snapshot_dir;
  std::optional<std::string> manifest;
  std::optional<std::string> command;
  std::string status = "pending";  // pending, running, ok, failed, interrupted
  std::optional<std::string> output;
  std::optional<double> seconds;
  std::optional<int64_t> model_id;         // the version its trainer registered
  int64_t created_ms = 0;
  std::optional<int64_t> parent_model_id;  // the version it retrains
  int64_t attempts = 1;                    // runs of the command (a crash-interrupted one is rerun)
};
Result<std::optional<RetrainEventRecord>> last_retrain_event(Database& db);
Result<std::vector<RetrainEventRecord>> list_retrain_events(Database& db, int limit);
Result<bool> retrain_snapshot_recorded(Database& db, const std::string& snapshot_hash);
// Inserts the event unless its snapshot_hash is already recorded; returns the new id, or
// nothing when the snapshot was recorded before (the trigger must not fire again).
Result<std::optional<int64_t>> insert_retrain_event_if_new(Database& db, const RetrainEventRecord& event);
Status finish_retrain_event(Database& db, int64_t id, const std::string& status, const std::string& output,
                            double seconds);
Result<std::optional<RetrainEventRecord>> find_retrain_event(Database& db, int64_t id);
// At start: events still 'running' belong to a daemon that died (one daemon per database);
// they become 'interrupted'. Returns how many.
Result<int64_t> mark_running_retrain_events_interrupted(Database& db);
Result<std::vector<RetrainEventRecord>> interrupted_retrain_events(Database& db);
// An interrupted event runs again: 'running', one more attempt. False when it was not interrupted.
Result<bool> restart_retrain_event(Database& db, int64_t id);

}  // namespace tailforge
