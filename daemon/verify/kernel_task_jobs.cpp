#include "daemon/verify/kernel_task_jobs.h"

#include "agents/kernelopt/builtin_tasks.h"
#include "agents/kernelopt/generated_tasks.h"
#include "synth/kernelopt/task_samples.h"

namespace tailforge {
namespace {

// Measures `source` against the task in a scratch folder of its own.
KernelMeasurement measure_in_scratch(const KernelTaskCheckOptions& options, const KernelTask& task,
                                     const std::string& source, const HarnessOptions& harness) {
  Result<std::string> scratch = make_scratch_directory(options.verifier, "tailforge-kernelopt");
  if (!scratch) {
    KernelMeasurement failed;
    failed.status = "error";
    failed.category = "kernelopt.harness";
    failed.detail = scratch.message();
    failed.stages.push_back(error_stage("kernelopt.exe", scratch.message()));
    return failed;
  }
  StageContext context{options.verifier, options.toolchains, options.cache_db, options.gate, *scratch, {}};
  KernelMeasurement measured = measure_candidate(context, task, source, harness);
  remove_scratch_directory(options.verifier, *scratch);
  return measured;
}

}  // namespace

Result<Sample> generate_kernel_task_sample(uint64_t seed, uint64_t index, int64_t cycle) {
  KernelTask task = generated_kernel_task(seed, index);
  Sample sample = kernel_task_sample(task, "template", cycle, kernel_task_features(task));
  sample.seed = static_cast<int64_t>(seed);
  return sample;
}

KernelTaskVerification verify_kernel_task_sample(const Sample& sample, const KernelTaskCheckOptions& options) {
  KernelTaskVerification out;
  Result<KernelTask> task = kernel_task_of(sample);
  if (!task) {
    out.stages.push_back(error_stage("kernelopt.reference", task.message()));
    return out;
  }
  out.task = *task;
  if (task->reference_language != "cuda") {
    out.stages.push_back(error_stage("kernelopt.reference", "the daemon grows CUDA-reference tasks; a " +
                                     task->reference_language + " reference is measured by `tailforge kernelopt run`"));
    return out;
  }
  // The reference against itself: it builds, and where a GPU runs it, it writes every output and
  // gives the same answer on fixed and fresh inputs. Not timed: its speed is measured beside
  // each candidate.
  HarnessOptions untimed;
  untimed.time_kernels = false;
  KernelMeasurement reference = measure_in_scratch(options, *task, task->reference_source, untimed);
  bool failed = false, ran = false;
  for (StageResult stage : reference.stages) {
    stage.name = "kernelopt.reference" + stage.name.substr(std::string("kernelopt").size());
    if (stage.status == "fail" || stage.status == "error" || stage.status == "timeout") {
      failed = true;
      if (!stage.category) stage.category = reference.category;
    }
    ran = ran || stage.ok();
    out.stages.push_back(std::move(stage));
  }
  if (!failed && (reference.status == "fail" || reference.status == "error")) {
    StageResult verdict = error_stage("kernelopt.reference.verdict", reference.detail);
    verdict.status = "fail";
    verdict.category = "kernelopt.reference_error";
    out.stages.push_back(std::move(verdict));
    failed = true;
  }
  out.verified = ran && !failed;
  if (!out.verified) return out;
  for (const KernelCandidate& candidate : builtin_candidates(*task)) {
    out.candidates.push_back({candidate, measure_in_scratch(options, *task, candidate.source, HarnessOptions{})});
  }
  return out;
}

}  // namespace tailforge
