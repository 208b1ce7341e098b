// Registering a model version from its definition, the same for `tailforge model add` and
// POST /v1/models: the definition is a JSON object with name, kind (openai, command, builtin),
// track, endpoint, model_id, command (argv array), timeout_seconds, parent (a model name) and
// retrain_event (the id a trainer was given as TAILFORGE_RETRAIN_EVENT). Errors name the field.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "store/models.h"

namespace tailforge {

// The model a definition describes, validated, before any lookup in a store (its parent's name
// in `parent_name` when asked).
Result<ModelRecord> model_from_definition(const nlohmann::json& definition,
                                          std::optional<std::string>* parent_name = nullptr);

// Validates, resolves parent and retrain event, and stores the model (once per name).
Result<ModelRecord> register_model(Database& db, const nlohmann::json& definition);

}  // namespace tailforge
