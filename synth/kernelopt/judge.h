// The kernelopt track's judge in the daemon's evaluation: a model's answer to a task item is a
// candidate kernel unit, measured by the harness (verifier/kernelopt/measure.h, every check it
// has) against the task's reference, and stored as a candidate of the model with its measurement
// (so fast_p per version is read from the same rows `kernelopt report` reads). The stages it
// returns make the evaluation's verdict: the harness's stages, each failure carrying the
// harness's category (kernelopt.compile.*, kernelopt.output_mismatch, kernelopt.cheat.*, ...),
// then "kernelopt.speed": failed as kernelopt.slower when the candidate is right but below the
// speedup target, skipped (with the reason) when no GPU timed it. No speedup is stored without
// a timed run.
#pragma once

#include <string>
#include <vector>

#include "store/database.h"
#include "store/samples.h"
#include "synth/evaluation_setup.h"

namespace tailforge {

struct KernelAnswer {
  std::string_view text;        // the model's answer: a kernel unit, or text with one fenced
  std::string_view reasoning;   // what it said besides (ModelAnswer::reasoning)
  std::string_view model_name;  // the version that answered
};

// `item` is a task sample (synth/kernelopt/task_samples.h); the harness works in a scratch folder
// of the verifier's (verifier.scratch_root), which the sandbox can reach; `work_dir` names the
// evaluation's folder in errors.
Result<std::vector<StageResult>> judge_kernel_answer(Database& db, const Sample& item, const KernelAnswer& answer,
                                                     const EvaluationSetup& setup, const std::string& work_dir);

// The kernel unit in an answer: its first fenced block (```cuda, ```cu, ```cpp, ```c++ or a bare
// fence), else the whole answer.
std::string kernel_unit_in_answer(const std::string& answer);

}  // namespace tailforge
