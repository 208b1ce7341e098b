// The c2x86 generator: deterministic per seed and index, every kind and feature tag written, and
// its functions and drivers are real C: gcc builds them as the oracle does (-O0
// -fno-jump-tables, function and driver as separate units) and every IO case runs to exit 0.
#include "agents/c2x86/c_generator.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "base/process.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"

namespace tailforge {
namespace {

ProcessResult run(std::vector<std::string> argv, const std::string& input = "") {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.stdin_text = input;
  spec.timeout_seconds = 60;
  return run_process(spec);
}

}  // namespace

TEST_CASE("c2x86 generator: the same request gives the same function; indices rotate through every kind") {
  std::set<std::string> kinds, names, tags;
  for (uint64_t index = 0; index < 48; ++index) {
    Result<CFunction> once = generate_c_function({.seed = 7, .index = index});
    Result<CFunction> again = generate_c_function({.seed = 7, .index = index});
    REQUIRE(once.ok());
    CHECK(once->function == again->function);
    CHECK(once->driver == again->driver);
    REQUIRE(once->cases.size() == 8);
    CHECK(once->cases[3].input == again->cases[3].input);
    CHECK(once->cases[3].expected.empty());
    CHECK(once->function.find(once->declarations) != std::string::npos);
    CHECK(once->driver.find("int main(void)") != std::string::npos);
    CHECK(once->function.find("main(") == std::string::npos);
    names.insert(once->name);
    for (const std::string& tag : once->features) {
      CHECK_MESSAGE(std::find(c_feature_tags().begin(), c_feature_tags().end(), tag) != c_feature_tags().end(), tag);
      tags.insert(tag);
    }
  }
  CHECK(tags.size() == c_feature_tags().size());
  CHECK(names.size() > c_function_kinds().size());  // kinds have variants
  CHECK(generate_c_function({.seed = 7, .index = 0})->function != generate_c_function({.seed = 8, .index = 0})->function);
  CHECK_FALSE(generate_c_function({.seed = 1, .kind = "no_such_kind"}).ok());
  for (const std::string& kind : c_function_kinds()) {
    Result<CFunction> function = generate_c_function({.seed = 3, .index = 5, .kind = kind});
    REQUIRE_MESSAGE(function.ok(), kind);
  }
}

TEST_CASE("c2x86 generator: functions build as separate units with gcc -O0 and every IO case runs") {
  if (!testing::tools_here({"gcc"})) return;
  TempDir dir;
  for (uint64_t index = 0; index < 36; ++index) {
    CFunction function = generate_c_function({.seed = 11, .index = index}).value();
    CAPTURE(function.function);
    std::string stem = dir.file(std::to_string(index));
    std::ofstream(stem + "_function.c") << function.function;
    std::ofstream(stem + "_driver.c") << function.driver;
    ProcessResult assembly =
        run({"gcc", "-O0", "-fno-jump-tables", "-Wall", "-Werror", "-S", stem + "_function.c", "-o", stem + ".s"});
    REQUIRE_MESSAGE(assembly.succeeded(), assembly.stderr_text);
    ProcessResult linked = run({"gcc", "-Wall", "-Werror", stem + "_driver.c", stem + ".s", "-o", stem, "-lm"});
    REQUIRE_MESSAGE(linked.succeeded(), function.driver, "\n", linked.stderr_text);
    std::set<std::string> outputs;
    for (const IoCase& io : function.cases) {
      ProcessResult ran = run({stem}, io.input + "\n");
      CHECK_MESSAGE(ran.exit_code == 0, io.input, ": ", ran.stderr_text);
      CHECK_MESSAGE(!ran.stdout_text.empty(), io.input);
      CHECK(run({stem}, io.input + "\n").stdout_text == ran.stdout_text);
      outputs.insert(ran.stdout_text);
    }
    CHECK_MESSAGE(outputs.size() >= 2, function.name, ": the cases do not tell functions apart");
  }
}

}  // namespace tailforge
