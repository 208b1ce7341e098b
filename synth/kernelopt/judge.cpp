#include "synth/kernelopt/judge.h"

#include <fmt/format.h>

#include "base/process.h"
#include "synth/kernelopt/store.h"
#include "synth/kernelopt/task_samples.h"
#include "verifier/kernelopt/measure.h"

namespace tailforge {
namespace {

// The stage that gives the verdict on speed, after the harness's own stages.
StageResult speed_stage(const KernelMeasurement& measured, double target) {
  StageResult stage;
  stage.name = "kernelopt.speed";
  if (!measured.timed()) {
    stage.status = "skipped";
    stage.reason = "timing needs an NVIDIA GPU: " +
                   (measured.detail.empty() ? std::string("the candidate was built and inspected, not run") : measured.detail);
    return stage;
  }
  double speedup = measured.speedup();
  std::string figures = fmt::format("{:.2f}x the reference (target {:.2f}x)", speedup, target);
  if (measured.report && measured.report->roofline_fraction() > 0) {
    figures += fmt::format(", {:.2f} of the roofline", measured.report->roofline_fraction());
  }
  stage.status = speedup >= target ? "ok" : "fail";
  stage.reason = speedup >= target ? figures : "right but slower than the target: " + figures;
  if (speedup < target) stage.category = "kernelopt.slower";
  return stage;
}

// The harness's stages with its verdict's category on the failure it made.
std::vector<StageResult> verdict_stages(const KernelMeasurement& measured, double target) {
  std::vector<StageResult> stages = measured.stages;
  if (measured.status == "fail" || measured.status == "error") {
    bool placed = false;
    for (StageResult& stage : stages) {
      if (stage.status == "ok" || stage.status == "skipped") continue;
      stage.category = measured.category;
      if (stage.reason.empty()) stage.reason = measured.detail;
      placed = true;
      break;
    }
    if (!placed) {  // the program ran and gave a verdict against the candidate
      StageResult verdict;
      verdict.name = "kernelopt.verdict";
      verdict.status = measured.status;
      verdict.category = measured.category;
      verdict.reason = measured.detail;
      stages.push_back(std::move(verdict));
    }
    return stages;
  }
  stages.push_back(speed_stage(measured, target));
  return stages;
}

}  // namespace

std::string kernel_unit_in_answer(const std::string& answer) {
  size_t fence = answer.find("```");
  if (fence == std::string::npos) return answer;
  size_t body = answer.find('\n', fence);
  if (body == std::string::npos) return answer;
  size_t close = answer.find("\n```", body);
  return answer.substr(body + 1, close == std::string::npos ? std::string::npos : close - body);
}

Result<std::vector<StageResult>> judge_kernel_answer(Database& db, const Sample& item, const KernelAnswer& answer,
                                                     const EvaluationSetup& setup, const std::string& work_dir) {
  Result<KernelTask> task = kernel_task_of(item);
  if (!task) return task.error();
  const Toolchains& toolchains = setup.toolchains ? *setup.toolchains : detected_toolchains();
  // A scratch folder the sandboxed program can reach (the evaluation's own folder may sit under
  // a directory only the daemon's user may enter), removed afterwards unless kept to look at.
  Result<std::string> scratch = make_scratch_directory(setup.verifier, "tailforge-kernelopt");
  if (!scratch) return make_error("kernelopt judge: " + scratch.message() + " (under " + work_dir + ")");
  StageContext context{setup.verifier, toolchains, &db, setup.gate, *scratch, {}};
  std::string kernel = kernel_unit_in_answer(std::string(answer.text));
  KernelMeasurement measured = measure_candidate(context, *task, kernel);
  remove_scratch_directory(setup.verifier, *scratch);

  KernelCandidate candidate{task->name, std::string(answer.model_name), "model", std::string(answer.model_name),
                            std::string(answer.reasoning), kernel};
  if (Result<bool> stored = store_kernelopt_task(db, *task); !stored) return stored.error();
  Result<StoredCandidate> stored = store_kernelopt_candidate(db, *task, candidate);
  if (!stored) return stored.error();
  if (Status s = store_kernelopt_measurement(db, *stored, *task, measured, host_name()); !s) return s.error();
  return verdict_stages(measured, setup.kernel_speedup_target);
}

}  // namespace tailforge
