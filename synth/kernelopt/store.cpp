#include "synth/kernelopt/store.h"

#include <algorithm>

#include "store/failures.h"
#include "store/kernelopt.h"
#include "store/samples.h"

namespace tailforge {
namespace {

constexpr const char* kFailureStage = "kernelopt.measure";

std::optional<double> positive(double value) { return value > 0 ? std::optional<double>(value) : std::nullopt; }

}  // namespace

Result<bool> store_kernelopt_task(Database& db, const KernelTask& task) {
  return insert_kernelopt_task(db, {task.name, task.operator_type, task.domain, task.description, kernel_task_spec(task).dump(),
                                    task.reference_source, task.origin});
}

Result<std::vector<KernelTask>> load_kernelopt_tasks(Database& db, const std::vector<std::string>& names) {
  Result<std::vector<KerneloptTaskRow>> rows = kernelopt_task_rows(db);
  if (!rows) return rows.error();
  std::vector<KernelTask> tasks;
  for (KerneloptTaskRow& row : *rows) {
    if (!names.empty() && std::find(names.begin(), names.end(), row.name) == names.end()) continue;
    KernelTask task;
    task.name = std::move(row.name);
    task.operator_type = std::move(row.operator_type);
    task.domain = std::move(row.domain);
    task.description = std::move(row.description);
    read_kernel_task_spec(nlohmann::json::parse(row.spec, nullptr, false), task);
    task.reference_source = std::move(row.reference_source);
    task.origin = std::move(row.origin);
    tasks.push_back(std::move(task));
  }
  return tasks;
}

Result<StoredCandidate> store_kernelopt_candidate(Database& db, const KernelTask& task, const KernelCandidate& candidate) {
  Sample sample;
  sample.track = "kernelopt";
  sample.origin = candidate.origin == "model" ? "llm" : "template";
  sample.language = "cuda";
  sample.text = candidate.source;
  sample.template_id = task.name;
  sample.variables = nlohmann::json{{"strategy", candidate.strategy}, {"task", task.name}}.dump();
  if (!candidate.model.empty()) sample.model = candidate.model;
  sample.domain = task.domain;
  sample.features = {"operator/" + task.operator_type, "strategy/" + candidate.strategy};
  sample.created_ms = now_ms();
  Result<InsertOutcome> inserted = insert_sample_if_absent(db, sample);
  if (!inserted) return inserted.error();

  Result<int64_t> id = insert_kernelopt_candidate(
      db, {inserted->id, task.name, candidate.strategy, candidate.origin, candidate.model, candidate.reasoning,
           reasoning_length(candidate.reasoning)});
  if (!id) return id.error();
  return StoredCandidate{*id, inserted->id, task.operator_type, candidate};
}

Result<std::vector<CandidateRecord>> load_kernelopt_candidates(Database& db) {
  Result<std::vector<KerneloptCandidateRecordRow>> rows = kernelopt_candidate_rows(db);
  if (!rows) return rows.error();
  std::vector<CandidateRecord> records;
  for (KerneloptCandidateRecordRow& row : *rows) {
    CandidateRecord record;
    record.stored.id = row.id;
    record.stored.sample_id = row.candidate.sample_id;
    record.stored.operator_type = std::move(row.operator_type);
    KernelCandidate& candidate = record.stored.candidate;
    candidate.task = std::move(row.candidate.task);
    candidate.strategy = std::move(row.candidate.strategy);
    candidate.origin = std::move(row.candidate.origin);
    candidate.model = std::move(row.candidate.model);
    candidate.reasoning = std::move(row.candidate.reasoning);
    candidate.source = std::move(row.source);
    record.status = std::move(row.status);
    record.category = std::move(row.category);
    record.detail = std::move(row.detail);
    record.device = std::move(row.device);
    record.timed = row.speedup.has_value();
    record.speedup = row.speedup.value_or(0);
    record.reference_ms = row.reference_ms.value_or(0);
    record.candidate_ms = row.candidate_ms.value_or(0);
    record.reference_spread = row.reference_spread.value_or(0);
    record.candidate_spread = row.candidate_spread.value_or(0);
    record.roofline_ms = row.roofline_ms.value_or(0);
    records.push_back(std::move(record));
  }
  return records;
}

Status store_kernelopt_measurement(Database& db, const StoredCandidate& candidate, const KernelTask& task,
                                   const KernelMeasurement& measurement, const std::string& host) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  if (Status s = record_kernelopt_measurement(db, candidate, task, measurement, host); !s) return s;
  return transaction.commit();
}

Status record_kernelopt_measurement(Database& db, const StoredCandidate& candidate, const KernelTask& task,
                                    const KernelMeasurement& measurement, const std::string& host) {
  const HarnessReport* report = measurement.report ? &*measurement.report : nullptr;
  bool timed = measurement.correct() && measurement.timed();
  KerneloptMeasurementRow row;
  row.candidate_id = candidate.id;
  row.status = measurement.status;
  row.category = measurement.category;
  row.detail = measurement.detail;
  if (timed) {
    row.reference_ms = positive(report->reference->median_ms);
    row.reference_spread = report->reference->spread;
    row.candidate_ms = positive(report->candidate->median_ms);
    row.candidate_spread = report->candidate->spread;
    row.speedup = positive(measurement.speedup());
    row.roofline_ms = positive(report->roofline_ms);
  }
  if (report) {
    row.max_error = report->max_error;
    row.device = report->device;
    row.sm_clock_khz = report->sm_clock_khz;
    row.memory_clock_khz = report->memory_clock_khz;
  }
  row.host = host;
  if (Status s = insert_kernelopt_measurement(db, row); !s) return s;
  // A candidate whose text is its task's reference (a model that answered with what it was shown)
  // shares the task's sample: its verdict is the measurement's and the evaluation's, and the
  // task's own verification keeps the sample's status and failures.
  bool task_sample = candidate.sample_id == sample_id_for(task.reference_source);
  if (task_sample) return {};
  if (Status s = delete_stage_failure(db, candidate.sample_id, kFailureStage); !s) return s;
  if (measurement.status == "fail" || measurement.status == "error") {
    FailureRecord failure;
    failure.sample_id = candidate.sample_id;
    failure.stage = kFailureStage;
    failure.category = measurement.category;
    failure.message = measurement.detail;
    failure.track = "kernelopt";
    failure.origin = candidate.candidate.origin == "model" ? "llm" : "template";
    failure.domain = task.domain;
    failure.agent = candidate.candidate.origin == "model" ? candidate.candidate.model : "builtin:" + candidate.candidate.strategy;
    if (Status s = insert_failure(db, failure); !s) return s;
  }
  if (measurement.status == "ok" || measurement.status == "fail") {
    if (Status s = set_sample_status(db, candidate.sample_id, measurement.correct() ? "verified" : "failed"); !s) return s;
  }
  return {};
}

nlohmann::json curation_result_to_json(const CurationResult& result) {
  nlohmann::json chosen = nlohmann::json::array(), skipped = nlohmann::json::array(),
                 difficulty = nlohmann::json::array();
  for (const CurationChoice& choice : result.chosen) {
    chosen.push_back({{"candidate_id", choice.candidate_id}, {"task", choice.task}, {"rule", choice.rule}, {"why", choice.why}});
  }
  for (const CurationSkip& skip : result.skipped) skipped.push_back({{"task", skip.task}, {"reason", skip.reason}});
  for (const TaskDifficulty& task : result.difficulty) {
    difficulty.push_back({{"task", task.task}, {"operator_type", task.operator_type}, {"arl", task.arl},
                          {"bucket", task.bucket}, {"candidates", task.candidates}, {"correct", task.correct}});
  }
  return {{"chosen", chosen},
          {"skipped", skipped},
          {"difficulty", difficulty},
          {"chosen_by_operator_type", result.chosen_by_operator_type},
          {"note", result.note}};
}

Result<int64_t> store_kernelopt_curation(Database& db, const CurationOptions& options, const CurationResult& result) {
  nlohmann::json options_json = {{"high_speedup", options.high_speedup}, {"single_share", options.single_share}};
  if (options.difficulty_thresholds) {
    options_json["difficulty_thresholds"] = {options.difficulty_thresholds->first, options.difficulty_thresholds->second};
  }
  std::vector<KerneloptChoiceRow> choices;
  for (const CurationChoice& choice : result.chosen) choices.push_back({choice.candidate_id, choice.rule, choice.why});
  return insert_kernelopt_curation(db, options_json.dump(), curation_result_to_json(result).dump(), choices);
}

Result<std::vector<CuratedSample>> latest_kernelopt_curation(Database& db) {
  Result<std::vector<KerneloptChoiceRow>> choices = latest_kernelopt_choices(db);
  if (!choices) return choices.error();
  std::vector<CuratedSample> samples;
  for (KerneloptChoiceRow& choice : *choices) {
    samples.push_back({choice.candidate_id, std::move(choice.rule), std::move(choice.why)});
  }
  return samples;
}

}  // namespace tailforge
