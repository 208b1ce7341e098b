#include "store/evaluations.h"

namespace tailforge {
namespace {

Result<std::set<std::string>> first_column_set(Statement& select) {
  Result<std::vector<std::string>> rows = text_rows(select);
  if (!rows) return rows.error();
  return std::set<std::string>(rows->begin(), rows->end());
}

void read_eval_item(const Statement& row, EvalItem& item) {
  read_row(row, item.track, item.sample_id, item.version, item.reference_target_id, item.reference_stdout_id,
           item.added_ms, item.held_out);
}

}  // namespace

Result<int64_t> eval_set_version(Database& db, const std::string& track) {
  return single_int64(db.cached("SELECT max(version) FROM eval_item WHERE track = ?1").bind(1, track));
}

Result<int64_t> eval_set_size(Database& db, const std::string& track) {
  return single_int64(
      db.cached("SELECT count(*) FROM eval_item WHERE track = ?1 AND retired_ms IS NULL").bind(1, track));
}

Result<std::vector<std::string>> eval_candidate_ids(Database& db, const std::string& track) {
  Statement& select = db.cached(
      "SELECT s.id FROM sample s WHERE s.track = ?1 AND s.status = 'verified'"
      " AND NOT EXISTS (SELECT 1 FROM eval_item e WHERE e.track = ?1 AND e.sample_id = s.id)"
      " AND NOT EXISTS (SELECT 1 FROM trained_sample t WHERE t.sample_id = s.id)"
      " AND NOT (EXISTS (SELECT 1 FROM kernelopt_candidate k WHERE k.sample_id = s.id)"
      "          AND json_extract(s.variables, '$.kernel_task') IS NULL) ORDER BY s.id");
  select.bind(1, track);
  return text_rows(select);
}

Result<std::map<std::string, int64_t>> trained_samples_by_template(Database& db, const std::string& track) {
  Statement& select = db.cached(
      "SELECT s.template_id, count(*) FROM trained_sample t JOIN sample s ON s.id = t.sample_id"
      " WHERE s.track = ?1 AND s.template_id IS NOT NULL GROUP BY s.template_id");
  select.bind(1, track);
  return counts_by_key(select);
}

Status add_eval_items(Database& db, const std::vector<EvalItem>& items) {
  Statement& insert = db.cached(
      "INSERT INTO eval_item (track, sample_id, version, reference_target_id, reference_stdout_id, added_ms, held_out)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING");
  for (const EvalItem& item : items) {
    insert.bind(1, item.track).bind(2, item.sample_id).bind(3, item.version).bind(4, item.reference_target_id);
    insert.bind(5, item.reference_stdout_id).bind(6, item.added_ms ? item.added_ms : now_ms()).bind(7, item.held_out);
    if (Status s = insert.run(); !s) return make_error("adding evaluation item " + item.sample_id + ": " + s.message());
  }
  return {};
}

Result<std::vector<EvalItem>> list_eval_items(Database& db, const std::string& track) {
  Statement& select = db.cached(
      "SELECT track, sample_id, version, reference_target_id, reference_stdout_id, added_ms, held_out FROM eval_item"
      " WHERE track = ?1 AND retired_ms IS NULL ORDER BY version, sample_id");
  select.bind(1, track);
  return collect_rows<EvalItem>(select, read_eval_item);
}

Result<std::set<std::string>> eval_item_ids(Database& db, const std::string& track) {
  return first_column_set(db.cached("SELECT sample_id FROM eval_item WHERE track = ?1").bind(1, track));
}

Result<bool> retire_eval_item(Database& db, const std::string& track, const std::string& sample_id,
                              const std::string& reason) {
  Statement& update = db.cached(
      "UPDATE eval_item SET retired_ms = ?3, retired_reason = ?4 WHERE track = ?1 AND sample_id = ?2"
      " AND retired_ms IS NULL");
  update.bind(1, track).bind(2, sample_id).bind(3, now_ms()).bind(4, reason);
  if (Status s = update.run(); !s) return make_error("retiring evaluation item " + sample_id + ": " + s.message());
  return db.changes() > 0;
}

Result<std::vector<RetiredItem>> retired_eval_items(Database& db, const std::string& track) {
  Statement& select = db.cached(
      "SELECT sample_id, version, retired_ms, coalesce(retired_reason, '') FROM eval_item"
      " WHERE track = ?1 AND retired_ms IS NOT NULL ORDER BY retired_ms, sample_id");
  select.bind(1, track);
  return collect_rows<RetiredItem>(select, [](const Statement& row, RetiredItem& item) {
    read_row(row, item.sample_id, item.version, item.retired_ms, item.reason);
  });
}

Result<std::optional<EvalItem>> find_eval_item(Database& db, const std::string& track, const std::string& sample_id) {
  Statement& select = db.cached(
      "SELECT track, sample_id, version, reference_target_id, reference_stdout_id, added_ms, held_out FROM eval_item"
      " WHERE track = ?1 AND sample_id = ?2");
  select.bind(1, track).bind(2, sample_id);
  return first_row<EvalItem>(select, read_eval_item);
}

Result<std::optional<std::string>> sample_artifact_id(Database& db, const std::string& sample_id,
                                                      const std::string& stage_prefix, const std::string& kind) {
  Statement& select = db.cached(
      "SELECT sa.artifact_id FROM sample_artifact sa"
      " WHERE sa.sample_id = ?1 AND substr(sa.stage, 1, length(?2)) = ?2 AND sa.kind = ?3"
      " ORDER BY sa.stage, sa.name LIMIT 1");
  select.bind(1, sample_id).bind(2, stage_prefix).bind(3, kind);
  return first_text(select);
}

Result<std::optional<std::string>> artifact_text(Database& db, const std::string& artifact_id) {
  Statement& select = db.cached("SELECT content FROM artifact WHERE id = ?1");
  select.bind(1, artifact_id);
  return first_text(select);
}

Status record_trained_samples(Database& db, const std::string& snapshot_hash, const std::vector<std::string>& ids) {
  Statement& insert = db.cached(
      "INSERT INTO trained_sample (sample_id, snapshot_hash, created_ms) VALUES (?1, ?2, ?3)"
      " ON CONFLICT DO NOTHING");
  int64_t now = now_ms();
  for (const std::string& id : ids) {
    if (Status s = insert.bind(1, id).bind(2, snapshot_hash).bind(3, now).run(); !s) return s;
  }
  return {};
}

Status for_each_trained_sample_text(Database& db, const std::string& track,
                                    const std::function<void(const std::string&, const std::string&)>& visit) {
  Statement& select = db.cached(
      "SELECT s.id, s.text FROM trained_sample t JOIN sample s ON s.id = t.sample_id WHERE s.track = ?1"
      " ORDER BY s.id");
  select.bind(1, track);
  while (select.step()) visit(select.text(0), select.text(1));
  return select.finish();
}

Result<bool> insert_evaluation(Database& db, const EvaluationRecord& e) {
  Statement& insert = db.cached(
      "INSERT INTO evaluation (model_id, sample_id, track, ok, status, stage, category, top_category, message,"
      " checked, output_id, metric, seconds, details, created_ms)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
      " ON CONFLICT (model_id, sample_id) DO NOTHING");
  std::optional<std::string> top;
  if (e.category) top = e.category->substr(0, e.category->find('.'));
  insert.bind(1, e.model_id).bind(2, e.sample_id).bind(3, e.track).bind(4, int64_t{e.ok ? 1 : 0});
  insert.bind(5, e.status).bind(6, e.stage).bind(7, e.category).bind(8, top).bind(9, e.message);
  insert.bind(10, e.checked).bind(11, e.output_id);
  if (e.metric) {
    insert.bind(12, *e.metric);
  } else {
    insert.bind_null(12);
  }
  insert.bind(13, e.seconds).bind(14, e.details).bind(15, e.created_ms ? e.created_ms : now_ms());
  if (Status s = insert.run(); !s) return make_error("storing the evaluation of " + e.sample_id + ": " + s.message());
  if (db.changes() == 0) return false;
  int64_t id = db.last_insert_rowid();
  Statement& stage = db.cached(
      "INSERT INTO evaluation_stage (evaluation_id, stage, status, category, message, seconds, cached, position)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  for (size_t position = 0; position < e.stages.size(); ++position) {
    const EvaluationStageRecord& row = e.stages[position];
    stage.bind(8, static_cast<int64_t>(position));
    stage.bind(1, id).bind(2, row.stage).bind(3, row.status).bind(4, row.category).bind(5, row.message);
    stage.bind(6, row.seconds).bind(7, int64_t{row.cached ? 1 : 0});
    if (Status s = stage.run(); !s) return make_error("storing stage " + row.stage + " of an evaluation: " + s.message());
  }
  return true;
}

Result<std::optional<EvaluationRecord>> find_evaluation(Database& db, int64_t model_id, const std::string& sample_id) {
  Statement& select = db.cached(
      "SELECT id, track, ok, status, stage, category, message, checked, output_id, metric, seconds, details,"
      " created_ms FROM evaluation WHERE model_id = ?1 AND sample_id = ?2");
  select.bind(1, model_id).bind(2, sample_id);
  if (!select.step()) {
    if (Status s = select.finish(); !s) return s.error();
    return std::optional<EvaluationRecord>();
  }
  EvaluationRecord e;
  e.model_id = model_id;
  e.sample_id = sample_id;
  read_row(select, e.id, e.track, e.ok, e.status, e.stage, e.category, e.message, e.checked, e.output_id, e.metric,
           e.seconds, e.details, e.created_ms);
  select.reset();
  Statement& stages = db.cached(
      "SELECT stage, status, category, message, seconds, cached FROM evaluation_stage WHERE evaluation_id = ?1"
      " ORDER BY position");
  stages.bind(1, e.id);
  Result<std::vector<EvaluationStageRecord>> rows =
      collect_rows<EvaluationStageRecord>(stages, [](const Statement& row, EvaluationStageRecord& stage) {
        read_row(row, stage.stage, stage.status, stage.category, stage.message, stage.seconds, stage.cached);
      });
  if (!rows) return rows.error();
  e.stages = std::move(*rows);
  return std::optional<EvaluationRecord>(std::move(e));
}

Result<std::vector<std::string>> items_without_evaluation(Database& db, int64_t model_id, const std::string& track) {
  Statement& select = db.cached(
      "SELECT i.sample_id FROM eval_item i WHERE i.track = ?2 AND i.retired_ms IS NULL"
      " AND NOT EXISTS (SELECT 1 FROM evaluation e WHERE e.model_id = ?1 AND e.sample_id = i.sample_id)"
      " ORDER BY i.version, i.sample_id");
  select.bind(1, model_id).bind(2, track);
  return text_rows(select);
}

Result<std::vector<EvaluationOutcome>> evaluation_outcomes(Database& db, int64_t model_id) {
  Statement& select = db.cached(
      "SELECT e.sample_id, i.version, e.ok, e.category, e.checked, i.held_out FROM evaluation e"
      " JOIN model m ON m.id = e.model_id"
      " JOIN eval_item i ON i.track = m.track AND i.sample_id = e.sample_id"
      " WHERE e.model_id = ?1 AND i.retired_ms IS NULL ORDER BY i.version, e.sample_id");
  select.bind(1, model_id);
  return collect_rows<EvaluationOutcome>(select, [](const Statement& row, EvaluationOutcome& o) {
    read_row(row, o.sample_id, o.version, o.ok, o.category, o.checked, o.held_out);
  });
}

Result<std::set<std::string>> eval_items_with(Database& db, const std::string& track, const std::string& dimension,
                                              const std::string& name) {
  if (dimension == "feature") {
    return first_column_set(db.cached("SELECT i.sample_id FROM eval_item i JOIN sample_feature f"
                                      " ON f.sample_id = i.sample_id WHERE i.track = ?1 AND f.tag = ?2"
                                      " AND i.retired_ms IS NULL")
                                .bind(1, track)
                                .bind(2, name));
  }
  if (dimension == "domain") {
    return first_column_set(db.cached("SELECT i.sample_id FROM eval_item i JOIN sample s ON s.id = i.sample_id"
                                      " WHERE i.track = ?1 AND s.domain = ?2 AND i.retired_ms IS NULL")
                                .bind(1, track)
                                .bind(2, name));
  }
  if (dimension == "api_family" || dimension == "api") {
    Statement& select = dimension == "api_family"
                            ? db.cached("SELECT DISTINCT i.sample_id FROM eval_item i JOIN sample_api a"
                                        " ON a.sample_id = i.sample_id WHERE i.track = ?1 AND a.family = ?2"
                                        " AND i.retired_ms IS NULL")
                            : db.cached("SELECT i.sample_id FROM eval_item i JOIN sample_api a"
                                        " ON a.sample_id = i.sample_id WHERE i.track = ?1 AND a.identifier = ?2"
                                        " AND i.retired_ms IS NULL");
    return first_column_set(select.bind(1, track).bind(2, name));
  }
  return make_error("evaluation items: unknown dimension '" + dimension + "' (feature, domain, api_family or api)");
}

Result<std::set<std::string>> items_failed_with(Database& db, int64_t model_id, const std::string& category) {
  return first_column_set(db.cached("SELECT sample_id FROM evaluation WHERE model_id = ?1 AND ok = 0"
                                    " AND (category = ?2 OR substr(category, 1, length(?2) + 1) = ?2 || '.')")
                              .bind(1, model_id)
                              .bind(2, category));
}

}  // namespace tailforge
