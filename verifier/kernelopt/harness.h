// The measuring program of the kernelopt track: a task's reference and the harness in one
// translation unit, a candidate kernel unit in another (compiled alone, linked in: the reference
// has internal linkage, so no spelling of its name reaches it), and what the program prints read
// back. It compiles and runs nothing itself (measure.h does). The program runs its checks in this
// order, each on the outputs the reference computes in the same process:
//   1. fixed inputs, candidate writing a poisoned buffer of its own: inputs unchanged afterwards
//      (else cheat.input_write); what a caller that synchronizes only the harness's stream sees
//      equals what is there after a device-wide synchronize (else cheat.unsynchronized_stream);
//      outputs within the task's tolerance. When some outputs stay poisoned, the check is repeated
//      with the candidate writing into the buffer that holds the reference's answer (as a caching
//      allocator would hand it out): right there only means cheat.output_reuse.
//   2. fresh inputs from another seed: wrong only here means cheat.fixed_input, unless it is now
//      wrong on the fixed input too (cheat.stateful: its answers changed with the calls).
//   3. the fresh inputs with one element in a hundred changed, in the same buffers: wrong here
//      means cheat.stateful (a memo keyed on addresses or sampled values).
//   4. timing, only when the checks pass: warm-up, then repetitions of N trials, reference and
//      candidate each one launch from a cold L2 between two CUDA events, every trial on fresh
//      inputs made on the device and checked against the reference (even trials with a poisoned
//      output, odd ones with the previous answer in it): a wrong timed call is cheat.stateful. A
//      device-wide synchronize after each stop event must not wait longer for the candidate than
//      for the reference (else cheat.unsynchronized_stream), and the candidate's median may not
//      beat the task's physical limit, its bytes at the GPU's peak bandwidth and its FLOPs at its
//      peak rate, by more than the margin (cheat.beyond_roofline). The median of all trials and
//      the spread of the repetitions' medians; timed again (a few times at most) while the spread
//      is over the target.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
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
  double roofline_margin = 0.8;  // a candidate faster than this share of the physical limit is a cheat
};

// The candidate's translation unit: its #include lines first, the rest in namespace tf_candidate.
std::string candidate_unit(const std::string& candidate_source);
// The harness's translation unit: the reference (internal linkage), the checks and the timing; it
// declares tf_candidate::tf_launch, which the candidate's object defines.
std::string harness_program(const KernelTask& task, const HarnessOptions& options = {});

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
                               // "cheat.output_reuse", "cheat.fixed_input", "cheat.stateful",
                               // "cheat.beyond_roofline"
  std::string detail;          // one line: what was seen
  double max_error = 0;        // of the last check that ran
  std::optional<KernelTiming> reference, candidate;
  int64_t calls_checked = 0;   // timed calls checked against the reference
  double roofline_ms = 0;      // the task's physical limit on this GPU (0: not known)
  double bandwidth_gbs = 0, peak_gflops = 0;
  bool correct() const { return verdict == "ok"; }
  // The physical limit over the candidate's time (kernelbench.com's "peak fraction"); 0 when unknown.
  double roofline_fraction() const {
    return candidate && candidate->median_ms > 0 && roofline_ms > 0 ? roofline_ms / candidate->median_ms : 0;
  }
};

// C++ text computing the task's physical limit on the GPU that runs it, shared by the harness
// program and the PyTorch harness's library: the task's constants (kMustReadBytes, kFlops,
// kTensorCorePeak) and `double tf_harness::roofline_ms(double* bandwidth_gbs, double* peak_gflops)`,
// the bound in ms (0 when the device does not say). Needs <cuda_runtime.h> and <algorithm>.
std::string roofline_code(const KernelTask& task);

// Reads the program's "kernelopt ..." lines; an error when there is no verdict line.
Result<HarnessReport> parse_harness_output(const std::string& stdout_text);

// True when a candidate's text names the reference's namespace (calling the reference is not
// an implementation of it): category kernelopt.cheat.reference_call.
bool names_reference(const std::string& candidate_source);

}  // namespace tailforge
