#include "synth/evaluate_c2x86.h"

#include "agents/c2x86/c_samples.h"
#include "store/evaluations.h"
#include "verifier/c2x86/function_check.h"

namespace tailforge {

Result<std::vector<StageResult>> judge_c2x86_answer(Database& db, const Sample& item, const std::string& answer,
                                                    const EvaluationSetup& setup) {
  Result<CFunction> function = c_function_of(item);
  if (!function) return function.error();
  Result<std::optional<std::string>> cases_id = sample_artifact_id(db, item.id, "", kIoCasesArtifact);
  if (!cases_id) return cases_id.error();
  if (!*cases_id) return make_error("c2x86 item " + item.id.substr(0, 12) + " has no recorded io cases");
  Result<std::optional<std::string>> cases_text = artifact_text(db, **cases_id);
  if (!cases_text) return cases_text.error();
  Result<std::vector<IoCase>> cases = io_cases_from_json(cases_text->value_or(""));
  if (!cases) return make_error("c2x86 item " + item.id.substr(0, 12) + ": " + cases.message());
  function->cases = std::move(*cases);
  const Toolchains& toolchains = setup.toolchains ? *setup.toolchains : detected_toolchains();
  C2x86Check check = check_c_function(*function, {setup.verifier, toolchains, &db, setup.gate}, &answer);
  if (!check.not_run.empty()) return make_error("c2x86 answer for " + item.id.substr(0, 12) + " not run: " + check.not_run);
  return std::move(check.stages);
}

}  // namespace tailforge
