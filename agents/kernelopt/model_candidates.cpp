#include "agents/kernelopt/model_candidates.h"

#include <fmt/format.h>

namespace tailforge {
std::string text_outside_code(const std::string& content) {
  std::string kept;
  bool inside = false;
  size_t start = 0;
  while (start <= content.size()) {
    size_t end = content.find('\n', start);
    std::string line = content.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.rfind("```", 0) == 0) {
      inside = !inside;
    } else if (!inside) {
      kept += line + "\n";
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  size_t first = kept.find_first_not_of(" \n\t"), last = kept.find_last_not_of(" \n\t");
  return first == std::string::npos ? "" : kept.substr(first, last - first + 1);
}

std::string kernelopt_task_prompt(const KernelTask& task) {
  std::string inputs;
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    inputs += fmt::format("  inputs[{}] ({}): {} floats\n", i, task.inputs[i].name, task.inputs[i].elements);
  }
  return fmt::format(
      "Task {} ({} operator): {}\nInputs, uniform in [{}, {}):\n{}Output ({}): {} floats, right within {} x (1 + "
      "|reference|)\n\nReference:\n```{}\n{}```",
      task.name, task.operator_type, task.description, task.input_low, task.input_high, inputs, task.output.name,
      task.output.elements, task.tolerance, task.reference_language == "pytorch" ? "python" : "cuda",
      task.reference_source);
}

std::string kernelopt_question_text(const KernelTask& task) {
  return kernelopt_task_prompt(task) + "\n\n" + kKernelTaskLinePrefix + kernel_task_json(task).dump() + "\n";
}

Result<KernelTask> task_in_question(const std::string& question) {
  size_t at = question.rfind(std::string("\n") + kKernelTaskLinePrefix);
  size_t start = at == std::string::npos ? (question.rfind(kKernelTaskLinePrefix, 0) == 0 ? 0 : std::string::npos) : at + 1;
  if (start == std::string::npos) return make_error("the question has no '" + std::string(kKernelTaskLinePrefix) + "' line");
  start += std::string(kKernelTaskLinePrefix).size();
  size_t end = question.find('\n', start);
  nlohmann::json json = nlohmann::json::parse(question.substr(start, end == std::string::npos ? std::string::npos : end - start),
                                              nullptr, false);
  return kernel_task_from_json(json, "the question's task line");
}

ModelCandidates ask_model_for_candidates(const LlmOptions& options, const LlmPrompts& prompts, const KernelTask& task,
                                         const std::string& model_name, int samples, Database* cache) {
  ModelCandidates result;
  std::string prompt = kernelopt_task_prompt(task);
  for (int k = 0; k < samples; ++k) {
    LlmOptions sample_options = options;
    sample_options.seed = options.seed + k;
    LlmClient client(sample_options);
    AgentOutput output = llm_translate(client, prompts, "kernelopt", prompt, cache);
    if (cache) record_llm_requests(*cache, sample_options, "kernelopt", output);
    std::string kernel = preferred_code_block(output.response, {"cuda", "cu", "cpp", "c++"});
    if (!output.response.ok || kernel.empty()) {
      std::string category = output.response.category.empty() ? "agent.llm.no_code_block" : output.response.category;
      result.failures.push_back(category + ": " + output.response.message);
      continue;
    }
    KernelCandidate candidate;
    candidate.task = task.name;
    candidate.strategy = model_name + "#" + std::to_string(k + 1);
    candidate.origin = "model";
    candidate.model = model_name;
    candidate.reasoning =
        output.response.reasoning.empty() ? text_outside_code(output.response.content) : output.response.reasoning;
    candidate.source = kernel;
    result.candidates.push_back(std::move(candidate));
  }
  return result;
}

Status check_kernelopt_model(const ModelRecord& model) {
  if (model.track == "kernelopt" && model.kind == "openai") return {};
  return make_error("model '" + model.name + "' is a " + model.kind + " model of track " + model.track +
                    ": kernelopt run needs an openai model of track kernelopt");
}

}  // namespace tailforge
