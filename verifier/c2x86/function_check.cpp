#include "verifier/c2x86/function_check.h"

#include <algorithm>
#include <chrono>

#include "base/clock.h"
#include "base/process.h"
#include "text/regex.h"
#include "verifier/c2x86/io_tests.h"
#include "verifier/stage_runner.h"

namespace tailforge {
namespace {

StageResult finished_stage(const std::string& name, const std::string& status, const std::string& reason,
                           const std::string& diagnostics, std::chrono::steady_clock::time_point start) {
  StageResult stage;
  stage.name = name;
  stage.status = status;
  stage.reason = reason;
  stage.diagnostics = diagnostics;
  stage.seconds = seconds_since(start);
  return stage;
}

bool all_expected_empty(const std::vector<IoCase>& cases) {
  return std::all_of(cases.begin(), cases.end(), [](const IoCase& io) { return io.expected.empty(); });
}

size_t literal_lines(const std::string& assembly) {
  static const text::Regex literal(R"(^\s*\.(float|double)_literal\b)", {.multiline = true});
  return text::count_matches(assembly, literal);
}

// Fills `check` in the scratch folder `scratch`.
void check_in(const std::string& scratch, const CFunction& function, const C2x86CheckOptions& options,
              const std::string* candidate, C2x86Check& check) {
  CFunction checked = function;
  if (all_expected_empty(function.cases) && !function.cases.empty()) {
    auto start = std::chrono::steady_clock::now();
    StageContext context{options.verifier, options.toolchains, options.cache_db, options.gate, scratch, {}};
    Result<std::vector<IoCase>> recorded = record_expected_outputs(context, function);
    if (!recorded) {
      size_t not_run = recorded.message().find(" was not run: ");
      if (not_run != std::string::npos) check.not_run = recorded.message().substr(not_run + 14);
      check.stages.push_back(finished_stage("c2x86.record", "fail", recorded.message().substr(0, 300),
                                            recorded.message(), start));
      return;
    }
    checked.cases = *recorded;
    check.stages.push_back(finished_stage("c2x86.record", "ok", "",
                                          "recorded " + std::to_string(recorded->size()) + " expected outputs", start));
  }
  check.cases = checked.cases;

  std::string interpreted;
  if (candidate) {
    auto start = std::chrono::steady_clock::now();
    Result<std::string> words = interpret_float_constants(*candidate);
    if (!words) {
      check.stages.push_back(finished_stage("c2x86.float_constant", "fail",
                                            "a float or double literal could not be interpreted", words.message(), start));
      return;
    }
    interpreted = *words;
    check.stages.push_back(finished_stage(
        "c2x86.float_constant", "ok", "",
        std::to_string(literal_lines(*candidate)) + " float/double literals interpreted", start));
  }

  StageContext context{options.verifier, options.toolchains, options.cache_db, options.gate, scratch, {}};
  run_c2x86_stages(context, checked, candidate ? &interpreted : nullptr);
  for (StageResult& stage : context.stages) {
    if (stage.name == "c2x86.oracle") {
      if (const Artifact* assembly = stage.artifact("x86_asm")) check.oracle_assembly = assembly->content;
    }
    if (stage.name == "c2x86.io" && stage.status == "skipped" && stage.reason.rfind("disabled", 0) != 0 &&
        !checked.cases.empty()) {
      check.not_run = stage.reason;
    }
    check.stages.push_back(std::move(stage));
  }
  if (check.oracle_assembly.empty()) return;
  Result<SymbolicAssembly> symbolic = symbolize_float_constants(check.oracle_assembly);
  check.float_round_trip = symbolic.ok();
  if (!symbolic) return;
  Result<std::string> words = interpret_float_constants(symbolic->text);
  check.float_round_trip = words.ok() && *words == check.oracle_assembly;
  check.symbolic = std::move(*symbolic);
}

}  // namespace

const StageResult* C2x86Check::stage(const std::string& name) const {
  for (const StageResult& s : stages)
    if (s.name == name) return &s;
  return nullptr;
}

bool C2x86Check::passed() const {
  const StageResult* io = stage("c2x86.io");
  if (!io || !io->ok()) return false;
  return std::all_of(stages.begin(), stages.end(),
                     [](const StageResult& s) { return s.ok() || s.status == "skipped"; });
}

C2x86Check check_c_function(const CFunction& function, const C2x86CheckOptions& options, const std::string* candidate) {
  C2x86Check check;
  Result<std::string> scratch = make_scratch_directory(options.verifier, "tailforge-c2x86");
  if (!scratch) {
    check.stages.push_back(error_stage("c2x86.oracle", scratch.message()));
    return check;
  }
  check_in(*scratch, function, options, candidate, check);
  remove_scratch_directory(options.verifier, *scratch);
  return check;
}

}  // namespace tailforge
