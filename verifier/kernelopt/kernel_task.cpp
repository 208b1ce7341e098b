#include "verifier/kernelopt/kernel_task.h"

#include <sstream>

namespace tailforge {

int64_t reasoning_length(const std::string& reasoning) {
  std::istringstream words(reasoning);
  int64_t count = 0;
  for (std::string word; words >> word;) ++count;
  return count;
}


nlohmann::json kernel_task_spec(const KernelTask& task) {
  nlohmann::json inputs = nlohmann::json::array();
  for (const KernelBuffer& input : task.inputs) inputs.push_back({{"name", input.name}, {"elements", input.elements}});
  nlohmann::json spec = {{"inputs", inputs},
                         {"output", {{"name", task.output.name}, {"elements", task.output.elements}}},
                         {"input_low", task.input_low},
                         {"input_high", task.input_high},
                         {"tolerance", task.tolerance},
                         {"reference_language", task.reference_language},
                         {"flops", task.flops},
                         {"read_bytes", task.read_bytes}};
  if (!task.family.empty()) spec["family"] = task.family;
  if (!task.recipe.empty()) spec["recipe"] = task.recipe;
  return spec;
}

void read_kernel_task_spec(const nlohmann::json& spec, KernelTask& task) {
  if (!spec.is_object()) return;
  auto number = [&](const char* key, double fallback) {
    auto found = spec.find(key);
    return found != spec.end() && found->is_number() ? found->get<double>() : fallback;
  };
  auto text = [&](const char* key, const std::string& fallback) {
    auto found = spec.find(key);
    return found != spec.end() && found->is_string() ? found->get<std::string>() : fallback;
  };
  auto buffer = [&](const nlohmann::json& json) {
    KernelBuffer read;
    if (!json.is_object()) return read;
    if (json.contains("name") && json["name"].is_string()) read.name = json["name"].get<std::string>();
    if (json.contains("elements") && json["elements"].is_number_integer()) read.elements = json["elements"].get<int64_t>();
    return read;
  };
  task.inputs.clear();
  if (auto inputs = spec.find("inputs"); inputs != spec.end() && inputs->is_array()) {
    for (const nlohmann::json& input : *inputs) task.inputs.push_back(buffer(input));
  }
  if (auto output = spec.find("output"); output != spec.end()) task.output = buffer(*output);
  task.input_low = static_cast<float>(number("input_low", -1.0));
  task.input_high = static_cast<float>(number("input_high", 1.0));
  task.tolerance = number("tolerance", 1e-3);
  task.reference_language = text("reference_language", "cuda");
  task.flops = number("flops", 0);
  task.read_bytes = static_cast<int64_t>(number("read_bytes", 0));
  task.family = text("family", "");
  task.recipe = text("recipe", "");
}

nlohmann::json kernel_task_json(const KernelTask& task) {
  nlohmann::json json = kernel_task_spec(task);
  json["name"] = task.name;
  json["operator_type"] = task.operator_type;
  json["domain"] = task.domain;
  json["description"] = task.description;
  return json;
}

Result<KernelTask> kernel_task_from_json(const nlohmann::json& json, const std::string& where) {
  if (!json.is_object() || !json.contains("name") || !json["name"].is_string() || !json.contains("operator_type") ||
      !json["operator_type"].is_string()) {
    return make_error(where + ": not a kernelopt task (needs name and operator_type)");
  }
  KernelTask task;
  task.name = json["name"].get<std::string>();
  task.operator_type = json["operator_type"].get<std::string>();
  if (json.contains("domain") && json["domain"].is_string()) task.domain = json["domain"].get<std::string>();
  if (json.contains("description") && json["description"].is_string()) {
    task.description = json["description"].get<std::string>();
  }
  read_kernel_task_spec(json, task);
  if (task.inputs.empty() || task.output.elements <= 0) return make_error(where + ": task " + task.name + " has no buffers");
  return task;
}

}  // namespace tailforge
