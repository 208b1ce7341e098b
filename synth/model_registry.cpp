#include "synth/model_registry.h"

#include "agents/model_runner.h"
#include "store/corpus.h"
#include "synth/tracks.h"

namespace tailforge {

using nlohmann::json;

Result<ModelRecord> model_from_definition(const json& definition, std::optional<std::string>* parent_name) {
  if (!definition.is_object()) return make_error("a model definition must be a JSON object");
  static const char* const known[] = {"name",    "kind",    "track",  "endpoint",      "model_id",
                                      "command", "timeout_seconds", "parent", "retrain_event", "active",
                                      "api_key_env", "ca_file", "request_fields", "learned"};
  for (const auto& item : definition.items()) {
    if (std::none_of(std::begin(known), std::end(known), [&](const char* key) { return item.key() == key; })) {
      return make_error("model definition: '" + item.key() + "' is not a known field");
    }
  }
  ModelRecord model;
  json parameters = json::object();
  std::string field;
  std::optional<std::string> parent;
  try {
    field = "name", model.name = definition.value(field, "");
    field = "kind", model.kind = definition.value(field, "openai");
    field = "track", model.track = definition.value(field, "cuda2hip");
    field = "endpoint";
    if (definition.contains(field) && !definition[field].is_null()) model.endpoint = definition[field].get<std::string>();
    field = "model_id";
    if (definition.contains(field)) parameters[field] = definition[field].get<std::string>();
    field = "command";
    if (definition.contains(field)) parameters[field] = definition[field].get<std::vector<std::string>>();
    field = "timeout_seconds";
    if (definition.contains(field)) parameters[field] = definition[field].get<double>();
    // The name of the variable holding the key, never the key: nothing secret is stored.
    for (const char* text_field : {"api_key_env", "ca_file"}) {
      field = text_field;
      if (definition.contains(field)) parameters[field] = definition[field].get<std::string>();
    }
    field = "request_fields";
    if (definition.contains(field)) {
      if (!definition[field].is_object()) return make_error("model definition: 'request_fields' must be a JSON object");
      parameters[field] = definition[field];
    }
    // What a built-in learner learned (kernelopt's built-in strategies: their strategy table).
    field = "learned";
    if (definition.contains(field)) {
      if (!definition[field].is_object()) return make_error("model definition: 'learned' must be a JSON object");
      parameters[field] = definition[field];
    }
    field = "parent";
    if (definition.contains(field) && !definition[field].is_null()) parent = definition[field].get<std::string>();
    field = "retrain_event";
    if (definition.contains(field) && !definition[field].is_null()) model.retrain_event_id = definition[field].get<int64_t>();
    field = "active", model.active = definition.value(field, true);
  } catch (const json::exception& e) {
    return make_error("model definition: '" + field + "' has the wrong type (" + e.what() + ")");
  }
  model.parameters = parameters.dump();
  if (Status valid = validate_model_definition(model); !valid) return valid.error();
  if (Status taken = check_model_track(model); !taken) return taken.error();
  if (parent_name) *parent_name = parent;
  return model;
}

Result<ModelRecord> register_model(Database& db, const json& definition) {
  std::optional<std::string> parent;
  Result<ModelRecord> defined = model_from_definition(definition, &parent);
  if (!defined) return defined.error();
  ModelRecord model = std::move(*defined);
  if (parent) {
    Result<std::optional<ModelRecord>> found = find_model(db, *parent);
    if (!found) return found.error();
    if (!*found) return make_error("model '" + model.name + "': parent '" + *parent + "' is not a registered model");
    if ((*found)->track != model.track) {
      return make_error("model '" + model.name + "': parent '" + *parent + "' translates " + (*found)->track +
                        ", not " + model.track);
    }
    model.parent_id = (*found)->id;
  }
  if (model.retrain_event_id) {
    Result<std::optional<RetrainEventRecord>> event = find_retrain_event(db, *model.retrain_event_id);
    if (!event) return event.error();
    if (!*event) {
      return make_error("model '" + model.name + "': retrain event " + std::to_string(*model.retrain_event_id) +
                        " does not exist");
    }
    if ((*event)->model_id) {
      Result<std::optional<ModelRecord>> produced = find_model_by_id(db, *(*event)->model_id);
      if (!produced) return produced.error();
      if (*produced && (*produced)->name != model.name) {
        return make_error("model '" + model.name + "': retrain event " + std::to_string(*model.retrain_event_id) +
                          " already produced '" + (*produced)->name + "'");
      }
    }
  }
  Result<int64_t> id = insert_model(db, model);
  if (!id) return id.error();
  model.id = *id;
  Result<std::optional<ModelRecord>> stored = find_model_by_id(db, *id);
  if (!stored) return stored.error();
  if (!*stored) return make_error("model '" + model.name + "' vanished after it was stored");
  return **stored;
}

}  // namespace tailforge
