// The kernelopt track's side of the daemon's generate and verify jobs. A generate job makes one
// task of the built-in generator (agents/kernelopt/generated_tasks.h: families x shapes, from
// the job's seed and index) as a sample. A verify job checks the task's reference with the
// harness (built and inspected everywhere; on an NVIDIA GPU also run and checked against itself on
// fixed and fresh inputs, untimed), then measures the task's built-in candidates (timed on a GPU,
// built only elsewhere, the skip recorded with its reason): the candidates the curation chooses
// from. The store step (verify_jobs.cpp) stores the task, the candidates and their measurements.
#pragma once

#include <cstdint>
#include <vector>

#include "base/result.h"
#include "store/samples.h"
#include "verifier/kernelopt/measure.h"
#include "verifier/stage_runner.h"

namespace tailforge {

Result<Sample> generate_kernel_task_sample(uint64_t seed, uint64_t index, int64_t cycle);

struct MeasuredKernel {
  KernelCandidate candidate;
  KernelMeasurement measurement;
};

struct KernelTaskVerification {
  std::vector<StageResult> stages;  // the reference's: kernelopt.reference.exe, .inspect, .run
  bool verified = false;
  std::optional<KernelTask> task;
  std::vector<MeasuredKernel> candidates;  // measured only once the reference is verified
};

struct KernelTaskCheckOptions {
  const VerifierOptions& verifier;
  const Toolchains& toolchains;
  Database* cache_db = nullptr;
  ResourceGate* gate = nullptr;
};

KernelTaskVerification verify_kernel_task_sample(const Sample& sample, const KernelTaskCheckOptions& options);

}  // namespace tailforge
