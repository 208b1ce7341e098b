// The c2x86 track's side of the daemon's generate and verify jobs: a generate job makes one C
// function of the built-in generator (its kinds rotating with the job's index) as a sample; a
// verify job checks a c2x86 sample as the track does (verifier/c2x86/function_check.h) and gives
// the stages to store, the oracle assembly's symbolic form ("x86_asm_symbolic", what a model
// learns) and the IO cases with their expected outputs ("io_cases") riding on them as artifacts.
#pragma once

#include <cstdint>
#include <vector>

#include "base/result.h"
#include "store/samples.h"
#include "verifier/c2x86/function_check.h"

namespace tailforge {

Result<Sample> generate_c2x86_sample(uint64_t seed, uint64_t index, int64_t cycle);

struct C2x86Verification {
  std::vector<StageResult> stages;
  bool verified = false;
  std::string not_run;  // the sandbox could not run the function: retry, store nothing
};

C2x86Verification verify_c2x86_sample(const Sample& sample, const C2x86CheckOptions& options);

}  // namespace tailforge
