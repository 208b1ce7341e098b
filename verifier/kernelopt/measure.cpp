#include "verifier/kernelopt/measure.h"

#include "verifier/nvidia.h"

namespace tailforge {
namespace {

std::string first_line(const std::string& text) {
  size_t end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

KernelMeasurement failed_measurement(KernelMeasurement measurement, const std::string& category,
                                     const std::string& detail) {
  measurement.status = "fail";
  measurement.category = category;
  measurement.detail = detail;
  return measurement;
}

}  // namespace

double KernelMeasurement::speedup() const {
  if (!correct() || !timed() || report->candidate->median_ms <= 0) return 0;
  return report->reference->median_ms / report->candidate->median_ms;
}

KernelMeasurement measure_candidate(StageContext& context, const KernelTask& task, const std::string& candidate_source,
                                    const HarnessOptions& options) {
  KernelMeasurement measurement;
  if (names_reference(candidate_source)) {
    return failed_measurement(measurement, "kernelopt.cheat.reference_call",
                              "the candidate names the harness's reference or harness namespace instead of "
                              "implementing the operator");
  }
  std::string dir = make_subdirectory(context, "kernelopt");
  std::string source = dir + "/harness.cu", exe = dir + "/kernelopt.exe";
  if (!write_file_text(source, harness_program(task, candidate_source, options))) {
    measurement.status = "error";
    measurement.category = "kernelopt.harness";
    measurement.detail = "cannot write " + source;
    return measurement;
  }
  std::vector<std::string> args = {"-O3", "-std=c++17", "-lineinfo"};
  for (const std::string& flag : gencode_flags(context.options.sm_targets)) args.push_back(flag);
  args.insert(args.end(), {source, "-o", exe});
  StageResult compiled = run_tool_stage(context, {"kernelopt.exe", "nvcc", args, {source}, {{"executable", exe, true}},
                                                  "", {}, ""});
  measurement.stages.push_back(compiled);
  if (compiled.status == "skipped") {
    measurement.detail = compiled.reason;
    return measurement;
  }
  if (!compiled.ok()) {
    return failed_measurement(measurement, "kernelopt.compile",
                              first_line(compiled.reason.empty() ? compiled.diagnostics : compiled.reason));
  }

  std::string reason = context.compile_only ? "compile only" : availability_reason(context, "nvidia.run");
  if (!reason.empty()) {
    measurement.stages.push_back(skipped_stage("kernelopt.run", reason));
    measurement.detail = "timing skipped: " + reason;
    return measurement;
  }
  StageResult run = run_program_stage(context, "kernelopt.run", exe, true);
  measurement.stages.push_back(run);
  if (run.status == "skipped") {
    measurement.detail = "timing skipped: " + run.reason;
    return measurement;
  }
  const Artifact* out = run.artifact("stdout");
  Result<HarnessReport> report = parse_harness_output(out ? out->content : "");
  if (run.status == "timeout") return failed_measurement(measurement, "kernelopt.timeout", run.reason);
  if (!report) {
    return failed_measurement(measurement, run.ok() ? "kernelopt.harness" : "kernelopt.sandbox",
                              run.reason.empty() ? report.message() : run.reason);
  }
  measurement.report = *report;
  const std::string& verdict = report->verdict;
  if (verdict == "ok") {
    measurement.status = "ok";
    measurement.detail = report->candidate ? "right; timed" : "right";
    return measurement;
  }
  if (verdict == "reference_error") {
    measurement.status = "error";
    measurement.category = "kernelopt.reference_error";
    measurement.detail = report->detail;
    return measurement;
  }
  return failed_measurement(measurement, "kernelopt." + verdict, report->detail);
}

}  // namespace tailforge
