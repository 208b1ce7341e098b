// ExeBench records as c2x86 functions: Python-literal IO values read as JSON, the C++ exe wrapper
// turned into a stdin/stdout driver, and the result checked for real (gcc, the sandbox): a record
// whose outputs the gcc build reproduces passes its IO tests, one with a wrong expected output
// fails them, and records missing what the track needs are refused naming the field.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "agents/c2x86/exebench.h"
#include "test_support/exebench_fixture.h"
#include "verifier/c2x86/function_check.h"
#include "verifier/sandbox.h"
#include "test_support/tools_here.h"

namespace tailforge {
namespace {

using nlohmann::json;

// gcc and the sandbox (installed by setup.sh); a sandbox that is installed but fails fails the case.
bool tools_here() { return testing::tools_here({"gcc"}) && testing::sandbox_here(); }

}  // namespace

TEST_CASE("exebench: Python literals of IO values read as JSON") {
  CHECK(python_literal_to_json("42").value() == json(42));
  CHECK(python_literal_to_json("-7").value() == json(-7));
  CHECK(python_literal_to_json("2.5").value() == json(2.5));
  CHECK(python_literal_to_json("1e-3").value() == json(0.001));
  CHECK(python_literal_to_json("'it\\'s'").value() == json("it's"));
  CHECK(python_literal_to_json("\"a\\nb\\x41\"").value() == json("a\nbA"));
  CHECK(python_literal_to_json("[1, [2, 3], (4, 5,)]").value() == json::parse("[1, [2, 3], [4, 5]]"));
  CHECK(python_literal_to_json("{'x': 1, 'y': [True, None]}").value() == json::parse(R"({"x": 1, "y": [true, null]})"));
  CHECK(python_literal_to_json("18446744073709551615").value() == json(18446744073709551615ull));
  CHECK_FALSE(python_literal_to_json("[1, 2").ok());
  CHECK_FALSE(python_literal_to_json("1 2").ok());
  CHECK_FALSE(python_literal_to_json("b'bytes'").ok());
}

TEST_CASE("exebench: a record becomes a function, a stdin/stdout driver and IO cases") {
  CFunction function = c_function_from_exebench(exebench_record("12")).value();
  CHECK(function.name == "clamp_total");
  CHECK(function.driver_is_cpp);
  CHECK(function.function.find("int clamp_total(int *values") != std::string::npos);
  CHECK(function.driver.find("extern clamp_total") == std::string::npos);
  CHECK(function.driver.find("extern int clamp_total(int *values, int n, int limit);") != std::string::npos);
  CHECK(function.driver.find("#include <nlohmann/json.hpp>") != std::string::npos);
  CHECK(function.driver.find("placeholder.h") == std::string::npos);
  CHECK(function.driver.find("int exebench_wrapper_main(") != std::string::npos);
  REQUIRE(function.cases.size() == 2);
  CHECK(json::parse(function.cases[0].input) == json::parse(R"({"values": [1, 5, 9], "n": 3, "limit": 6})"));
  CHECK(function.cases[0].expected == R"({"returnv":12,"values":[1,5,6]})" "\n");
  for (const char* tag : {"arithmetic", "arrays", "loops", "pointers"})
    CHECK(std::count(function.features.begin(), function.features.end(), tag) == 1);
  CHECK(std::count(function.features.begin(), function.features.end(), "switch") == 0);

  json no_pairs = exebench_record("12");
  no_pairs["synth_io_pairs"] = nullptr;
  CHECK(c_function_from_exebench(no_pairs).message().find("no IO pairs") != std::string::npos);
  json no_block = exebench_record("12");
  no_block["synth_exe_wrapper"] = "int main(int argc, char** argv) { return 0; }";
  CHECK(c_function_from_exebench(no_block).message().find("extern \"C\"") != std::string::npos);
  json bad_value = exebench_record("twelve");
  CHECK(c_function_from_exebench(bad_value).message().find("case 1 output") != std::string::npos);
}

TEST_CASE("exebench: the gcc build reproduces a record's outputs; a wrong expected output fails its IO test") {
  if (!tools_here()) return;
  VerifierOptions verifier;
  C2x86Check right = check_c_function(c_function_from_exebench(exebench_record("12")).value(), {verifier, detected_toolchains()});
  for (const StageResult& stage : right.stages) CAPTURE(stage.name + " " + stage.status + " " + stage.diagnostics);
  CHECK(right.stage("c2x86.record") == nullptr);  // the record's outputs are the expected ones
  CHECK(right.passed());
  C2x86Check wrong = check_c_function(c_function_from_exebench(exebench_record("13")).value(), {verifier, detected_toolchains()});
  REQUIRE(wrong.stage("c2x86.io"));
  CHECK(wrong.stage("c2x86.io")->status == "fail");
  CHECK(wrong.stage("c2x86.io")->reason.find("expected \"{\\\"returnv\\\":13") != std::string::npos);
}

}  // namespace tailforge
