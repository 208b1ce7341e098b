#include "daemon/verify/c2x86_jobs.h"

#include "agents/c2x86/c_generator.h"
#include "agents/c2x86/c_samples.h"

namespace tailforge {

Result<Sample> generate_c2x86_sample(uint64_t seed, uint64_t index, int64_t cycle) {
  const std::vector<std::string>& kinds = c_function_kinds();
  Result<CFunction> function = generate_c_function({.seed = seed, .index = index});
  if (!function) return function.error();
  Sample sample = c2x86_sample(*function, kinds[index % kinds.size()], "template", cycle);
  sample.seed = static_cast<int64_t>(seed);
  sample.template_id = "c2x86:" + kinds[index % kinds.size()];
  sample.model = "builtin-c-generator";
  return sample;
}

C2x86Verification verify_c2x86_sample(const Sample& sample, const C2x86CheckOptions& options) {
  C2x86Verification out;
  Result<CFunction> function = c_function_of(sample);
  if (!function) {
    out.stages.push_back(error_stage("c2x86.record", function.message()));
    return out;
  }
  C2x86Check check = check_c_function(*function, options);
  out.verified = check.passed();
  out.not_run = check.not_run;
  for (StageResult& stage : check.stages) {
    if (stage.name == "c2x86.oracle" && check.symbolic) {
      stage.artifacts.push_back({"x86_asm_symbolic", "function.symbolic.s", check.symbolic->text, stage.command,
                                 stage.toolchain_version, false});
    }
    if (stage.name == "c2x86.io" && stage.ok()) {
      stage.artifacts.push_back({kIoCasesArtifact, "cases.json", io_cases_to_json(check.cases).dump(1), stage.command,
                                 "", false});
    }
    out.stages.push_back(std::move(stage));
  }
  if (check.stage("c2x86.oracle") && !check.float_round_trip) {
    StageResult round_trip;
    round_trip.name = "c2x86.float_constant";
    round_trip.status = "fail";
    round_trip.reason = "the oracle's symbolic form does not interpret back to gcc's constant words";
    out.stages.push_back(round_trip);
    out.verified = false;
  }
  return out;
}

}  // namespace tailforge
