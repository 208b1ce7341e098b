#include "store/kernelopt.h"

namespace tailforge {
namespace {

Statement& bind_optional(Statement& statement, int index, std::optional<double> value) {
  return value ? statement.bind(index, *value) : statement.bind_null(index);
}

}  // namespace

Result<bool> insert_kernelopt_task(Database& db, const KerneloptTaskRow& task) {
  Statement& insert = db.cached(
      "INSERT INTO kernelopt_task (name, operator_type, domain, description, spec, reference_source, "
      "origin, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (name) DO NOTHING");
  insert.bind(1, task.name).bind(2, task.operator_type).bind(3, task.domain).bind(4, task.description);
  insert.bind(5, task.spec).bind(6, task.reference_source).bind(7, task.origin).bind(8, now_ms());
  if (Status inserted = insert.run(); !inserted) return inserted.error();
  return db.changes() > 0;
}

Result<std::vector<KerneloptTaskRow>> kernelopt_task_rows(Database& db) {
  Statement& select = db.cached(
      "SELECT name, operator_type, domain, description, spec, reference_source, origin FROM kernelopt_task ORDER BY name");
  return collect_rows<KerneloptTaskRow>(select, [](const Statement& row, KerneloptTaskRow& t) {
    read_row(row, t.name, t.operator_type, t.domain, t.description, t.spec, t.reference_source, t.origin);
  });
}

Result<int64_t> insert_kernelopt_candidate(Database& db, const KerneloptCandidateRow& candidate) {
  Statement& insert = db.cached(
      "INSERT INTO kernelopt_candidate (sample_id, task, strategy, origin, model, reasoning, "
      "reasoning_length, created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
      "ON CONFLICT (task, sample_id, model) DO NOTHING");
  insert.bind(1, candidate.sample_id).bind(2, candidate.task).bind(3, candidate.strategy).bind(4, candidate.origin);
  insert.bind(5, candidate.model).bind(6, candidate.reasoning).bind(7, candidate.reasoning_length).bind(8, now_ms());
  if (Status stored = insert.run(); !stored) return stored.error();
  Statement& select = db.cached("SELECT id FROM kernelopt_candidate WHERE task = ?1 AND sample_id = ?2 AND model = ?3");
  select.bind(1, candidate.task).bind(2, candidate.sample_id).bind(3, candidate.model);
  if (!select.step()) return make_error("kernelopt candidate of " + candidate.task + " not found after insert");
  int64_t id = select.int64(0);
  select.reset();
  return id;
}

Result<std::vector<KerneloptCandidateRecordRow>> kernelopt_candidate_rows(Database& db) {
  Statement& select = db.cached(
      "SELECT c.id, c.sample_id, t.operator_type, c.task, c.strategy, c.origin, c.model, c.reasoning, s.text, "
      "m.status, m.category, m.detail, m.device, m.speedup, m.reference_ms, m.candidate_ms, m.reference_spread, "
      "m.candidate_spread, c.reasoning_length, m.roofline_ms FROM kernelopt_candidate c JOIN kernelopt_task t ON t.name = c.task "
      "JOIN sample s ON s.id = c.sample_id "
      "LEFT JOIN kernelopt_measurement m ON m.id = (SELECT MAX(id) FROM kernelopt_measurement WHERE candidate_id = c.id) "
      "ORDER BY c.task, c.id");
  return collect_rows<KerneloptCandidateRecordRow>(select, [](const Statement& row, KerneloptCandidateRecordRow& r) {
    KerneloptCandidateRow& c = r.candidate;
    // A candidate never measured has NULL measurement columns: empty texts, unset figures.
    read_row(row, r.id, c.sample_id, r.operator_type, c.task, c.strategy, c.origin, c.model, c.reasoning, r.source,
             r.status, r.category, r.detail, r.device, r.speedup, r.reference_ms, r.candidate_ms, r.reference_spread,
             r.candidate_spread, c.reasoning_length, r.roofline_ms);
  });
}

Status insert_kernelopt_measurement(Database& db, const KerneloptMeasurementRow& measurement) {
  Statement& insert = db.cached(
      "INSERT INTO kernelopt_measurement (candidate_id, status, category, detail, reference_ms, reference_spread, "
      "candidate_ms, candidate_spread, speedup, max_error, device, sm_clock_khz, memory_clock_khz, host, measured_ms, "
      "roofline_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
  insert.bind(1, measurement.candidate_id)
      .bind(2, measurement.status)
      .bind(3, measurement.category)
      .bind(4, measurement.detail);
  bind_optional(insert, 5, measurement.reference_ms);
  bind_optional(insert, 6, measurement.reference_spread);
  bind_optional(insert, 7, measurement.candidate_ms);
  bind_optional(insert, 8, measurement.candidate_spread);
  bind_optional(insert, 9, measurement.speedup);
  bind_optional(insert, 10, measurement.max_error);
  insert.bind(11, measurement.device)
      .bind(12, measurement.sm_clock_khz)
      .bind(13, measurement.memory_clock_khz)
      .bind(14, measurement.host)
      .bind(15, now_ms());
  bind_optional(insert, 16, measurement.roofline_ms);
  return insert.run();
}

Result<int64_t> insert_kernelopt_curation(Database& db, const std::string& options_json, const std::string& result_json,
                                          const std::vector<KerneloptChoiceRow>& choices) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  Status inserted = db.cached("INSERT INTO kernelopt_curation (options, result, created_ms) VALUES (?1, ?2, ?3)")
                        .bind(1, options_json)
                        .bind(2, result_json)
                        .bind(3, now_ms())
                        .run();
  if (!inserted) return inserted.error();
  int64_t id = db.last_insert_rowid();
  int64_t position = 0;
  for (const KerneloptChoiceRow& choice : choices) {
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

Result<std::vector<KerneloptChoiceRow>> latest_kernelopt_choices(Database& db) {
  Statement& select = db.cached(
      "SELECT candidate_id, rule, why FROM kernelopt_curation_choice WHERE curation_id = "
      "(SELECT MAX(id) FROM kernelopt_curation) ORDER BY position");
  return collect_rows<KerneloptChoiceRow>(select, [](const Statement& row, KerneloptChoiceRow& choice) {
    read_row(row, choice.candidate_id, choice.rule, choice.why);
  });
}

}  // namespace tailforge
