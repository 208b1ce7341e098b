#include "agents/kernelopt/strategy_model.h"

#include "agents/kernelopt/builtin_tasks.h"
#include "agents/kernelopt/generated_tasks.h"
#include "base/files.h"

namespace tailforge {
namespace {

struct StrategyScore {
  int64_t tasks = 0;
  double speedup_sum = 0;
  int64_t timed = 0;
  double mean() const { return timed > 0 ? speedup_sum / static_cast<double>(timed) : 0; }
};

// key -> strategy -> score
using Scores = std::map<std::string, std::map<std::string, StrategyScore>>;

void count(Scores& scores, const std::string& key, const StrategyExample& example) {
  if (key.empty() || example.strategy.empty()) return;
  StrategyScore& score = scores[key][example.strategy];
  ++score.tasks;
  if (example.speedup > 0) {
    score.speedup_sum += example.speedup;
    ++score.timed;
  }
}

std::map<std::string, std::string> best_of(const Scores& scores) {
  std::map<std::string, std::string> best;
  for (const auto& [key, strategies] : scores) {
    const std::string* chosen = nullptr;
    const StrategyScore* chosen_score = nullptr;
    for (const auto& [strategy, score] : strategies) {  // by name: ties on both figures go to the first
      if (!chosen || score.tasks > chosen_score->tasks ||
          (score.tasks == chosen_score->tasks && score.mean() > chosen_score->mean())) {
        chosen = &strategy;
        chosen_score = &score;
      }
    }
    if (chosen) best[key] = *chosen;
  }
  return best;
}

std::map<std::string, std::string> string_map(const nlohmann::json& json) {
  std::map<std::string, std::string> map;
  if (!json.is_object()) return map;
  for (auto it = json.begin(); it != json.end(); ++it) {
    if (it.value().is_string()) map[it.key()] = it.value().get<std::string>();
  }
  return map;
}

std::string text_field(const nlohmann::json& json, const char* key) {
  auto found = json.find(key);
  return found != json.end() && found->is_string() ? found->get<std::string>() : "";
}

std::string sized_key(const std::string& family, const std::string& size) {
  return family.empty() || size.empty() ? "" : family + " " + size;
}

std::string size_of(const KernelTask& task) {
  for (const std::string& feature : kernel_task_features(task)) {
    if (feature.rfind("size/", 0) == 0) return feature;
  }
  return "";
}

}  // namespace

StrategyTable learn_strategies(const std::vector<StrategyExample>& examples) {
  // One vote a task: its fastest curated row (the curation may keep several of one task).
  std::map<std::string, const StrategyExample*> best_of_task;
  for (const StrategyExample& example : examples) {
    const StrategyExample*& best = best_of_task[example.task];
    if (!best || example.speedup > best->speedup) best = &example;
  }
  Scores by_family_size, by_family, by_operator;
  for (const auto& [task, best] : best_of_task) {
    const StrategyExample& example = *best;
    count(by_family_size, sized_key(example.family, example.size), example);
    count(by_family, example.family, example);
    count(by_operator, example.operator_type, example);
  }
  StrategyTable table;
  table.by_family_size = best_of(by_family_size);
  table.by_family = best_of(by_family);
  table.by_operator_type = best_of(by_operator);
  table.examples = static_cast<int64_t>(examples.size());
  return table;
}

nlohmann::json strategy_table_json(const StrategyTable& table) {
  return {{"sized_strategies", table.by_family_size},
          {"strategies", table.by_family},
          {"operator_strategies", table.by_operator_type},
          {"examples", table.examples}};
}

StrategyTable strategy_table_from_json(const nlohmann::json& parameters) {
  StrategyTable table;
  if (!parameters.is_object()) return table;
  if (parameters.contains("sized_strategies")) table.by_family_size = string_map(parameters["sized_strategies"]);
  if (parameters.contains("strategies")) table.by_family = string_map(parameters["strategies"]);
  if (parameters.contains("operator_strategies")) table.by_operator_type = string_map(parameters["operator_strategies"]);
  if (parameters.contains("examples") && parameters["examples"].is_number_integer()) {
    table.examples = parameters["examples"].get<int64_t>();
  }
  return table;
}

Result<std::vector<StrategyExample>> read_strategy_examples(const std::string& manifest_path) {
  Result<nlohmann::json> manifest = read_json_file(manifest_path);
  if (!manifest) return manifest.error();
  if (!manifest->is_object() || !manifest->contains("samples") || !(*manifest)["samples"].is_array()) {
    return make_error(manifest_path + ": not a kernelopt export manifest (no samples list)");
  }
  std::vector<StrategyExample> examples;
  for (const nlohmann::json& sample : (*manifest)["samples"]) {
    if (!sample.is_object() || text_field(sample, "split") != "train") continue;
    StrategyExample example{text_field(sample, "task"), text_field(sample, "family"), text_field(sample, "operator_type"),
                            text_field(sample, "strategy")};
    if (sample.contains("features") && sample["features"].is_array()) {
      for (const nlohmann::json& feature : sample["features"]) {
        if (feature.is_string() && feature.get<std::string>().rfind("size/", 0) == 0) example.size = feature.get<std::string>();
      }
    }
    if (sample.contains("timed") && sample["timed"].is_boolean() && sample["timed"].get<bool>() &&
        sample.contains("speedup") && sample["speedup"].is_number()) {
      example.speedup = sample["speedup"].get<double>();
    }
    if (!example.strategy.empty()) examples.push_back(std::move(example));
  }
  return examples;
}

bool is_strategy_model(const ModelRecord& model) { return model.kind == "builtin" && model.track == "kernelopt"; }

Result<KernelCandidate> answer_with_strategy(const StrategyTable& table, const KernelTask& task) {
  std::vector<KernelCandidate> candidates = builtin_candidates(task);
  if (candidates.empty()) {
    return make_error("task " + task.name + " has no built-in candidates (the built-in strategies answer the catalog's "
                      "families only)");
  }
  const std::pair<const std::map<std::string, std::string>*, std::string> keys[] = {
      {&table.by_family_size, sized_key(task.family, size_of(task))},
      {&table.by_family, task.family},
      {&table.by_operator_type, task.operator_type}};
  for (const auto& [learned, key] : keys) {
    auto wanted = learned->find(key);
    if (key.empty() || wanted == learned->end()) continue;
    for (const KernelCandidate& candidate : candidates) {
      if (candidate.strategy == wanted->second) return candidate;
    }
  }
  return candidates.front();
}

}  // namespace tailforge
