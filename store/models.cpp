#include "store/models.h"

namespace tailforge {
namespace {

const char* kColumns =
    "id, name, kind, track, endpoint, parameters, parent_id, retrain_event_id, active, created_ms";

void read_model(const Statement& row, ModelRecord& model) {
  read_row(row, model.id, model.name, model.kind, model.track, model.endpoint, model.parameters, model.parent_id,
           model.retrain_event_id, model.active, model.created_ms);
}

Result<std::optional<ModelRecord>> first_model(Statement& select) { return first_row<ModelRecord>(select, read_model); }

bool same_definition(const ModelRecord& a, const ModelRecord& b) {
  return a.kind == b.kind && a.track == b.track && a.endpoint == b.endpoint && a.parameters == b.parameters &&
         a.parent_id == b.parent_id && a.retrain_event_id == b.retrain_event_id;
}

}  // namespace

Result<int64_t> insert_model(Database& db, const ModelRecord& model) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  Result<std::optional<ModelRecord>> existing = find_model(db, model.name);
  if (!existing) return existing.error();
  if (*existing) {
    if (!same_definition(**existing, model)) {
      return make_error("model '" + model.name + "' already exists with another definition (kind " +
                        (*existing)->kind + ", endpoint '" + (*existing)->endpoint.value_or("") + "', parameters " +
                        (*existing)->parameters + ")");
    }
    return (*existing)->id;
  }
  Statement& insert = db.cached(
      "INSERT INTO model (name, kind, track, endpoint, parameters, parent_id, retrain_event_id, active, created_ms)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  insert.bind(1, model.name).bind(2, model.kind).bind(3, model.track).bind(4, model.endpoint);
  insert.bind(5, model.parameters).bind(6, model.parent_id).bind(7, model.retrain_event_id);
  insert.bind(8, int64_t{model.active ? 1 : 0}).bind(9, model.created_ms ? model.created_ms : now_ms());
  if (Status s = insert.run(); !s) return make_error("adding model '" + model.name + "': " + s.message());
  int64_t id = db.last_insert_rowid();
  if (model.retrain_event_id) {
    Statement& link = db.cached("UPDATE retrain_event SET model_id = ?2 WHERE id = ?1");
    if (Status s = link.bind(1, *model.retrain_event_id).bind(2, id).run(); !s) return s.error();
    if (db.changes() == 0) {
      return make_error("adding model '" + model.name + "': no retrain event " +
                        std::to_string(*model.retrain_event_id));
    }
  }
  if (Status s = transaction.commit(); !s) return s.error();
  return id;
}

Result<std::optional<ModelRecord>> find_model(Database& db, const std::string& name) {
  static const std::string sql = std::string("SELECT ") + kColumns + " FROM model WHERE name = ?1";
  Statement& select = db.cached(sql.c_str());
  select.bind(1, name);
  return first_model(select);
}

Result<std::optional<ModelRecord>> find_model_by_id(Database& db, int64_t id) {
  static const std::string sql = std::string("SELECT ") + kColumns + " FROM model WHERE id = ?1";
  Statement& select = db.cached(sql.c_str());
  select.bind(1, id);
  return first_model(select);
}

Result<std::optional<ModelRecord>> model_of_retrain_event(Database& db, int64_t retrain_event_id) {
  static const std::string sql =
      std::string("SELECT ") + kColumns + " FROM model WHERE retrain_event_id = ?1 ORDER BY id LIMIT 1";
  Statement& select = db.cached(sql.c_str());
  select.bind(1, retrain_event_id);
  return first_model(select);
}

Result<std::vector<ModelRecord>> list_models(Database& db, const std::string& track) {
  static const std::string sql =
      std::string("SELECT ") + kColumns + " FROM model WHERE ?1 = '' OR track = ?1 ORDER BY created_ms, id";
  Statement& select = db.cached(sql.c_str());
  select.bind(1, track);
  return collect_rows<ModelRecord>(select, read_model);
}

Result<bool> set_model_active(Database& db, const std::string& name, bool active) {
  Statement& update = db.cached("UPDATE model SET active = ?2 WHERE name = ?1");
  if (Status s = update.bind(1, name).bind(2, int64_t{active ? 1 : 0}).run(); !s) return s.error();
  return db.changes() > 0;
}

Result<int64_t> count_models_named(Database& db, const std::string& prefix) {
  Statement& count = db.cached("SELECT count(*) FROM model WHERE substr(name, 1, length(?1)) = ?1");
  return single_int64(count.bind(1, prefix));
}

Status pause_model_evaluation(Database& db, int64_t model_id, const std::string& category,
                              const std::string& message, int64_t resume_ms) {
  Statement& upsert = db.cached(
      "INSERT INTO model_pause (model_id, category, message, since_ms, resume_ms, faults) VALUES (?1, ?2, ?3, ?4, ?5, 1)"
      " ON CONFLICT (model_id) DO UPDATE SET category = ?2, message = ?3, resume_ms = max(resume_ms, ?5),"
      " faults = faults + 1");
  return upsert.bind(1, model_id).bind(2, category).bind(3, message).bind(4, now_ms()).bind(5, resume_ms).run();
}

Result<bool> end_model_pause(Database& db, int64_t model_id) {
  Statement& remove = db.cached("DELETE FROM model_pause WHERE model_id = ?1");
  if (Status s = remove.bind(1, model_id).run(); !s) return s.error();
  return db.changes() > 0;
}

namespace {

constexpr const char* kPauseColumns =
    "p.model_id, m.name, m.track, p.category, p.message, p.since_ms, p.resume_ms, p.faults"
    " FROM model_pause p JOIN model m ON m.id = p.model_id";

void read_pause(const Statement& row, ModelPause& pause) {
  read_row(row, pause.model_id, pause.model_name, pause.track, pause.category, pause.message, pause.since_ms,
           pause.resume_ms, pause.faults);
}

}  // namespace

Result<std::optional<ModelPause>> find_model_pause(Database& db, int64_t model_id) {
  static const std::string sql = std::string("SELECT ") + kPauseColumns + " WHERE p.model_id = ?1";
  Statement& select = db.cached(sql.c_str());
  select.bind(1, model_id);
  return first_row<ModelPause>(select, read_pause);
}

Result<std::vector<ModelPause>> list_model_pauses(Database& db) {
  static const std::string sql = std::string("SELECT ") + kPauseColumns + " ORDER BY m.name";
  return collect_rows<ModelPause>(db.cached(sql.c_str()), read_pause);
}

}  // namespace tailforge
