#include "verifier/c2x86/io_tests.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "base/clock.h"
#include "base/files.h"
#include "base/process.h"
#include "verifier/c2x86/jump_tables.h"
#include "verifier/sandbox.h"

namespace tailforge {
namespace {

constexpr size_t kQuotedLimit = 200;  // characters of an input or output a message shows

// The text in double quotes on one line: newlines, tabs, quotes and backslashes escaped.
std::string in_quotes(const std::string& text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == kQuotedLimit) {
      out += "...";
      break;
    }
    char c = text[i];
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
  }
  return out + "\"";
}

// Trailing whitespace removed from each line, trailing empty lines dropped.
std::string normalized_output(const std::string& text) {
  std::string out;
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    line.erase(line.find_last_not_of(" \t\r\f\v") + 1);
    out += line + "\n";
    start = end + 1;
  }
  out.erase(out.find_last_not_of('\n') + 1);
  return out;
}

// Runs the program once with `input` on stdin. bwrap, in its own pid namespace, reports a child
// killed by signal N as exit code 128 + N: that is turned back into the signal.
SandboxOutcome run_case(StageContext& context, const std::string& program, const std::string& input) {
  SandboxOutcome outcome;
  {
    ResourceSlot slot(context.gate, ResourceKind::cpu);
    std::string private_dir = std::filesystem::path(program).parent_path();
    outcome = run_sandboxed(context.options.sandbox, {{program}, private_dir, false, 0, input});
  }
  ProcessResult& process = outcome.process;
  if (context.options.sandbox.mode == "bwrap" && !process.timed_out && process.signal == 0 && process.exit_code > 128 &&
      process.exit_code <= 128 + 64) {
    process.signal = process.exit_code - 128;
    process.exit_code = -1;
  }
  return outcome;
}

// What went wrong in one run, or "" when the program exited 0 in time.
std::string run_problem(const ProcessResult& process) {
  if (process.timed_out) return "timed out";
  if (process.stdout_truncated) return "wrote stdout over the sandbox's output cap";
  if (process.signal != 0) return "crashed: killed by signal " + std::to_string(process.signal);
  if (process.exit_code != 0) return "exited with code " + std::to_string(process.exit_code);
  return "";
}

StageResult run_io_stage(StageContext& context, const std::string& executable, const std::vector<IoCase>& cases) {
  const std::string name = "c2x86.io";
  if (!stage_enabled(context.options, name)) return skipped_stage(name, kDisabledByStages);
  if (cases.empty()) return skipped_stage(name, "the function has no io cases");
  auto start = std::chrono::steady_clock::now();
  Result<std::string> program = place_program(context, "run-" + name, executable);
  if (!program) return skipped_stage(name, program.message());

  StageResult stage;
  stage.name = name;
  stage.status = "ok";
  stage.exit_code = 0;
  size_t passed = 0;
  std::string failure, stderr_text;
  for (size_t i = 0; i < cases.size() && failure.empty(); ++i) {
    SandboxOutcome outcome = run_case(context, *program, cases[i].input);
    if (!outcome.executed) return skipped_stage(name, outcome.skip_reason);
    const ProcessResult& process = outcome.process;
    stage.command = outcome.command;
    stage.child_seconds += process.wall_seconds;
    stage.cpu_seconds += process.cpu_seconds;
    stage.peak_rss_kb = std::max(stage.peak_rss_kb, process.peak_rss_kb);
    std::string test = "io test " + std::to_string(i + 1);
    std::string problem = run_problem(process);
    std::string got = normalized_output(process.stdout_text), expected = normalized_output(cases[i].expected);
    if (problem.empty() && got == expected) {
      ++passed;
      continue;
    }
    stage.status = process.timed_out ? "timeout" : "fail";
    if (!problem.empty()) {
      stage.signal = process.signal;
      stage.exit_code = process.signal != 0 || process.timed_out ? std::nullopt : std::optional<int>(process.exit_code);
      failure = test + " " + problem + " on input " + in_quotes(cases[i].input);
    } else {
      failure = test + " failed: input " + in_quotes(cases[i].input) + " expected " + in_quotes(expected) +
                " but got " + in_quotes(got);
    }
    stderr_text = process.stderr_text;
    stage.artifacts.push_back(
        {"stdout", name + ".case" + std::to_string(i + 1) + ".stdout", process.stdout_text, stage.command, "", false});
  }
  stage.reason = failure;
  std::string count = std::to_string(passed) + " of " + std::to_string(cases.size()) + " io cases passed";
  stage.diagnostics = failure.empty() ? count : failure + "\n" + count;
  if (!stderr_text.empty()) stage.diagnostics += "\nstderr:\n" + stderr_text;
  stage.seconds = seconds_since(start);
  return stage;
}

StageResult check_jump_tables(const VerifierOptions& options, const std::string& assembly_path) {
  const std::string name = "c2x86.jump_table";
  if (!stage_enabled(options, name)) return skipped_stage(name, kDisabledByStages);
  auto start = std::chrono::steady_clock::now();
  StageResult stage;
  stage.name = name;
  stage.status = "ok";
  std::vector<JumpTable> tables = find_jump_tables(read_text_file_or_empty(assembly_path));
  if (!tables.empty()) {
    stage.status = "fail";
    stage.reason = describe_jump_table(tables.front());
    if (tables.size() > 1) stage.reason += " and " + std::to_string(tables.size() - 1) + " more";
    std::string file = std::filesystem::path(assembly_path).filename();
    for (const JumpTable& table : tables) {
      stage.diagnostics += file + ":" + std::to_string(table.line) + ": " + describe_jump_table(table) + "\n";
    }
    stage.diagnostics += "the c2x86 assembly is compiled with -fno-jump-tables: a switch must be compares and jumps";
  }
  stage.seconds = seconds_since(start);
  return stage;
}

// A trusted gcc step, run in the scratch directory, that keeps one output file.
ToolStep gcc_step(const std::string& stage, std::vector<std::string> args, std::vector<std::string> inputs,
                  OutputFile output) {
  return {stage, "gcc", std::move(args), std::move(inputs), {std::move(output)}, "x86_64", {}, ""};
}

}  // namespace

std::string driver_file(const CFunction& function) { return function.driver_is_cpp ? "driver.cpp" : "driver.c"; }

std::vector<std::string> driver_link_args(const CFunction& function, const std::string& driver,
                                          std::vector<std::string> objects, const std::string& output) {
  std::vector<std::string> args;
  if (function.driver_is_cpp) args = {"-x", "c++", "-fpermissive"};
  args.push_back(driver);
  if (function.driver_is_cpp) args.insert(args.end(), {"-x", "none"});
  args.insert(args.end(), objects.begin(), objects.end());
  args.insert(args.end(), {"-o", output});
  if (function.driver_is_cpp) args.push_back("-lstdc++");
  args.push_back("-lm");
  return args;
}

bool io_outputs_match(const std::string& expected, const std::string& actual) {
  return normalized_output(expected) == normalized_output(actual);
}

void run_c2x86_stages(StageContext& context, const CFunction& function, const std::string* candidate_assembly) {
  const std::string dir = context.scratch_dir;
  const std::string source = dir + "/function.c", driver = dir + "/" + driver_file(function),
                    assembly = dir + "/function.s", object = dir + "/function.o", program = dir + "/program";
  if (!write_text_file(source, function.function).ok() || !write_text_file(driver, function.driver).ok()) {
    context.add(error_stage("c2x86.oracle", "cannot write function.c and " + driver_file(function) + " into " + dir));
    return;
  }
  // Relative names: the tools run in the scratch directory, and their messages name function.s.
  context.add(run_tool_stage(
      context, gcc_step("c2x86.oracle", {"-O0", "-fno-jump-tables", "-S", "function.c", "-o", "function.s"}, {source},
                        {"x86_asm", assembly, false})));
  if (!dependencies_ok(context, "c2x86.jump_table", {"c2x86.oracle"})) return;
  if (candidate_assembly && !write_text_file(assembly, *candidate_assembly).ok()) {
    context.add(error_stage("c2x86.jump_table", "cannot write the candidate assembly to " + assembly));
    return;
  }
  context.add(check_jump_tables(context.options, assembly));
  if (!dependencies_ok(context, "c2x86.assemble", {"c2x86.jump_table"})) return;
  context.add(run_tool_stage(context, gcc_step("c2x86.assemble", {"-c", "function.s", "-o", "function.o"}, {assembly},
                                               {"x86_object", object, true})));
  if (!dependencies_ok(context, "c2x86.link", {"c2x86.assemble"})) return;
  context.add(run_tool_stage(context,
                             gcc_step("c2x86.link", driver_link_args(function, driver_file(function), {"function.o"}, "program"),
                                      {driver, object}, {"executable", program, true})));
  if (!dependencies_ok(context, "c2x86.io", {"c2x86.link"})) return;
  context.add(run_io_stage(context, program, function.cases));
}

Result<std::vector<IoCase>> record_expected_outputs(StageContext& context, const CFunction& function) {
  const std::string dir = make_subdirectory(context, "record");
  const std::string source = dir + "/function.c", driver = dir + "/" + driver_file(function),
                    executable = dir + "/program";
  const std::string what = "recording the outputs of " + function.name + ": ";
  if (!write_text_file(source, function.function).ok() || !write_text_file(driver, function.driver).ok()) {
    return make_error(what + "cannot write function.c and " + driver_file(function) + " into " + dir);
  }
  std::vector<std::string> args = {"-O0", "-fno-jump-tables", source};
  std::vector<std::string> link = driver_link_args(function, driver, {}, executable);
  args.insert(args.end(), link.begin(), link.end());
  StageResult build = run_tool_stage(
      context, gcc_step("c2x86.record", args, {source, driver}, {"executable", executable, true}));
  if (!build.ok()) {
    return make_error(what + "the build " + build.status + ": " + build.reason + "\n" + build.diagnostics);
  }
  Result<std::string> program = place_program(context, "record-run", executable);
  if (!program) return make_error(what + program.message());

  std::vector<IoCase> cases = function.cases;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string test = "io case " + std::to_string(i + 1) + " (input " + in_quotes(cases[i].input) + ")";
    SandboxOutcome outcome = run_case(context, *program, cases[i].input);
    if (!outcome.executed) return make_error(what + test + " was not run: " + outcome.skip_reason);
    if (std::string problem = run_problem(outcome.process); !problem.empty()) {
      return make_error(what + test + " " + problem + "\n" + outcome.process.stderr_text);
    }
    if (outcome.process.stdout_truncated) return make_error(what + test + " printed more than the sandbox keeps");
    cases[i].expected = outcome.process.stdout_text;
  }
  return cases;
}

}  // namespace tailforge
