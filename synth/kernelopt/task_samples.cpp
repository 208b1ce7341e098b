#include "synth/kernelopt/task_samples.h"

#include <nlohmann/json.hpp>

#include "agents/kernelopt/model_candidates.h"
#include "synth/kernelopt/store.h"

namespace tailforge {
namespace {

constexpr const char* kTaskVariable = "kernel_task";

}  // namespace

Sample kernel_task_sample(const KernelTask& task, const std::string& origin, std::optional<int64_t> cycle,
                          std::vector<std::string> features) {
  Sample sample;
  sample.track = "kernelopt";
  sample.origin = origin;
  sample.language = task.reference_language == "pytorch" ? "python" : "cuda";
  sample.text = task.reference_source;
  sample.template_id = "kernelopt:" + (task.family.empty() ? task.operator_type : task.family);
  nlohmann::json task_json = kernel_task_json(task);
  task_json["origin"] = task.origin;
  sample.variables = nlohmann::json{{"task", task.name}, {kTaskVariable, task_json}}.dump();
  sample.model = origin == "imported" ? "kernelopt-task-file" : "builtin-kernel-tasks";
  sample.domain = task.domain;
  sample.features = std::move(features);
  sample.cycle_id = cycle;
  sample.created_ms = now_ms();
  return sample;
}

Result<KernelTask> kernel_task_of(const Sample& sample) {
  std::string where = "sample " + sample.id.substr(0, 12);
  if (sample.track != "kernelopt" || !sample.variables) return make_error(where + ": not a kernelopt task");
  nlohmann::json variables = nlohmann::json::parse(*sample.variables, nullptr, false);
  if (!variables.is_object() || !variables.contains(kTaskVariable)) {
    return make_error(where + ": not a kernelopt task (a candidate kernel, or a task stored by an older version)");
  }
  Result<KernelTask> task = kernel_task_from_json(variables[kTaskVariable], where);
  if (!task) return task.error();
  task->reference_source = sample.text;
  if (variables[kTaskVariable].contains("origin") && variables[kTaskVariable]["origin"].is_string()) {
    task->origin = variables[kTaskVariable]["origin"].get<std::string>();
  }
  return task;
}

Result<std::string> kernelopt_question(Database&, const Sample& item) {
  Result<KernelTask> task = kernel_task_of(item);
  if (!task) return task.error();
  return kernelopt_question_text(*task);
}

const std::string& kernel_check_question() {
  static const std::string question = [] {
    KernelTask task;
    task.name = "relu_check_1k";
    task.operator_type = kSingleOperator;
    task.domain = "tensor";
    task.description = "relu: out[i] = max(x[i], 0) over 1024 floats";
    task.inputs = {{"x", 1024}};
    task.output = {"out", 1024};
    task.reference_source =
        "#include <cstdint>\n\nconstexpr int N = 1024;\n\n__global__ void relu_kernel(const float* x, float* out) {\n"
        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < N) out[i] = fmaxf(x[i], 0.0f);\n}\n\n"
        "void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {\n"
        "  relu_kernel<<<(N + 255) / 256, 256, 0, stream>>>(inputs[0], output);\n}\n";
    return kernelopt_question_text(task);
  }();
  return question;
}

}  // namespace tailforge
