#include "policies/config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "base/files.h"

namespace tailforge {

namespace fs = std::filesystem;

namespace {

std::string type_name(const nlohmann::json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_boolean()) return "true or false";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

bool same_kind(const nlohmann::json& expected, const nlohmann::json& actual) {
  if (expected.is_null()) return true;  // a null default accepts any value (optional setting)
  if (expected.is_number_integer()) return actual.is_number_integer();
  if (expected.is_number()) return actual.is_number();
  return expected.type() == actual.type();
}

std::string value_text(const nlohmann::json& value) {
  std::string text = value.dump();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

// Keys that take one of a fixed set of strings, by JSON path.
const std::map<std::string, std::vector<std::string>> kAllowedValues = {
    {"/agents/generator", {"builtin", "llm"}},
    {"/agents/translator", {"builtin", "llm"}},
    {"/agents/synthesizer", {"builtin", "llm"}},
    {"/retrain/on_interrupted", {"rerun", "fail"}},
};

// Integer keys with a least value, by JSON path (caps and retention counts of the disk rules).
const std::map<std::string, int64_t> kMinimumValues = {
    {"/store/llm_cache_max_mb", 0},
    {"/daemon/scratch_max_age_minutes", 1},
    {"/eval/keep_versions", 0},
    {"/retrain/keep_snapshots", 0},
};

// Keys whose null default means "chosen when needed" (retrain.command: by the model under test)
// and that otherwise take an argv, by JSON path.
const std::set<std::string> kNullOrArgv = {"/retrain/command"};

bool is_argv_or_null(const nlohmann::json& value) {
  if (value.is_null()) return true;
  if (!value.is_array()) return false;
  return std::all_of(value.begin(), value.end(), [](const nlohmann::json& word) { return word.is_string(); });
}

Status check_allowed_value(const std::string& key_path, const nlohmann::json& value, const std::string& file) {
  auto minimum = kMinimumValues.find(key_path);
  if (minimum != kMinimumValues.end() && value.is_number_integer() && value.get<int64_t>() < minimum->second) {
    return make_error(file + ": key " + key_path + " has value " + value_text(value) + ", expected an integer >= " +
                      std::to_string(minimum->second));
  }
  auto allowed = kAllowedValues.find(key_path);
  if (allowed == kAllowedValues.end()) return {};
  const std::vector<std::string>& choices = allowed->second;
  if (value.is_string() && std::find(choices.begin(), choices.end(), value.get<std::string>()) != choices.end()) {
    return {};
  }
  std::string expected;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) expected += i + 1 == choices.size() ? " or " : ", ";
    expected += "\"" + choices[i] + "\"";
  }
  return make_error(file + ": key " + key_path + " has value " + value_text(value) + ", expected " + expected);
}

Status merge_into(nlohmann::json& target, const nlohmann::json& overrides, const std::string& path,
                  const std::string& file) {
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    std::string key_path = path + "/" + it.key();
    bool free_form = target.empty();
    if (!free_form && !target.contains(it.key())) {
      return make_error(file + ": unknown key " + key_path + " (value " + value_text(it.value()) + ")");
    }
    if (free_form) {
      target[it.key()] = it.value();
      continue;
    }
    nlohmann::json& slot = target[it.key()];
    if (kNullOrArgv.count(key_path)) {
      if (!is_argv_or_null(it.value())) {
        return make_error(file + ": key " + key_path + " has value " + value_text(it.value()) +
                          ", expected an array of strings or null");
      }
      slot = it.value();
      continue;
    }
    if (!same_kind(slot, it.value())) {
      return make_error(file + ": key " + key_path + " has value " + value_text(it.value()) + ", expected " +
                        type_name(slot));
    }
    if (slot.is_object()) {
      if (Status s = merge_into(slot, it.value(), key_path, file); !s) return s;
    } else {
      if (Status s = check_allowed_value(key_path, it.value(), file); !s) return s;
      slot = it.value();
    }
  }
  return {};
}

}  // namespace

Result<nlohmann::json> merge_config(const nlohmann::json& defaults, const nlohmann::json& overrides,
                                    const std::string& file) {
  if (!overrides.is_object()) return make_error(file + ": the configuration must be a JSON object");
  nlohmann::json merged = defaults;
  if (Status s = merge_into(merged, overrides, "", file); !s) return s.error();
  return merged;
}

Result<nlohmann::json> load_config(const std::string& user_file) {
  return load_config_layers({user_file});
}

Result<nlohmann::json> load_config_layers(const std::vector<std::string>& files) {
  Result<nlohmann::json> merged = read_json_file(data_path("config/default.json"));
  if (!merged) return merged.error();
  for (const std::string& file : files) {
    if (file.empty()) continue;
    Result<nlohmann::json> overrides = read_json_file(file);
    if (!overrides) return overrides.error();
    merged = merge_config(*merged, *overrides, file);
    if (!merged) return merged.error();
  }
  return merged;
}

}  // namespace tailforge
