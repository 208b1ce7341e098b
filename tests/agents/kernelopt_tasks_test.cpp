// The kernelopt built-in catalog: enough tasks of every operator type, candidates with distinct
// strategies and reasoning lengths, kernel units that follow the ABI (tf_launch, no main, no
// macros, no device-wide synchronization), deterministic text, and one fusion task's reference
// and candidates pasted into one program the way the harness does, compiled by nvcc when present.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "agents/kernelopt/builtin_tasks.h"
#include "base/process.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"

namespace tailforge {
namespace {

const char* const kLaunchSignature = "void tf_launch(const float* const* inputs, float* output, cudaStream_t stream)";

// What every kernel unit must and must not contain; the failure names the first broken rule.
std::string unit_problem(const std::string& unit) {
  if (unit.find(kLaunchSignature) == std::string::npos) return "no tf_launch with the ABI signature";
  for (const char* banned :
       {"main(", "#define", "extern \"C\"", "cudaDeviceSynchronize", "cudaMalloc(", "cudaFree(", "$("}) {
    if (unit.find(banned) != std::string::npos) return std::string("contains ") + banned;
  }
  std::istringstream lines(unit);
  for (std::string line; std::getline(lines, line);) {
    if (line.find('#') != std::string::npos && line.rfind("#include <", 0) != 0)
      return "a non-include directive: " + line;
  }
  return "";
}

// The units pasted as the harness does: #include lines hoisted (deduplicated), the rest inside
// its namespace. Candidates get numbered namespaces so that one program holds them all.
std::string pasted_program(const KernelTask& task, const std::vector<KernelCandidate>& candidates) {
  std::set<std::string> includes;
  auto body_of = [&](const std::string& unit) {
    std::istringstream lines(unit);
    std::string body;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("#include", 0) == 0) {
        includes.insert(line);
      } else {
        body += line + "\n";
      }
    }
    return body;
  };
  std::string namespaces;
  for (size_t i = 0; i < candidates.size(); ++i) {
    std::string name = i == 0 ? "tf_candidate" : "tf_candidate" + std::to_string(i);
    namespaces += "namespace " + name + " {\n" + body_of(candidates[i].source) + "}  // namespace " + name + "\n\n";
  }
  namespaces += "namespace tf_reference {\n" + body_of(task.reference_source) + "}  // namespace tf_reference\n\n";
  std::string program;
  for (const std::string& include : includes) program += include + "\n";
  return program + "\n" + namespaces + "int main() { return 0; }\n";
}

}  // namespace

TEST_CASE("kernelopt catalog: enough uniquely named tasks of every operator type") {
  std::vector<KernelTask> tasks = builtin_kernel_tasks();
  CHECK(tasks.size() >= 32);
  std::set<std::string> names;
  std::map<std::string, int> per_type;
  const std::set<std::string> domains = {"tensor", "linalg", "image", "stencil", "science"};
  for (const KernelTask& task : tasks) {
    CAPTURE(task.name);
    CHECK(names.insert(task.name).second);
    ++per_type[task.operator_type];
    CHECK(domains.count(task.domain) == 1);
    CHECK_FALSE(task.description.empty());
    CHECK(task.origin == "builtin");
    CHECK(task.tolerance > 0);
    CHECK(task.input_low < task.input_high);
    REQUIRE_FALSE(task.inputs.empty());
    int64_t bytes = task.output.elements * 4;
    for (const KernelBuffer& input : task.inputs) {
      CHECK(input.elements > 0);
      bytes += input.elements * 4;
    }
    CHECK(task.output.elements > 0);
    CHECK(bytes < 200'000'000);
    CHECK_MESSAGE(unit_problem(task.reference_source).empty(), unit_problem(task.reference_source));
  }
  for (const char* type : {kSingleOperator, kReductionOperator, kFusionOperator, kMatmulOperator, kStencilOperator}) {
    CHECK_MESSAGE(per_type[type] >= 4, type);
  }
  CHECK(per_type.size() == 5);
}

TEST_CASE("kernelopt catalog: every task has three or more candidates with distinct strategies and reasoning lengths") {
  for (const KernelTask& task : builtin_kernel_tasks()) {
    CAPTURE(task.name);
    std::vector<KernelCandidate> candidates = builtin_candidates(task);
    CHECK(candidates.size() >= 3);
    std::set<std::string> strategies;
    std::set<int64_t> lengths;
    for (const KernelCandidate& candidate : candidates) {
      CAPTURE(candidate.strategy);
      CHECK(candidate.task == task.name);
      CHECK(candidate.origin == "builtin");
      CHECK(strategies.insert(candidate.strategy).second);
      CHECK(lengths.insert(reasoning_length(candidate.reasoning)).second);
      CHECK(reasoning_length(candidate.reasoning) >= 40);
      CHECK(candidate.reasoning.find("$(") == std::string::npos);
      CHECK(candidate.source != task.reference_source);
      CHECK_MESSAGE(unit_problem(candidate.source).empty(), unit_problem(candidate.source));
      CHECK(candidate.source.find("tf_reference") == std::string::npos);
    }
  }
  KernelTask unknown;
  unknown.name = "no_such_task";
  CHECK(builtin_candidates(unknown).empty());
}

TEST_CASE("kernelopt catalog: two calls give the same text") {
  std::vector<KernelTask> first = builtin_kernel_tasks(), second = builtin_kernel_tasks();
  REQUIRE(first.size() == second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    CAPTURE(first[i].name);
    CHECK(first[i].name == second[i].name);
    CHECK(first[i].description == second[i].description);
    CHECK(first[i].reference_source == second[i].reference_source);
    std::vector<KernelCandidate> once = builtin_candidates(first[i]), again = builtin_candidates(second[i]);
    REQUIRE(once.size() == again.size());
    for (size_t j = 0; j < once.size(); ++j) {
      CHECK(once[j].strategy == again[j].strategy);
      CHECK(once[j].reasoning == again[j].reasoning);
      CHECK(once[j].source == again[j].source);
    }
  }
}

TEST_CASE("kernelopt catalog: a fusion task's reference and candidates compile in one program with nvcc") {
  if (!testing::nvcc_here()) return;
  std::vector<KernelTask> tasks = builtin_kernel_tasks();
  const KernelTask* fusion = nullptr;
  for (const KernelTask& task : tasks) {
    if (task.operator_type == kFusionOperator && !fusion) fusion = &task;
  }
  REQUIRE(fusion != nullptr);
  TempDir dir;
  std::string source = dir.file(fusion->name + ".cu");
  std::string program = pasted_program(*fusion, builtin_candidates(*fusion));
  std::ofstream(source) << program;
  ProcessSpec compile;
  compile.argv = {testing::nvcc_path(), "-O3", "-gencode", "arch=compute_80,code=sm_80", "-c", source, "-o", dir.file("unit.o")};
  compile.timeout_seconds = 180;
  ProcessResult compiled = run_process(compile);
  CAPTURE(program);
  REQUIRE_MESSAGE(compiled.succeeded(), compiled.stderr_text);
  CHECK_MESSAGE(compiled.stderr_text.find("warning") == std::string::npos, compiled.stderr_text);
  CHECK(std::filesystem::exists(dir.file("unit.o")));
}

}  // namespace tailforge
