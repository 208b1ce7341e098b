// Loads tailforge's configuration: config/default.json holds every option with its default;
// a user file overrides a subset. Validation: every key of the user file must exist in the
// defaults with the same JSON type, and a key with a fixed set of values (agents.generator,
// agents.translator) must hold one of them, and a count or cap with a least value (retrain.
// keep_snapshots) must not be below it; an error names the file, the key's JSON path, the value
// and what was expected. Objects that are empty in the defaults ({}) are free-form maps.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace tailforge {

// Checks `overrides` (from `file`) against `defaults` and returns the merged configuration.
Result<nlohmann::json> merge_config(const nlohmann::json& defaults, const nlohmann::json& overrides,
                                    const std::string& file);

// The default configuration merged with `user_file` when it is non-empty.
Result<nlohmann::json> load_config(const std::string& user_file);
// The default configuration merged with each non-empty file in turn, a later one winning.
Result<nlohmann::json> load_config_layers(const std::vector<std::string>& files);

}  // namespace tailforge
