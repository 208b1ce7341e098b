#include "synth/evaluate_c2x86.h"

#include "agents/c2x86/c_samples.h"
#include "verifier/c2x86/function_check.h"

namespace tailforge {

Result<std::vector<StageResult>> judge_c2x86_answer(Database& db, const Sample& item, const std::string& answer,
                                                    const EvaluationSetup& setup) {
  Result<CFunction> function = c_function_with_recorded_cases(db, item);
  if (!function) return function.error();
  const Toolchains& toolchains = setup.toolchains ? *setup.toolchains : detected_toolchains();
  C2x86Check check = check_c_function(*function, {setup.verifier, toolchains, &db, setup.gate}, &answer);
  if (!check.not_run.empty()) return make_error("c2x86 answer for " + item.id.substr(0, 12) + " not run: " + check.not_run);
  return std::move(check.stages);
}

}  // namespace tailforge
