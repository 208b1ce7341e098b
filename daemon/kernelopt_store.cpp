#include "daemon/kernelopt_store.h"

#include <algorithm>

#include "store/failures.h"
#include "store/samples.h"

namespace tailforge {
namespace {

constexpr const char* kFailureStage = "kernelopt.measure";

nlohmann::json task_spec(const KernelTask& task) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const KernelBuffer& input : task.inputs) inputs.push_back({{"name", input.name}, {"elements", input.elements}});
  return {{"inputs", inputs},
          {"output", {{"name", task.output.name}, {"elements", task.output.elements}}},
          {"input_low", task.input_low},
          {"input_high", task.input_high},
          {"tolerance", task.tolerance},
          {"reference_language", task.reference_language}};
}

void read_spec(const std::string& text, KernelTask& task) {
  nlohmann::json spec = nlohmann::json::parse(text, nullptr, false);
  if (!spec.is_object()) return;
  for (const auto& input : spec.value("inputs", nlohmann::json::array())) {
    task.inputs.push_back({input.value("name", ""), input.value("elements", int64_t{0})});
  }
  nlohmann::json output = spec.value("output", nlohmann::json::object());
  task.output = {output.value("name", ""), output.value("elements", int64_t{0})};
  task.input_low = spec.value("input_low", -1.0f);
  task.input_high = spec.value("input_high", 1.0f);
  task.tolerance = spec.value("tolerance", 1e-3);
  task.reference_language = spec.value("reference_language", "cuda");
}

std::optional<double> positive(double value) { return value > 0 ? std::optional<double>(value) : std::nullopt; }

Statement& bind_optional(Statement& statement, int index, std::optional<double> value) {
  return value ? statement.bind(index, *value) : statement.bind_null(index);
}

}  // namespace

Result<bool> store_kernelopt_task(Database& db, const KernelTask& task) {
  Status inserted = db.cached(
                          "INSERT INTO kernelopt_task (name, operator_type, domain, description, spec, reference_source, "
                          "origin, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (name) DO NOTHING")
                        .bind(1, task.name)
                        .bind(2, task.operator_type)
                        .bind(3, task.domain)
                        .bind(4, task.description)
                        .bind(5, task_spec(task).dump())
                        .bind(6, task.reference_source)
                        .bind(7, task.origin)
                        .bind(8, now_ms())
                        .run();
  if (!inserted) return inserted.error();
  return db.changes() > 0;
}

Result<std::vector<KernelTask>> load_kernelopt_tasks(Database& db, const std::vector<std::string>& names) {
  Statement& select = db.cached(
      "SELECT name, operator_type, domain, description, spec, reference_source, origin FROM kernelopt_task ORDER BY name");
  std::vector<KernelTask> tasks;
  while (select.step()) {
    KernelTask task;
    task.name = select.text(0);
    if (!names.empty() && std::find(names.begin(), names.end(), task.name) == names.end()) continue;
    task.operator_type = select.text(1);
    task.domain = select.text(2);
    task.description = select.text(3);
    read_spec(select.text(4), task);
    task.reference_source = select.text(5);
    task.origin = select.text(6);
    tasks.push_back(std::move(task));
  }
  if (Status s = select.status(); !s) return s.error();
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

  Status stored = db.cached(
                        "INSERT INTO kernelopt_candidate (sample_id, task, strategy, origin, model, reasoning, "
                        "reasoning_length, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
                        "ON CONFLICT (task, sample_id, model) DO NOTHING")
                      .bind(1, inserted->id)
                      .bind(2, task.name)
                      .bind(3, candidate.strategy)
                      .bind(4, candidate.origin)
                      .bind(5, candidate.model)
                      .bind(6, candidate.reasoning)
                      .bind(7, reasoning_length(candidate.reasoning))
                      .bind(8, now_ms())
                      .run();
  if (!stored) return stored.error();
  Statement& select = db.cached("SELECT id FROM kernelopt_candidate WHERE task = ?1 AND sample_id = ?2 AND model = ?3");
  select.bind(1, task.name).bind(2, inserted->id).bind(3, candidate.model);
  if (!select.step()) return make_error("kernelopt candidate of " + task.name + " not found after insert");
  StoredCandidate result{select.int64(0), inserted->id, task.operator_type, candidate};
  select.reset();
  return result;
}

Result<std::vector<CandidateRecord>> load_kernelopt_candidates(Database& db) {
  Statement& select = db.cached(
      "SELECT c.id, c.sample_id, t.operator_type, c.task, c.strategy, c.origin, c.model, c.reasoning, s.text, "
      "m.status, m.category, m.detail, m.device, m.speedup, m.reference_ms, m.candidate_ms, m.reference_spread, "
      "m.candidate_spread FROM kernelopt_candidate c JOIN kernelopt_task t ON t.name = c.task "
      "JOIN sample s ON s.id = c.sample_id "
      "LEFT JOIN kernelopt_measurement m ON m.id = (SELECT MAX(id) FROM kernelopt_measurement WHERE candidate_id = c.id) "
      "ORDER BY c.task, c.id");
  std::vector<CandidateRecord> records;
  while (select.step()) {
    CandidateRecord record;
    record.stored.id = select.int64(0);
    record.stored.sample_id = select.text(1);
    record.stored.operator_type = select.text(2);
    KernelCandidate& candidate = record.stored.candidate;
    candidate.task = select.text(3);
    candidate.strategy = select.text(4);
    candidate.origin = select.text(5);
    candidate.model = select.text(6);
    candidate.reasoning = select.text(7);
    candidate.source = select.text(8);
    record.status = select.optional_text(9).value_or("");
    record.category = select.optional_text(10).value_or("");
    record.detail = select.optional_text(11).value_or("");
    record.device = select.optional_text(12).value_or("");
    record.timed = !select.is_null(13);
    record.speedup = select.is_null(13) ? 0 : select.real(13);
    record.reference_ms = select.is_null(14) ? 0 : select.real(14);
    record.candidate_ms = select.is_null(15) ? 0 : select.real(15);
    record.reference_spread = select.is_null(16) ? 0 : select.real(16);
    record.candidate_spread = select.is_null(17) ? 0 : select.real(17);
    records.push_back(std::move(record));
  }
  if (Status s = select.status(); !s) return s.error();
  return records;
}

Status store_kernelopt_measurement(Database& db, const StoredCandidate& candidate, const KernelTask& task,
                                   const KernelMeasurement& measurement, const std::string& host) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  const HarnessReport* report = measurement.report ? &*measurement.report : nullptr;
  bool timed = measurement.correct() && measurement.timed();
  Statement& insert = db.cached(
      "INSERT INTO kernelopt_measurement (candidate_id, status, category, detail, reference_ms, reference_spread, "
      "candidate_ms, candidate_spread, speedup, max_error, device, sm_clock_khz, memory_clock_khz, host, measured_ms) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
  insert.bind(1, candidate.id).bind(2, measurement.status).bind(3, measurement.category).bind(4, measurement.detail);
  bind_optional(insert, 5, timed ? positive(report->reference->median_ms) : std::nullopt);
  bind_optional(insert, 6, timed ? std::optional<double>(report->reference->spread) : std::nullopt);
  bind_optional(insert, 7, timed ? positive(report->candidate->median_ms) : std::nullopt);
  bind_optional(insert, 8, timed ? std::optional<double>(report->candidate->spread) : std::nullopt);
  bind_optional(insert, 9, timed ? positive(measurement.speedup()) : std::nullopt);
  bind_optional(insert, 10, report ? std::optional<double>(report->max_error) : std::nullopt);
  insert.bind(11, report ? report->device : "");
  if (report) {
    insert.bind(12, report->sm_clock_khz).bind(13, report->memory_clock_khz);
  } else {
    insert.bind_null(12).bind_null(13);
  }
  insert.bind(14, host).bind(15, now_ms());
  if (Status s = insert.run(); !s) return s;

  Status cleared = db.cached("DELETE FROM failure WHERE sample_id = ?1 AND stage = ?2")
                       .bind(1, candidate.sample_id)
                       .bind(2, kFailureStage)
                       .run();
  if (!cleared) return cleared;
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
  return transaction.commit();
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
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  nlohmann::json options_json = {{"high_speedup", options.high_speedup}, {"single_share", options.single_share}};
  if (options.difficulty_thresholds) {
    options_json["difficulty_thresholds"] = {options.difficulty_thresholds->first, options.difficulty_thresholds->second};
  }
  Status inserted = db.cached("INSERT INTO kernelopt_curation (options, result, created_ms) VALUES (?1, ?2, ?3)")
                        .bind(1, options_json.dump())
                        .bind(2, curation_result_to_json(result).dump())
                        .bind(3, now_ms())
                        .run();
  if (!inserted) return inserted.error();
  int64_t id = db.last_insert_rowid();
  int64_t position = 0;
  for (const CurationChoice& choice : result.chosen) {
    Status s = db.cached("INSERT INTO kernelopt_curation_choice (curation_id, candidate_id, position, rule, why) "
                         "VALUES (?1, ?2, ?3, ?4, ?5)")
                   .bind(1, id)
                   .bind(2, choice.candidate_id)
                   .bind(3, position++)
                   .bind(4, choice.rule)
                   .bind(5, choice.why)
                   .run();
    if (!s) return s.error();
  }
  if (Status s = transaction.commit(); !s) return s.error();
  return id;
}

Result<std::vector<CuratedSample>> latest_kernelopt_curation(Database& db) {
  Statement& select = db.cached(
      "SELECT candidate_id, rule, why FROM kernelopt_curation_choice WHERE curation_id = "
      "(SELECT MAX(id) FROM kernelopt_curation) ORDER BY position");
  std::vector<CuratedSample> samples;
  while (select.step()) samples.push_back({select.int64(0), select.text(1), select.text(2)});
  if (Status s = select.status(); !s) return s.error();
  return samples;
}

}  // namespace tailforge
