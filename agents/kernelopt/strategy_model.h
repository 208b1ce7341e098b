// The built-in kernelopt model under test, "built-in strategies": for a task it answers with the
// built-in candidate (builtin_tasks.h) whose strategy it learned for the task's family at the
// task's size class (generated_tasks.h's size/small|medium|large), else for its family, else for
// its operator type, else the family's first recipe. Learning reads the curated rows of a
// kernelopt export (their family, size class, operator type, strategy and measured speedup): per
// key, the strategy of the fastest curated row of the most tasks (one vote a task), ties to the
// higher mean speedup. So a
// version trained on more curated tasks of a family and size answers them with what measured
// fastest there. Deterministic; it measures and stores nothing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "store/models.h"
#include "verifier/kernelopt/kernel_task.h"

namespace tailforge {

// One curated row as the learner reads it.
struct StrategyExample {
  std::string task, family, operator_type, strategy;
  double speedup = 0;  // 0: not timed
  std::string size;    // "size/small", "size/medium", "size/large"; empty when unknown
};

struct StrategyTable {
  std::map<std::string, std::string> by_family_size;    // "family size/x" -> strategy
  std::map<std::string, std::string> by_family;         // family -> strategy
  std::map<std::string, std::string> by_operator_type;  // operator type -> strategy
  int64_t examples = 0;                                 // rows it was learned from
};

// Learns the table from curated rows (untimed rows count as choices with no speed).
StrategyTable learn_strategies(const std::vector<StrategyExample>& examples);

// The table as a model's parameters ({"sized_strategies": {...}, "strategies": {...},
// "operator_strategies": {...}, "examples": N}) and back; unknown or malformed fields read as empty.
nlohmann::json strategy_table_json(const StrategyTable& table);
StrategyTable strategy_table_from_json(const nlohmann::json& parameters);

// The examples of an export's manifest.json (its train split): an error naming the file when it
// cannot be read or is not a kernelopt export.
Result<std::vector<StrategyExample>> read_strategy_examples(const std::string& manifest_path);

// Whether `model` is the built-in strategies (a builtin model of track kernelopt).
bool is_strategy_model(const ModelRecord& model);

// The built-in candidate the table picks for `task`, with its reasoning; an error when the task
// has no built-in candidates (an imported task, or a family the catalog does not build).
Result<KernelCandidate> answer_with_strategy(const StrategyTable& table, const KernelTask& task);

}  // namespace tailforge
