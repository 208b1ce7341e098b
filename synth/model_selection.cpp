#include "synth/model_selection.h"

#include <nlohmann/json.hpp>

#include "store/corpus.h"

namespace tailforge {

bool is_baseline_learner_version(const ModelRecord& model) {
  if (model.kind != "command") return false;
  nlohmann::json parameters = nlohmann::json::parse(model.parameters, nullptr, false);
  if (!parameters.is_object() || !parameters.contains("command")) return false;
  const nlohmann::json& argv = parameters["command"];
  return argv.is_array() && argv.size() >= 3 && argv[1] == "baseline" && argv[2] == "translate";
}

bool is_users_model(const ModelRecord& model) { return model.kind != "builtin" && !is_baseline_learner_version(model); }

Result<UnderTest> model_under_test(Database& db, const std::optional<std::string>& configured,
                                   const std::string& track) {
  if (configured && !configured->empty()) {
    Result<std::optional<ModelRecord>> named = find_model(db, *configured);
    if (!named) return named.error();
    if (!*named) {
      return UnderTest{std::nullopt, "synth.model_under_test names '" + *configured + "', which is not registered"};
    }
    if ((*named)->track == track) return UnderTest{*named, "synth.model_under_test names it"};
  }
  Result<std::vector<ModelRecord>> models = list_models(db, track);  // oldest first
  if (!models) return models.error();
  for (auto it = models->rbegin(); it != models->rend(); ++it) {
    if (it->active && is_users_model(*it)) {
      return UnderTest{*it,
                       "the newest active model of your own on " + track + "; synth.model_under_test can name another"};
    }
  }
  Result<std::optional<int64_t>> evaluated = newest_evaluated_model(db, track);
  if (!evaluated) return evaluated.error();
  if (!*evaluated) {
    return UnderTest{std::nullopt, models->empty() ? "no model is registered for " + track + " yet"
                                                   : "no active model of " + track + " has evaluations yet"};
  }
  Result<std::optional<ModelRecord>> found = find_model_by_id(db, **evaluated);
  if (!found) return found.error();
  return UnderTest{*found, "no model of your own on " + track + ": the newest active version with evaluations"};
}

}  // namespace tailforge
