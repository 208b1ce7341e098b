// What judging a model's answer runs with: the verifier's options, the failure taxonomy, the
// compile and run slots, a work folder and the toolchains. Shared by the evaluation
// (synth/evaluate.h) and each track's judge (synth/tracks.h); it does nothing itself.
#pragma once

#include <string>

#include "policies/categorizer.h"
#include "verifier/options.h"
#include "verifier/stage.h"
#include "verifier/toolchains.h"

namespace tailforge {

struct EvaluationSetup {
  VerifierOptions verifier;
  const Taxonomy* taxonomy = nullptr;
  ResourceGate* gate = nullptr;     // compile and run slots
  std::string work_dir;             // a folder per evaluation is made and removed under it
  const Toolchains* toolchains = nullptr;  // nullptr: detected_toolchains()
  // kernelopt: a right candidate below this speedup over the reference fails as kernelopt.slower
  // (eval.kernelopt_speedup_target; 1: fast_1, 2: fast_2).
  double kernel_speedup_target = 1.0;
};

}  // namespace tailforge
