// Reading the translator's rule table (policies/hipify_rules.json): every section checked, the
// rules indexed, and the generated identifier table it names merged in
// (agents/translate/hipify_names.h). It translates nothing (agents/translate/hipify.h does).
#pragma once

#include <string>

#include "agents/translate/hipify.h"
#include "base/result.h"

namespace tailforge {

// Loads and validates the table, then merges the generated identifiers it names (a path relative
// to its folder); errors name the file and the JSON path ("headers[3].to").
Result<HipifyRules> load_hipify_rules(const std::string& path);

}  // namespace tailforge
