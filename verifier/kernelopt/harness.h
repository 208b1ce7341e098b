// The measuring program of the kernelopt track: puts a task's reference and one candidate kernel
// unit into one CUDA program that checks the candidate against the reference and times both with
// CUDA events, and reads what that program prints. It compiles and runs nothing itself
// (measure.h does). The program runs its checks in this order, each on the outputs the reference
// computes in the same process:
//   1. fixed inputs, candidate writing a poisoned buffer of its own: inputs unchanged afterwards
//      (else cheat.input_write); what a caller that synchronizes only the harness's stream sees
//      equals what is there after a device-wide synchronize (else cheat.unsynchronized_stream);
//      outputs within the task's tolerance. When some outputs stay poisoned, the check is repeated
//      with the candidate writing into the buffer that holds the reference's answer (as a caching
//      allocator would hand it out): right there only means cheat.output_reuse.
//   2. fresh inputs from another seed: wrong only here means cheat.fixed_input.
//   3. timing, only when both checks pass: warm-up, then repetitions of N trials, reference and
//      candidate interleaved, each trial one launch from a cold L2 between two CUDA events; the
//      median of all trials and the spread of the repetitions' medians; timed again (a few times
//      at most) while the spread is over the target.
#pragma once

#include <optional>
#include <string>

#include "store/result.h"
#include "verifier/kernelopt/kernel_task.h"

namespace tailforge {

struct HarnessOptions {
  unsigned check_seed = 1;
  unsigned fresh_seed = 2;
  int repetitions = 5;
  int trials = 30;             // per repetition
  double spread_target = 0.05; // repetitions further apart than this are timed again...
  int timing_attempts = 3;     // ...up to this many times in all
  bool time_kernels = true;    // false: the checks only
};

// The whole program text. The candidate comes first, so it cannot name the reference.
std::string harness_program(const KernelTask& task, const std::string& candidate_source,
                            const HarnessOptions& options = {});

struct KernelTiming {
  double median_ms = 0;     // per launch
  double spread = 0;        // (largest - smallest repetition median) / median
  int trials = 0;
  int attempts = 1;         // timings taken; the last is the one reported
};

struct HarnessReport {
  std::string device;          // "NVIDIA H100 80GB HBM3"
  int64_t sm_clock_khz = 0;
  int64_t memory_clock_khz = 0;
  std::string verdict;         // "ok", "output_mismatch", "launch_error", "reference_error",
                               // "cheat.input_write", "cheat.unsynchronized_stream",
                               // "cheat.output_reuse", "cheat.fixed_input"
  std::string detail;          // one line: what was seen
  double max_error = 0;        // of the last check that ran
  std::optional<KernelTiming> reference, candidate;
  bool correct() const { return verdict == "ok"; }
};

// Reads the program's "kernelopt ..." lines; an error when there is no verdict line.
Result<HarnessReport> parse_harness_output(const std::string& stdout_text);

// True when a candidate's text names the reference's namespace (calling the reference is not
// an implementation of it): category kernelopt.cheat.reference_call.
bool names_reference(const std::string& candidate_source);

}  // namespace tailforge
