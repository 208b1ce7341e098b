// What a verify job reads and what it produces, without the work between: the sample (with its
// bundle when it came from an imported tree), and the chain's result with the pairs a verified
// CUDA program yields, or a kernelopt task's measured candidates. Shared by the sample verifier, the derived pairs, the store step and the
// wire format of a remote worker.
#pragma once

#include <optional>
#include <string>

#include "agents/ptx2cuda/ptx_pairs.h"
#include "agents/sass2rdna3/kernel_pairs.h"
#include "daemon/verify/kernel_task_jobs.h"
#include "store/bundles.h"
#include "store/samples.h"
#include "verifier/chain.h"

namespace tailforge {

struct VerifyInput {
  Sample sample;
  std::optional<Bundle> bundle;  // an imported program with the headers it includes
};

struct VerifyOutput {
  ChainResult chain;
  bool verified = false;
  // The c2x86 sandbox could not run the function: nothing is known yet, the job retries.
  std::string not_run;
  std::optional<KernelPairing> kernel_pairs;
  std::optional<PtxPairing> ptx_pairs;
  // A kernelopt task: the task and its built-in candidates with their measurements, to store.
  std::optional<KernelTaskVerification> kernel_task;
};

}  // namespace tailforge
