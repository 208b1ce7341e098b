// Reads one section (a JSON object) of a configuration or policy file into a struct, with errors
// as values that name the key ("retrain.max_attempts must be an integer"). A plain struct lists
// its keys once, with NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT next to its reader (its JSON
// keys are its field names); the struct's current values, written as JSON, then say which keys
// the section may hold and the JSON kind each takes, as config/default.json does for
// merge_config (policies/config.h). Checked: a key the struct lacks, a value of another kind
// (true or false, a number, an integer, a string, an array, an object), a negative number where
// the rules or an unsigned field refuse it, and any value nlohmann cannot convert. Ranges and
// allowed values stay with each reader.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace tailforge {

struct SectionRules {
  bool refuse_negative_numbers = false;  // a policy file's numbers are counts, shares and weights
  bool unknown_keys_allowed = false;     // another module reads the section's other keys
  std::vector<std::string> other_keys;   // keys besides the struct's fields, which the caller reads
};

// `value`, read for `where` ("retrain.command"), against `expected` (the field's current value
// as JSON): the same kind, and not negative where the rules or an unsigned field refuse it.
Status check_config_value(const nlohmann::json& value, const nlohmann::json& expected, const std::string& where,
                          const SectionRules& rules);
// "<where>: wrong type (<what>)", for a value of the right kind that nlohmann could not convert
// (an array of strings holding a number).
Error config_conversion_error(const std::string& where, const std::exception& error);
// Every key of `section` (an object, at `path`) is one of `keys`; else "<path>.<key> is not a known key".
Status check_config_keys(const nlohmann::json& section, const std::string& path,
                         std::initializer_list<const char*> keys);

// Reads `value` into `out`, which holds the default.
template <typename T>
Status read_config_value(const nlohmann::json& value, const std::string& where, T& out,
                         const SectionRules& rules = {}) {
  if (Status s = check_config_value(value, nlohmann::json(out), where, rules); !s) return s;
  try {
    value.get_to(out);
  } catch (const nlohmann::json::exception& e) {
    return config_conversion_error(where, e);
  }
  return {};
}

// Reads the object `section`, at `path` ("eval"), into the struct `out`; a key it does not hold
// keeps out's value, and so do the fields the struct's macro does not list.
template <typename T>
Status read_config_section(const nlohmann::json& section, const std::string& path, T& out,
                           const SectionRules& rules = {}) {
  if (!section.is_object()) return make_error(path + " must be an object");
  nlohmann::json fields = out;
  auto is_other_key = [&](const std::string& key) {
    return std::find(rules.other_keys.begin(), rules.other_keys.end(), key) != rules.other_keys.end();
  };
  for (const auto& [key, value] : section.items()) {
    if (!fields.contains(key) && !rules.unknown_keys_allowed && !is_other_key(key)) {
      return make_error(path + "." + key + " is not a known key");
    }
  }
  // Key by key, so that a conversion error names its key.
  for (const auto& [key, value] : section.items()) {
    if (!fields.contains(key)) continue;
    std::string where = path + "." + key;
    if (Status s = check_config_value(value, fields[key], where, rules); !s) return s;
    fields[key] = value;
    try {
      fields.get_to(out);
    } catch (const nlohmann::json::exception& e) {
      return config_conversion_error(where, e);
    }
  }
  return {};
}

}  // namespace tailforge
