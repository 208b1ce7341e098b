// Candidates of the kernelopt track written by a model under test: the task (its description,
// buffer shapes and reference kernel unit) is sent with the kernelopt prompt of
// config/llm_prompts.json, once per sample with its own sampling seed; each answer's reasoning
// (reasoning_content, else the answer's text outside its code block) and its CUDA block become
// one candidate. It does not measure or store them.
#pragma once

#include <string>
#include <vector>

#include "agents/llm/client.h"
#include "agents/llm/roles.h"
#include "store/models.h"
#include "verifier/kernelopt/kernel_task.h"

namespace tailforge {

struct ModelCandidates {
  std::vector<KernelCandidate> candidates;
  std::vector<std::string> failures;  // "agent.llm.<category>: message", one per answer that gave no kernel
};

// Whether `model` can write candidates: an openai model of track kernelopt (the error says what
// it is instead).
Status check_kernelopt_model(const ModelRecord& model);

// The answer's text with its fenced blocks left out: the reasoning of a model that does not
// return reasoning_content.
std::string text_outside_code(const std::string& content);

// What the model is shown for a task: description, buffers, tolerance and the reference.
std::string kernelopt_task_prompt(const KernelTask& task);

// The last line of every kernelopt question a model under test reads: this prefix, then the
// task as one line of JSON (kernel_task_json: name, operator type, buffers, tolerance, FLOPs,
// bytes, family and recipe; the reference is in the prose above it).
inline constexpr const char* kKernelTaskLinePrefix = "tailforge-task: ";

// The task prompt, a blank line, then the task line: what the daemon's evaluation asks.
std::string kernelopt_question_text(const KernelTask& task);

// The task of a question's last task line, without its reference source; an error when no such
// line is there or it holds no task.
Result<KernelTask> task_in_question(const std::string& question);

// Asks `samples` times; sample k uses options.seed + k, so answers differ and each has its own cache entry.
ModelCandidates ask_model_for_candidates(const LlmOptions& options, const LlmPrompts& prompts, const KernelTask& task,
                                         const std::string& model_name, int samples, Database* cache);

}  // namespace tailforge
