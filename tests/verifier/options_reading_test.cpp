// verifier_options_from_json through policies/config_section.h: what its errors say, and the
// verifier section's keys that other modules read.
#include <doctest/doctest.h>

#include "verifier/options.h"

using namespace tailforge;

namespace {

std::string options_error(const std::string& text) {
  Result<VerifierOptions> options = verifier_options_from_json(nlohmann::json::parse(text));
  return options.ok() ? "" : options.message();
}

}  // namespace

TEST_CASE("the verifier section's errors name the key; keys other modules read pass") {
  CHECK(options_error(R"({"verifier": {"compile_timeout_seconds": "x"}})") ==
        "verifier.compile_timeout_seconds must be a number");
  CHECK(options_error(R"({"verifier": {"keep_scratch": 1}})") == "verifier.keep_scratch must be true or false");
  CHECK(options_error(R"({"verifier": {"stages": "translate"}})") == "verifier.stages must be an array");
  CHECK(options_error(R"({"verifier": {"sm_targets": [80]}})").rfind("verifier.sm_targets: wrong type (", 0) == 0);
  CHECK(options_error(R"({"verifier": null})") == "verifier must be an object");
  CHECK(options_error(R"({"verifier": {"compile_timeout_seconds": 0}})") ==
        "verifier.compile_timeout_seconds must be > 0");
  CHECK(options_error(R"({"verifier": {"cache_max_mb": 5, "stages": ["translate"]}})").empty());
  Result<VerifierOptions> options =
      verifier_options_from_json(nlohmann::json::parse(R"({"verifier": {"stages": ["translate"], "keep_scratch": true}})"));
  REQUIRE(options.ok());
  CHECK(options->stages == std::vector<std::string>{"translate"});
  CHECK(options->keep_scratch);
  CHECK(options->sm_targets == VerifierOptions{}.sm_targets);
  CHECK(options->nvcc_single_pass == VerifierOptions{}.nvcc_single_pass);
}
