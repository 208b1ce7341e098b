// The kernelopt track's failure categories: every category its code can emit (found by reading
// the sources: "kernelopt.*" literals, the harnesses' verdicts) is a node of policies/taxonomy.json;
// a failed build is sorted into kernelopt.compile.<kind> from nvcc's and the linker's messages,
// quickly even on megabytes of one line; and the PyTorch harness's Python parses and prints the
// timing's lines and verdicts as the CUDA harness does.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "base/process.h"
#include "policies/categorizer.h"
#include "test_support/read_whole_file.h"
#include "test_support/source_tree.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/kernelopt/compile_category.h"
#include "verifier/kernelopt/harness.h"
#include "verifier/kernelopt/pytorch_harness.h"

namespace tailforge {
namespace {

// Names of stages, not categories ("kernelopt.run" is the stage a failure happened in).
const std::set<std::string> kStageNames = {"kernelopt.candidate", "kernelopt.inspect", "kernelopt.exe",
                                           "kernelopt.run", "kernelopt.measure", "kernelopt.reference",
                                           "kernelopt.reference.verdict", "kernelopt.speed", "kernelopt.verdict"};

void add_matches(const std::string& text, const std::regex& pattern, const std::string& prefix,
                 std::set<std::string>& found) {
  for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
    found.insert(prefix + (*it)[1].str());
  }
}

// Every category the kernelopt code spells: "kernelopt.x.y" literals (in the verifier's kernelopt
// folder and anywhere in the daemon), and the verdicts the harnesses print ("kernelopt verdict
// cheat.x", Python's verdict("x"), the CUDA program's failed(..., "x_error")), which the measurement
// reads back as "kernelopt.<verdict>".
std::set<std::string> emitted_categories() {
  static const std::regex literal(R"re("(kernelopt\.[a-z0-9_.]*[a-z0-9_])")re");
  static const std::regex printed(R"re(kernelopt verdict ([a-z_.]+))re");
  static const std::regex python(R"re(\bverdict\("([a-z_.]+)")re");
  static const std::regex cheat(R"re("(cheat\.[a-z_]+)")re");
  static const std::regex error_verdict(R"re((?:verdict =|",) "([a-z_]+_error)"\))re");
  std::set<std::string> found;
  std::string root = source_root();
  for (const char* folder : {"verifier/kernelopt", "daemon", "synth/kernelopt", "agents/kernelopt"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(root + "/" + folder)) {
      std::string extension = entry.path().extension().string();
      if (extension != ".cpp" && extension != ".h") continue;
      std::string text = read_whole_file(entry.path().string());
      add_matches(text, literal, "", found);
      if (std::string(folder) != "verifier/kernelopt") continue;
      add_matches(text, printed, "kernelopt.", found);
      add_matches(text, python, "kernelopt.", found);
      add_matches(text, cheat, "kernelopt.", found);
      add_matches(text, error_verdict, "kernelopt.", found);
    }
  }
  for (const std::string& stage : kStageNames) found.erase(stage);
  found.erase("kernelopt.ok");  // the verdict of a right candidate
  for (const std::string& category : compile_failure_categories()) found.insert(category);
  return found;
}

Taxonomy shipped_taxonomy() {
  Result<Taxonomy> loaded = load_taxonomy(source_root() + "/policies/taxonomy.json");
  REQUIRE_MESSAGE(loaded.ok(), loaded.message());
  return std::move(loaded.value());
}

std::string run_python(const std::string& program, TempDir& dir) {
  std::string path = dir.file("program.py");
  std::ofstream(path) << program;
  ProcessSpec spec;
  spec.argv = {"python3", path};
  ProcessResult result = run_process(spec);
  INFO(result.stderr_text);
  CHECK(result.spawned);
  return result.stdout_text;
}

KernelTask copy_task() {
  KernelTask task;
  task.name = "copy_test";
  task.operator_type = kSingleOperator;
  task.inputs = {{"x", 1 << 20}};
  task.output = {"y", 1 << 20};
  return task;
}

}  // namespace

TEST_CASE("kernelopt categories: every category the kernelopt code emits is a node of the taxonomy") {
  std::set<std::string> emitted = emitted_categories();
  // The reading finds what is known to be there (so that a broken pattern cannot pass quietly).
  for (const char* known : {"kernelopt.cheat.stateful", "kernelopt.cheat.beyond_roofline", "kernelopt.launch_error",
                            "kernelopt.reference_error", "kernelopt.output_mismatch", "kernelopt.compile.link",
                            "kernelopt.harness", "kernelopt.cheat.fixed_input", "kernelopt.timeout"}) {
    CHECK_MESSAGE(emitted.count(known) == 1, known);
  }
  emitted.insert("kernelopt.slower");  // the daemon records it per model
  Taxonomy taxonomy = shipped_taxonomy();
  for (const std::string& category : emitted) {
    CHECK_MESSAGE(taxonomy.descriptions.count(category) == 1, category << " has no node in policies/taxonomy.json");
    if (taxonomy.descriptions.count(category)) CHECK_MESSAGE(!taxonomy.descriptions.at(category).empty(), category);
  }
}

TEST_CASE("kernelopt categories: a failed build is sorted by the kind of its first message") {
  struct Case {
    const char* text;
    const char* category;
  };
  const Case cases[] = {
      {"candidate.cu(3): error: expected a \";\"\n1 error detected", "kernelopt.compile.syntax"},
      {"candidate.cu(7): error: unrecognized token\n", "kernelopt.compile.syntax"},
      {"candidate.cu:4:12: error: expected ';' before '}' token\n", "kernelopt.compile.syntax"},
      {"candidate.cu(5): error: identifier \"blockIdy\" is undefined\n", "kernelopt.compile.undeclared"},
      {"candidate.cu:9:3: error: 'tile' was not declared in this scope\n", "kernelopt.compile.undeclared"},
      {"candidate.cu(8): error: no suitable conversion function from \"float4\" to \"float\" exists\n",
       "kernelopt.compile.type"},
      {"candidate.cu(2): error: argument of type \"int *\" is incompatible with parameter of type \"float *\"\n",
       "kernelopt.compile.type"},
      {"candidate.cu(4): error: no instance of overloaded function \"max\" matches the argument list\n",
       "kernelopt.compile.type"},
      {"candidate.cu:3: error: incompatible types in assignment\n", "kernelopt.compile.type"},
      {"/usr/bin/ld: harness.o: in function `main':\nharness.cu:(.text+0x1a): undefined reference to "
       "`tf_candidate::tf_launch(float const* const*, float*, CUstream_st*)'\ncollect2: error: ld returned 1 exit "
       "status\n",
       "kernelopt.compile.link"},
      {"/usr/bin/ld: candidate.o: multiple definition of `helper'; harness.o: first defined here\n",
       "kernelopt.compile.link"},
      {"nvlink error   : Undefined reference to '_Z4tileIfEvPf' in 'candidate.o'\n", "kernelopt.compile.link"},
      {"nvcc fatal   : Unsupported gpu architecture 'compute_10'\n", "kernelopt.compile.other"},
      {"", "kernelopt.compile.other"},
      // The first message decides: an undeclared name that makes later lines fail to parse.
      {"a.cu(1): error: identifier \"T\" is undefined\na.cu(2): error: expected a \")\"\n",
       "kernelopt.compile.undeclared"},
      {"a.cu(2): error: expected a \")\"\na.cu(3): error: identifier \"T\" is undefined\n",
       "kernelopt.compile.syntax"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    CHECK(compile_failure_category(c.text) == c.category);
  }
  CHECK(compile_failure_category("error: expected a \";\"", true) == "kernelopt.compile.timeout");
  std::vector<std::string> all = compile_failure_categories();
  CHECK(all.size() == 6);
  for (const Case& c : cases) CHECK(std::find(all.begin(), all.end(), c.category) != all.end());
}

TEST_CASE("kernelopt categories: two megabytes of one line are sorted quickly") {
  // Near-misses of every message at every step: "error: expecte", "undefined referenc", ...
  std::string line;
  while (line.size() < (2u << 20)) line += "error: expecte\" is undefine incompatible undefined referenc ";
  auto started = std::chrono::steady_clock::now();
  CHECK(compile_failure_category(line) == "kernelopt.compile.other");
  std::string link = line + "undefined reference to `tf_launch'";
  CHECK(compile_failure_category(link) == "kernelopt.compile.link");
  std::string first = "error: expected a \";\" " + line + "undefined reference to `x'";
  CHECK(compile_failure_category(first) == "kernelopt.compile.syntax");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  CHECK_MESSAGE(seconds < 2.0, "three 2 MB lines took " << seconds << " s");
}

TEST_CASE("kernelopt categories: the PyTorch harness's entry points carry the task's physical limit") {
  KernelTask task = copy_task();
  task.operator_type = kMatmulOperator;
  task.flops = 2.0 * 512 * 512 * 512;
  std::string entry = pytorch_entry_unit(task);
  CHECK(entry.find("extern \"C\" int tf_candidate_entry") != std::string::npos);
  CHECK(entry.find("extern \"C\" double tf_roofline_ms") != std::string::npos);
  CHECK(entry.find("kMustReadBytes = 4194304LL") != std::string::npos);
  CHECK(entry.find("kTensorCorePeak = true") != std::string::npos);
  CHECK(entry.find("double roofline_ms(double* bandwidth_gbs, double* peak_gflops)") != std::string::npos);
  // The CUDA harness computes it with the same text.
  CHECK(harness_program(task).find(roofline_code(task)) != std::string::npos);
  std::string script = pytorch_harness_script(task, {});
  CHECK(script.find("READ_BYTES = 4194304") != std::string::npos);
  CHECK(script.find("FLOPS = 268435456") != std::string::npos);
  CHECK(script.find("ROOFLINE_MARGIN = 0.8") != std::string::npos);
}

TEST_CASE("kernelopt categories: the PyTorch harness parses, and its timing prints the CUDA harness's lines and "
          "verdicts") {
  if (!testing::program_here("python3", "the PyTorch harness's Python")) return;
  TempDir dir;
  KernelTask task = copy_task();
  std::string script_path = dir.file("harness.py");
  std::ofstream(script_path) << pytorch_harness_script(task, {});
  ProcessSpec compile;
  compile.argv = {"python3", "-m", "py_compile", script_path};
  ProcessResult compiled = run_process(compile);
  CHECK_MESSAGE(compiled.exit_code == 0, compiled.stderr_text);

  // The helpers need no torch: each case's timing, as finish_timing reports it.
  std::string helpers = pytorch_harness_helpers(task, {});
  auto timing = [&](const std::string& call) {
    std::string printed = run_python(helpers + call + "\nprint('kernelopt verdict ok')\n", dir);
    Result<HarnessReport> report = parse_harness_output(printed);
    REQUIRE_MESSAGE(report.ok(), printed);
    return *report;
  };
  // Reading 4 MiB at 2000 GB/s takes 0.0021 ms: 0.01 ms is honest.
  HarnessReport honest = timing("finish_timing([(0.02, 0.01, 150), (0.01, 0.02, 150)], 2, 150, 0, 0, "
                                "([0.001] * 3, [0.001] * 3), (0.0021, 2000.0, 60000.0))");
  CHECK(honest.verdict == "ok");
  REQUIRE(honest.candidate);
  CHECK(honest.candidate->median_ms == doctest::Approx(0.01));
  CHECK(honest.candidate->attempts == 2);
  CHECK(honest.calls_checked == 150);
  CHECK(honest.roofline_ms == doctest::Approx(0.0021));
  CHECK(honest.bandwidth_gbs == doctest::Approx(2000.0));
  CHECK(honest.roofline_fraction() == doctest::Approx(0.21));

  HarnessReport stateful = timing("finish_timing([(0.02, 0.01, 150), (0.01, 0.02, 150)], 1, 150, 75, 3000, "
                                  "([0.001], [0.001]), (0.0021, 2000.0, 60000.0))");
  CHECK(stateful.verdict == "cheat.stateful");
  CHECK(stateful.detail.find("wrong on 75 of 150 timed calls") != std::string::npos);

  HarnessReport unsynchronized = timing("finish_timing([(0.02, 0.01, 150), (0.01, 0.02, 150)], 1, 150, 0, 0, "
                                        "([0.001], [5.0]), (0.0021, 2000.0, 60000.0))");
  CHECK(unsynchronized.verdict == "cheat.unsynchronized_stream");

  HarnessReport beyond = timing("finish_timing([(0.02, 0.01, 150), (0.001, 0.02, 150)], 1, 150, 0, 0, "
                                "([0.001], [0.001]), (0.0021, 2000.0, 60000.0))");
  CHECK(beyond.verdict == "cheat.beyond_roofline");
  CHECK(beyond.detail.find("reading 4194304 bytes at 2000 GB/s") != std::string::npos);
  CHECK(beyond.roofline_ms == doctest::Approx(0.0021));
}

}  // namespace tailforge
