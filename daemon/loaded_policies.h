// The policies and rules a daemon, a worker or a command loads once from its configuration and
// hands to the verification and evaluation jobs: the eval and synth policies, the verifier
// options, the failure taxonomy, the translation rules (builtin models) and the LLM options and
// prompts (openai models). Loading reads the files the configuration names; errors name the file
// or key.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "agents/llm/client.h"
#include "agents/llm/roles.h"
#include "agents/model_runner.h"
#include "agents/translate/hipify.h"
#include "base/result.h"
#include "policies/categorizer.h"
#include "synth/eval_set.h"
#include "synth/evaluate.h"
#include "synth/policy.h"
#include "verifier/options.h"

namespace tailforge {

struct LoadedPolicies {
  EvalPolicy eval;
  SynthPolicy synth;
  VerifierOptions verifier;
  Taxonomy taxonomy;
  HipifyRules hipify;
  LlmOptions llm;
  LlmPrompts prompts;

  // Views for the model callers and the judge; they point into this object.
  ModelRuntime runtime(ResourceGate* gate) const;
  EvaluationSetup setup(ResourceGate* gate, const std::string& work_dir) const;
};

Result<std::unique_ptr<LoadedPolicies>> load_policies(const nlohmann::json& config);

}  // namespace tailforge
