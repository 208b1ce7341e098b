// A right, timed kernelopt measurement as a GPU host stores it, for tests that need speedups on a
// host that may have no GPU: the reference at `reference_ms`, the candidate at `candidate_ms`.
#pragma once

#include "verifier/kernelopt/measure.h"

namespace tailforge {

inline KernelMeasurement timed_measurement(double reference_ms, double candidate_ms, const char* device = "NVIDIA H200") {
  KernelMeasurement measured;
  measured.status = "ok";
  HarnessReport report;
  report.verdict = "ok";
  report.device = device;
  report.reference = KernelTiming{reference_ms, 0.01, 150};
  report.candidate = KernelTiming{candidate_ms, 0.01, 150};
  measured.report = report;
  return measured;
}

}  // namespace tailforge
