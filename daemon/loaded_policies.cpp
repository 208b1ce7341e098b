#include "daemon/loaded_policies.h"

#include "agents/translate/hipify_rules.h"
#include "base/files.h"

namespace tailforge {

using nlohmann::json;

ModelRuntime LoadedPolicies::runtime(ResourceGate* gate) const {
  return {.hipify_rules = &hipify,
          .llm = llm,
          .prompts = &prompts,
          .command_timeout_seconds = eval.command_timeout_seconds,
          .gate = gate};
}

EvaluationSetup LoadedPolicies::setup(ResourceGate* gate, const std::string& work_dir) const {
  return {.verifier = verifier,
          .taxonomy = &taxonomy,
          .gate = gate,
          .work_dir = work_dir,
          .kernel_speedup_target = eval.kernelopt_speedup_target};
}

Result<std::unique_ptr<LoadedPolicies>> load_policies(const json& config) {
  auto resources = std::make_unique<LoadedPolicies>();
  Result<EvalPolicy> eval = eval_policy_from_json(config["eval"]);
  if (!eval) return eval.error();
  resources->eval = *eval;
  Result<SynthPolicy> synth = synth_policy_from_config(config["synth"], data_dir());
  if (!synth) return synth.error();
  resources->synth = std::move(*synth);
  Result<VerifierOptions> verifier = verifier_options_from_json(config);
  if (!verifier) return verifier.error();
  resources->verifier = std::move(*verifier);
  Result<Taxonomy> taxonomy = load_taxonomy(data_path(config["taxonomy"]["file"].get<std::string>()));
  if (!taxonomy) return taxonomy.error();
  resources->taxonomy = std::move(*taxonomy);
  Result<HipifyRules> rules = load_hipify_rules(data_path(config["translator"]["rules_file"].get<std::string>()));
  if (!rules) return rules.error();
  resources->hipify = std::move(*rules);
  Result<LlmOptions> llm = llm_options_from_json(config["llm"]);
  if (!llm) return llm.error();
  resources->llm = *llm;
  Result<LlmPrompts> prompts = load_llm_prompts(data_path(llm->prompts_path));
  if (!prompts) return make_error("llm.prompts: " + prompts.message());
  resources->prompts = std::move(*prompts);
  return resources;
}

}  // namespace tailforge
