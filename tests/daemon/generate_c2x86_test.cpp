// `tailforge generate --track c2x86`: C functions written with their drivers, IO tests recorded
// from the gcc build and the oracle assembly, every function checked as the track checks it, and
// the summary a user reads (compile rate, IO pass rate, jump tables, feature tags).
#include <doctest/doctest.h>

#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "agents/c2x86/c_generator.h"
#include "base/files.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/c2x86/float_constants.h"
#include "verifier/c2x86/jump_tables.h"
#include "verifier/sandbox.h"
#include "verifier/stage_runner.h"

namespace tailforge {

TEST_CASE("generate --track c2x86 writes checked C functions with IO tests and oracle assembly") {
  if (!testing::tools_here({"gcc"}) || !testing::sandbox_here()) return;
  TempDir dir;
  std::string out = dir.file("functions");
  ProcessResult ran = run_tailforge({"generate", "--track", "c2x86", "--count", "24", "--seed", "5", "--out", out}, 300);
  CAPTURE(ran.stdout_text);
  CAPTURE(ran.stderr_text);
  REQUIRE(ran.exit_code == 0);
  CHECK(ran.stdout_text.find("compiled (gcc -O0 -fno-jump-tables, assembled, linked with the driver): 24 of 24") !=
        std::string::npos);
  CHECK(ran.stdout_text.find("passed their own IO tests (192 cases): 24 of 24 compiled") != std::string::npos);
  CHECK(ran.stdout_text.find("jump tables in oracle assembly: 0") != std::string::npos);
  for (const std::string& tag : c_feature_tags()) CHECK(ran.stdout_text.find(" " + tag + " ") != std::string::npos);
  CHECK(ran.stdout_text.find("interpreted back to gcc's words bit for bit in 4 of 4") != std::string::npos);
  size_t float_functions = 0;

  std::ifstream manifest(out + "/manifest.jsonl");
  std::string line;
  std::set<std::string> kinds;
  size_t lines = 0;
  while (std::getline(manifest, line)) {
    nlohmann::json entry = nlohmann::json::parse(line);
    ++lines;
    kinds.insert(entry["kind"].get<std::string>());
    CHECK(entry["compiled"] == true);
    CHECK(entry["io_passed"] == true);
    CHECK(entry["checks"]["c2x86.io"] == "ok");
    REQUIRE(entry["cases"].size() == 8);
    for (const nlohmann::json& io : entry["cases"]) CHECK_FALSE(io["expected"].get<std::string>().empty());
    std::string function = read_text_file_or_empty(out + "/" + entry["file"].get<std::string>());
    std::string driver = read_text_file_or_empty(out + "/" + entry["driver"].get<std::string>());
    std::string assembly = read_text_file_or_empty(out + "/" + entry["assembly"].get<std::string>());
    CHECK(function.find(entry["name"].get<std::string>() + "(") != std::string::npos);
    CHECK(driver.find("int main(void)") != std::string::npos);
    CHECK(assembly.find(".globl\t" + entry["name"].get<std::string>()) != std::string::npos);
    CHECK(find_jump_tables(assembly).empty());
    // The symbolic form: float constants as literals, which the interpreter turns back into the
    // oracle's words.
    std::string symbolic = read_text_file_or_empty(out + "/" + entry["symbolic_assembly"].get<std::string>());
    CHECK(entry["float_round_trip"] == true);
    CHECK(interpret_float_constants(symbolic).value() == assembly);
    if (entry["float_constants"].get<int64_t>() > 0) {
      ++float_functions;
      CHECK(symbolic.find("_literal\t") != std::string::npos);
      CHECK(symbolic != assembly);
    }
  }
  CHECK(lines == 24);
  CHECK(float_functions == 4);  // the float and double kinds, twice each in 24
  CHECK(kinds.size() == c_function_kinds().size());

  ProcessResult wrong = run_tailforge({"generate", "--track", "x86", "--out", out});
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.stderr_text.find("cuda2hip or c2x86") != std::string::npos);
}

}  // namespace tailforge
