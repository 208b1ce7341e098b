#include "agents/c2x86/c_samples.h"

#include <algorithm>

#include "agents/c2x86/c_generator.h"
#include "agents/generator/generator.h"
#include "store/evaluations.h"

namespace tailforge {

using nlohmann::json;

Sample c2x86_sample(const CFunction& function, const std::string& kind, const std::string& origin,
                    std::optional<int64_t> cycle) {
  Sample sample = generated_sample("c2x86", origin, "c", function.function, kind, function.features, cycle);
  json variables = json{{"name", function.name},
                          {"kind", kind},
                          {"declarations", function.declarations},
                          {"driver", function.driver},
                          {"cases", io_cases_to_json(function.cases)}};
  if (function.driver_is_cpp) variables["driver_language"] = "c++";
  sample.variables = variables.dump();
  return sample;
}

Result<CFunction> c_function_of(const Sample& sample) {
  std::string at = "c2x86 sample " + sample.id.substr(0, 12) + ": ";
  json variables = json::parse(sample.variables.value_or(""), nullptr, false);
  if (!variables.is_object()) return make_error(at + "its variables are not a JSON object");
  CFunction function;
  for (const char* key : {"name", "declarations", "driver"}) {
    if (!variables.contains(key) || !variables[key].is_string()) return make_error(at + "variable '" + key + "' is not a string");
  }
  function.name = variables["name"].get<std::string>();
  function.declarations = variables["declarations"].get<std::string>();
  function.driver = variables["driver"].get<std::string>();
  function.function = sample.text;
  function.driver_is_cpp = variables.value("driver_language", "c") == "c++";
  function.features = sample.features;
  if (!variables.contains("cases")) return make_error(at + "variable 'cases' is missing");
  Result<std::vector<IoCase>> cases = io_cases_from_json(variables["cases"].dump());
  if (!cases) return make_error(at + cases.message());
  function.cases = std::move(*cases);
  return function;
}

json io_cases_to_json(const std::vector<IoCase>& cases) {
  json out = json::array();
  for (const IoCase& io : cases) out.push_back({{"input", io.input}, {"expected", io.expected}});
  return out;
}

Result<std::vector<IoCase>> io_cases_from_json(const std::string& text) {
  json cases = json::parse(text, nullptr, false);
  if (!cases.is_array()) return make_error("io cases are not a JSON array");
  std::vector<IoCase> out;
  for (const json& io : cases) {
    if (!io.is_object() || !io.contains("input") || !io["input"].is_string()) {
      return make_error("io case " + std::to_string(out.size() + 1) + " has no string 'input'");
    }
    std::string expected;
    if (io.contains("expected")) {
      if (!io["expected"].is_string()) return make_error("io case " + std::to_string(out.size() + 1) + ": 'expected' is not a string");
      expected = io["expected"].get<std::string>();
    }
    out.push_back({io["input"].get<std::string>(), expected});
  }
  return out;
}

Result<CFunction> c_function_with_recorded_cases(Database& db, const Sample& sample) {
  const std::string what = "c2x86 sample " + sample.id.substr(0, 12);
  Result<CFunction> function = c_function_of(sample);
  if (!function) return make_error(what + ": " + function.message());
  Result<std::optional<std::string>> cases_id = sample_artifact_id(db, sample.id, "", kIoCasesArtifact);
  if (!cases_id) return cases_id.error();
  if (!*cases_id) return make_error(what + " has no recorded io cases");
  Result<std::optional<std::string>> cases_text = artifact_text(db, **cases_id);
  if (!cases_text) return cases_text.error();
  Result<std::vector<IoCase>> cases = io_cases_from_json(cases_text->value_or(""));
  if (!cases) return make_error(what + ": " + cases.message());
  function->cases = std::move(*cases);
  return function;
}

std::vector<std::string> c_kinds_with_feature(const std::string& tag) {
  std::vector<std::string> kinds;
  for (const std::string& kind : c_function_kinds()) {
    // A kind's tags are the same for every seed but the bit-operation and loop variants, which
    // appear for some seeds only: sample a few to see what the kind can write.
    for (uint64_t index = 0; index < 8; ++index) {
      Result<CFunction> function = generate_c_function({.seed = 1 + index, .index = index, .kind = kind, .cases = 1});
      if (function && std::count(function->features.begin(), function->features.end(), tag)) {
        kinds.push_back(kind);
        break;
      }
    }
  }
  return kinds;
}

}  // namespace tailforge
