#include "verifier/kernelopt/measure.h"

#include <filesystem>

#include "base/files.h"
#include "verifier/kernelopt/compile_category.h"
#include "verifier/kernelopt/pytorch_harness.h"
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

// Writes `text` to `source` and builds it with nvcc (through the compile cache), with the objects
// `linked`, into `output` with `flags`, as stage `stage`; false, with the measurement filled in,
// when that did not give its output.
bool build_with_nvcc(StageContext& context, KernelMeasurement& measurement, const std::string& text,
                     const std::string& source, const std::string& stage, std::vector<std::string> flags,
                     const std::vector<std::string>& linked, const OutputFile& output) {
  if (!write_text_file(source, text).ok()) {
    measurement.status = "error";
    measurement.category = "kernelopt.harness";
    measurement.detail = "cannot write " + source;
    return false;
  }
  for (const std::string& flag : executable_gencode_flags(context.options.sm_targets, context.toolchains)) {
    flags.push_back(flag);
  }
  flags.push_back(source);
  flags.insert(flags.end(), linked.begin(), linked.end());
  flags.insert(flags.end(), {"-o", output.path});
  std::vector<std::string> inputs = {source};
  inputs.insert(inputs.end(), linked.begin(), linked.end());
  StageResult compiled = run_tool_stage(context, {stage, "nvcc", flags, inputs, {output}, "", {}, ""});
  measurement.stages.push_back(compiled);
  if (compiled.status == "skipped") {
    measurement.detail = compiled.reason;
    return false;
  }
  if (!compiled.ok()) {
    const std::string& evidence = compiled.diagnostics.empty() ? compiled.reason : compiled.diagnostics;
    measurement = failed_measurement(measurement, compile_failure_category(evidence, compiled.status == "timeout"),
                                     first_line(compiled.reason.empty() ? compiled.diagnostics : compiled.reason));
    return false;
  }
  return true;
}

// What a candidate's object may not ask the linker for: streams, graphs, host callbacks and
// threads of its own (work the harness's events would not time), or a way to find the reference
// (dynamic symbol lookup, the harness's names). Each with the category it means.
struct ForbiddenSymbol {
  const char* name;  // a part of the demangled name, or the whole of it when `whole`
  const char* category;
  bool whole = false;
};
constexpr ForbiddenSymbol kForbiddenSymbols[] = {
    {"cudaStreamCreate", "kernelopt.cheat.unsynchronized_stream"},
    {"cuStreamCreate", "kernelopt.cheat.unsynchronized_stream"},
    {"cudaStreamBeginCapture", "kernelopt.cheat.unsynchronized_stream"},
    {"cudaGraph", "kernelopt.cheat.unsynchronized_stream"},
    {"cuGraph", "kernelopt.cheat.unsynchronized_stream"},
    {"cudaLaunchHostFunc", "kernelopt.cheat.unsynchronized_stream"},
    {"cudaStreamAddCallback", "kernelopt.cheat.unsynchronized_stream"},
    {"pthread_create", "kernelopt.cheat.unsynchronized_stream"},
    {"std::thread", "kernelopt.cheat.unsynchronized_stream"},
    {"fork", "kernelopt.cheat.unsynchronized_stream", true},
    {"dlsym", "kernelopt.cheat.reference_call"},
    {"dlvsym", "kernelopt.cheat.reference_call"},
    {"dlopen", "kernelopt.cheat.reference_call"},
    {"tf_reference", "kernelopt.cheat.reference_call"},
    {"tf_harness", "kernelopt.cheat.reference_call"},
};

// The undefined symbols `nm -u -C` printed, one per line ("                 U name").
std::vector<std::string> undefined_symbols(const std::string& listing) {
  std::vector<std::string> symbols;
  size_t start = 0;
  while (start < listing.size()) {
    size_t end = listing.find('\n', start);
    if (end == std::string::npos) end = listing.size();
    std::string line = listing.substr(start, end - start);
    start = end + 1;
    size_t marker = line.find(" U ");
    if (marker != std::string::npos) symbols.push_back(line.substr(marker + 3));
  }
  return symbols;
}

// Lists the candidate object's undefined symbols with nm; false, with the measurement failed,
// when one is forbidden. Without nm the stage is skipped and the run-time checks stand alone.
bool inspect_candidate_object(StageContext& context, KernelMeasurement& measurement, const std::string& object) {
  StageResult listed = run_tool_stage(context, {"kernelopt.inspect", "nm", {"-u", "-C", object}, {object}, {}, "", {}, "symbols"});
  measurement.stages.push_back(listed);
  const Artifact* symbols = listed.artifact("symbols");
  if (!listed.ok() || !symbols) return true;
  std::string found, category;
  for (const std::string& symbol : undefined_symbols(symbols->content)) {
    for (const ForbiddenSymbol& forbidden : kForbiddenSymbols) {
      if (forbidden.whole ? symbol != forbidden.name : symbol.find(forbidden.name) == std::string::npos) continue;
      if (category.empty()) category = forbidden.category;
      if (forbidden.category == category) found += (found.empty() ? "" : ", ") + symbol;
      break;
    }
  }
  if (category.empty()) return true;
  measurement = failed_measurement(measurement, category,
                                   category == "kernelopt.cheat.reference_call"
                                       ? "the candidate's object looks up or names the harness's code: " + found
                                       : "the candidate's object creates streams, graphs, callbacks or threads the "
                                         "harness did not give it: " + found);
  return false;
}

// Builds the candidate's unit alone into `object` (nvcc -c, with `flags` added) and inspects it;
// false, with the measurement filled in, when it did not build or asks for what it may not.
bool build_candidate_object(StageContext& context, KernelMeasurement& measurement, const std::string& candidate_source,
                            const std::string& dir, const std::vector<std::string>& flags, const std::string& object) {
  std::vector<std::string> all = {"-O3", "-std=c++17", "-lineinfo", "-c"};
  all.insert(all.end(), flags.begin(), flags.end());
  return build_with_nvcc(context, measurement, candidate_unit(candidate_source), dir + "/candidate.cu",
                         "kernelopt.candidate", all, {}, {"object", object, true}) &&
         inspect_candidate_object(context, measurement, object);
}

// Reads the harness's lines from a finished kernelopt.run stage into the measurement.
KernelMeasurement interpret_run(KernelMeasurement measurement, const StageResult& run) {
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

// A PyTorch reference: the candidate's object, inspected, becomes with the entry points a shared
// library the Python harness loads.
KernelMeasurement measure_against_pytorch(StageContext& context, const KernelTask& task,
                                          const std::string& candidate_source, const HarnessOptions& options) {
  KernelMeasurement measurement;
  std::string dir = make_subdirectory(context, "kernelopt");
  std::string object = dir + "/candidate.o", library = dir + "/candidate.so";
  if (!build_candidate_object(context, measurement, candidate_source, dir, {"-Xcompiler", "-fPIC"}, object) ||
      !build_with_nvcc(context, measurement, pytorch_entry_unit(task), dir + "/entry.cu", "kernelopt.exe",
                       {"-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC", "-Xlinker", "--no-undefined"}, {object},
                       {"library", library, true})) {
    return measurement;
  }
  std::string reason = context.compile_only ? "compile only" : availability_reason(context, "nvidia.run");
  if (reason.empty()) reason = pytorch_unavailable_reason();
  if (!reason.empty()) {
    measurement.stages.push_back(skipped_stage("kernelopt.run", reason));
    measurement.detail = "timing skipped: " + reason;
    return measurement;
  }
  std::string private_dir = make_subdirectory(context, "run-kernelopt");
  std::error_code copied;
  std::filesystem::copy_file(library, private_dir + "/candidate.so", std::filesystem::copy_options::overwrite_existing,
                             copied);
  if (copied || !write_text_file(private_dir + "/reference.py", task.reference_source).ok() ||
      !write_text_file(private_dir + "/harness.py", pytorch_harness_script(task, options)).ok()) {
    measurement.status = "error";
    measurement.category = "kernelopt.harness";
    measurement.detail = "cannot prepare " + private_dir;
    return measurement;
  }
  const PytorchEnvironment& python = pytorch_environment();
  std::vector<std::string> binds;
  if (python.prefix.rfind("/usr", 0) != 0) binds.push_back(python.prefix);
  // Importing torch and creating its CUDA context take seconds: a longer limit than a test program's.
  double timeout = std::max(context.options.sandbox.timeout_seconds, 180.0);
  StageResult run = run_untrusted_stage(context, "kernelopt.run", {python.executable, "harness.py"}, private_dir, true,
                                        binds, timeout);
  measurement.stages.push_back(run);
  if (run.status == "skipped") {
    measurement.detail = "timing skipped: " + run.reason;
    return measurement;
  }
  return interpret_run(std::move(measurement), run);
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
  if (task.reference_language == "pytorch") return measure_against_pytorch(context, task, candidate_source, options);
  // The candidate in an object of its own, inspected, then linked with the harness, whose
  // reference it cannot name.
  std::string dir = make_subdirectory(context, "kernelopt");
  std::string object = dir + "/candidate.o";
  if (!build_candidate_object(context, measurement, candidate_source, dir, {}, object)) return measurement;
  std::string source = dir + "/harness.cu", exe = dir + "/kernelopt.exe";
  if (!build_with_nvcc(context, measurement, harness_program(task, options), source, "kernelopt.exe",
                       {"-O3", "-std=c++17", "-lineinfo"}, {object}, {"executable", exe, true})) {
    return measurement;
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
  return interpret_run(std::move(measurement), run);
}

}  // namespace tailforge
