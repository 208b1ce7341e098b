// Measures one kernelopt candidate: builds the candidate's object with nvcc through the compile
// cache and inspects its undefined symbols, links it with the harness program (harness.h) or, for
// a PyTorch reference, into the shared library (pytorch_harness.h), runs that in the sandbox on an
// NVIDIA GPU, and turns what it printed into a verdict, a category and, when the candidate is
// right, both kernels' timings and the speedup. Where no GPU (or no nvcc) exists the run is
// recorded as skipped with the reason; the compile still runs (and only it, when the context is
// compile_only). It does not store anything (the daemon's kernelopt commands do).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "verifier/kernelopt/harness.h"
#include "verifier/kernelopt/kernel_task.h"
#include "verifier/stage_runner.h"

namespace tailforge {

struct KernelMeasurement {
  std::string status = "skipped";  // "ok": right (timed or not); "fail": wrong or a cheat;
                                   // "skipped": not run here (reason); "error": the harness broke
  std::string category;            // for "fail"/"error": "kernelopt.compile.<kind>" (compile_category.h),
                                   // "kernelopt.output_mismatch",
                                   // "kernelopt.launch_error", "kernelopt.timeout", "kernelopt.reference_error",
                                   // "kernelopt.cheat.<kind>", "kernelopt.sandbox"
  std::string detail;              // one line
  std::optional<HarnessReport> report;
  std::vector<StageResult> stages; // kernelopt.exe, kernelopt.run
  bool correct() const { return status == "ok"; }
  bool timed() const { return report && report->reference && report->candidate; }
  // reference time / candidate time; 0 unless correct and timed.
  double speedup() const;
};

KernelMeasurement measure_candidate(StageContext& context, const KernelTask& task, const std::string& candidate_source,
                                    const HarnessOptions& options = {});

}  // namespace tailforge
