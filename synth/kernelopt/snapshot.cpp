#include "synth/kernelopt/snapshot.h"

#include <algorithm>
#include <map>
#include <set>

#include "agents/kernelopt/model_candidates.h"
#include "base/sha256.h"
#include "store/evaluations.h"
#include "synth/kernelopt/task_samples.h"
#include "synth/minhash.h"
#include "synth/split_leakage.h"

namespace tailforge {
namespace {

// The evaluation items' tasks: their names and their questions.
struct ItemTasks {
  std::set<std::string> names;
  std::vector<std::string> questions;
  std::vector<std::string> references;
};

Result<ItemTasks> item_tasks(Database& db) {
  Result<std::set<std::string>> ids = eval_item_ids(db, "kernelopt");
  if (!ids) return ids.error();
  ItemTasks items;
  for (const std::string& id : *ids) {
    Result<std::optional<Sample>> sample = find_sample(db, id);
    if (!sample) return sample.error();
    if (!*sample) continue;
    Result<KernelTask> task = kernel_task_of(**sample);
    if (!task) continue;
    items.names.insert(task->name);
    items.questions.push_back(kernelopt_question_text(*task));
    items.references.push_back(task->reference_source);
  }
  return items;
}

// The tasks whose candidates never train: evaluation items, and tasks whose reference is a
// near-duplicate (synth.dedup) of an item's (the rule rejudge_eval_set applies to trained samples)
// or whose row input is one of an item's question.
Result<std::set<std::string>> held_back_tasks(Database& db, const MinHashOptions& dedup) {
  Result<std::vector<KernelTask>> tasks = load_kernelopt_tasks(db);
  if (!tasks) return tasks.error();
  Result<ItemTasks> items = item_tasks(db);
  if (!items) return items.error();
  std::set<std::string> held = items->names;
  for (const KernelTask& task : *tasks) {
    if (held.count(task.name)) continue;
    std::string input = kernelopt_row_input(task);
    for (size_t i = 0; i < items->questions.size(); ++i) {
      if (shingle_jaccard(task.reference_source, items->references[i], dedup) < dedup.threshold &&
          shingle_jaccard(input, items->questions[i], dedup) < dedup.threshold) {
        continue;
      }
      held.insert(task.name);
      break;
    }
  }
  return held;
}

struct CurationNow {
  CurationResult result;
  std::vector<CuratedSample> curated;
  int64_t held_back = 0;  // candidates of held-back tasks, not curated
};

// ConCuR's rules over the candidates of the tasks that may train.
Result<CurationNow> curate_stored(Database& db, const MinHashOptions& dedup) {
  Result<std::vector<CandidateRecord>> records = load_kernelopt_candidates(db);
  if (!records) return records.error();
  Result<std::set<std::string>> held = held_back_tasks(db, dedup);
  if (!held) return held.error();
  CurationNow now;
  std::vector<CandidateRecord> trainable;
  for (const CandidateRecord& record : *records) {
    if (held->count(record.stored.candidate.task)) {
      ++now.held_back;
    } else {
      trainable.push_back(record);
    }
  }
  now.result = curate_kernelopt(curation_inputs(trainable));
  for (const CurationChoice& choice : now.result.chosen) now.curated.push_back({choice.candidate_id, choice.rule, choice.why});
  return now;
}

std::string hash_of(const std::vector<KerneloptExportRow>& rows) {
  std::vector<std::string> ids;
  for (const KerneloptExportRow& row : rows) ids.push_back(row.sample_id);
  std::sort(ids.begin(), ids.end());
  std::string joined;
  for (const std::string& id : ids) joined += id + "\n";
  return sha256_hex(joined);
}

}  // namespace

std::vector<MeasuredCandidate> curation_inputs(const std::vector<CandidateRecord>& records) {
  std::vector<MeasuredCandidate> measured;
  for (const CandidateRecord& record : records) {
    measured.push_back({record.stored.id, record.stored.candidate.task, record.stored.operator_type,
                        reasoning_length(record.stored.candidate.reasoning), record.status == "ok",
                        record.status == "ok" && record.timed, record.speedup});
  }
  return measured;
}

Result<KerneloptTrainingRows> curated_training_rows(Database& db, const std::vector<CuratedSample>& curated,
                                                    const MinHashOptions& dedup) {
  Result<std::vector<CandidateRecord>> records = load_kernelopt_candidates(db);
  if (!records) return records.error();
  Result<std::vector<KernelTask>> tasks = load_kernelopt_tasks(db);
  if (!tasks) return tasks.error();
  Result<std::set<std::string>> held = held_back_tasks(db, dedup);
  if (!held) return held.error();
  std::map<int64_t, const CandidateRecord*> by_id;
  for (const CandidateRecord& record : *records) by_id[record.stored.id] = &record;
  std::map<std::string, const KernelTask*> task_by_name;
  for (const KernelTask& task : *tasks) task_by_name[task.name] = &task;
  KerneloptTrainingRows out;
  for (const CuratedSample& sample : curated) {
    auto record = by_id.find(sample.candidate_id);
    if (record == by_id.end()) continue;
    const CandidateRecord& candidate = *record->second;
    auto task = task_by_name.find(candidate.stored.candidate.task);
    if (task == task_by_name.end()) continue;
    if (held->count(task->first)) {
      ++out.held_back;
      continue;
    }
    out.rows.push_back({candidate.stored.id, candidate.stored.sample_id, *task->second, candidate.stored.candidate,
                        sample.rule, sample.why, candidate.timed, candidate.speedup, candidate.device});
  }
  return out;
}

Result<std::string> kernelopt_snapshot_hash(Database& db, const ExportOptions& options) {
  Result<CurationNow> now = curate_stored(db, options.policy.dedup);
  if (!now) return now.error();
  Result<KerneloptTrainingRows> rows = curated_training_rows(db, now->curated, options.policy.dedup);
  if (!rows) return rows.error();
  return hash_of(rows->rows);
}

Result<ExportSummary> export_kernelopt_snapshot(Database& db, const ExportOptions& options) {
  Result<CurationNow> now = curate_stored(db, options.policy.dedup);
  if (!now) return now.error();
  Result<KerneloptTrainingRows> rows = curated_training_rows(db, now->curated, options.policy.dedup);
  if (!rows) return rows.error();
  ExportSummary summary;
  summary.snapshot_hash = hash_of(rows->rows);
  summary.held_back_for_evaluation = now->held_back + rows->held_back;
  if (rows->rows.empty()) return summary;  // nothing curated: no timed right candidate yet
  if (Result<int64_t> run = store_kernelopt_curation(db, CurationOptions{}, now->result); !run) return run.error();

  std::vector<std::string> trained;
  for (const KerneloptExportRow& row : rows->rows) {
    trained.push_back(row.sample_id);
    // The task's own sample, where the loop made one (`kernelopt run` stores tasks without).
    std::string task_id = sample_id_for(row.task.reference_source);
    Result<std::optional<Sample>> task_sample = find_sample(db, task_id);
    if (!task_sample) return task_sample.error();
    if (*task_sample) trained.push_back(task_id);
  }
  KerneloptExportOptions written;
  written.out_dir = options.out_dir;
  written.format = options.format;
  written.decontaminate = options.decontaminate;
  written.dedup = options.policy.dedup;
  written.decontamination = options.policy.decontamination;
  written.eval_fraction = options.policy.eval_fraction;
  Result<KerneloptExportSummary> exported = write_kernelopt_export(std::move(rows->rows), written);
  if (!exported) return exported.error();
  summary.samples = exported->samples;
  summary.train_samples = exported->train_samples;
  summary.train_rows = exported->train_samples;
  summary.eval_samples = exported->eval_samples;
  summary.clusters = exported->clusters;
  summary.decontaminated = exported->decontaminated;
  summary.largest_eval_train_similarity = exported->largest_eval_train_similarity;
  summary.eval_rows_with_near_duplicate = exported->eval_rows_with_near_duplicate;
  summary.manifest_path = exported->manifest_path;
  summary.card_path = exported->card_path;
  Result<ItemTasks> items = item_tasks(db);
  if (!items) return items.error();
  Result<SplitLeakage> leakage =
      measure_item_leakage(exported->train_path, options.format,
                           options.format == "sharegpt" ? kKerneloptInstruction : "", items->questions,
                           options.policy.dedup);
  if (!leakage) return make_error("export: " + leakage.message());
  summary.largest_item_train_similarity = leakage->largest_similarity;
  summary.items_with_near_duplicate = leakage->eval_rows_with_near_duplicate;
  summary.evaluation_items = leakage->eval_rows;
  if (Status s = record_trained_samples(db, summary.snapshot_hash, trained); !s) return s.error();
  return summary;
}

}  // namespace tailforge
