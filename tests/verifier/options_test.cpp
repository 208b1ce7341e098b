#include "verifier/options.h"

#include <doctest/doctest.h>

#include <fstream>

using namespace tailforge;

TEST_CASE("verifier options come from the verifier and sandbox sections with defaults") {
  auto defaults = verifier_options_from_json(nlohmann::json::object());
  REQUIRE(defaults.ok());
  CHECK(defaults->sm_targets == std::vector<std::string>{"sm_80", "sm_90"});
  CHECK(defaults->amd_targets == std::vector<std::string>{"gfx1100"});
  CHECK(defaults->sandbox.mode == "bwrap");
  auto custom = verifier_options_from_json(nlohmann::json::parse(
      R"({"verifier":{"amd_targets":["gfx1100","gfx90a"],"compare_tolerance":0.01,"measurement_units":["ms"]},)"
      R"("sandbox":{"max_processes":16}})"));
  REQUIRE(custom.ok());
  CHECK(custom->amd_targets.size() == 2);
  CHECK(custom->compare_tolerance == 0.01);
  CHECK(custom->measurement_units == std::vector<std::string>{"ms"});
  CHECK(custom->sandbox.limits.max_processes == 16);
}

TEST_CASE("a bad target or type is an error naming the key") {
  auto bad_target = verifier_options_from_json(nlohmann::json::parse(R"({"verifier":{"sm_targets":["ampere"]}})"));
  CHECK_FALSE(bad_target.ok());
  CHECK(bad_target.message().find("verifier.sm_targets") != std::string::npos);
  auto bad_type = verifier_options_from_json(nlohmann::json::parse(R"({"verifier":{"compile_timeout_seconds":"x"}})"));
  CHECK_FALSE(bad_type.ok());
}

TEST_CASE("the shipped default configuration gives the verifier's defaults") {
  std::ifstream file(std::string(TAILFORGE_SOURCE_DIR) + "/config/default.json");
  auto config = nlohmann::json::parse(file, nullptr, false);
  REQUIRE_FALSE(config.is_discarded());
  auto options = verifier_options_from_json(config);
  REQUIRE_MESSAGE(options.ok(), options.message());
  VerifierOptions defaults;
  CHECK(options->sm_targets == defaults.sm_targets);
  CHECK(options->amd_targets == defaults.amd_targets);
  CHECK(options->measurement_units == defaults.measurement_units);
  CHECK(options->cuda_single_queue_first == defaults.cuda_single_queue_first);
  CHECK(options->sandbox.mode == defaults.sandbox.mode);
  CHECK(options->sandbox.limits.max_processes == defaults.sandbox.limits.max_processes);
  CHECK(options->sandbox.limits.address_space_bytes == defaults.sandbox.limits.address_space_bytes);
  CHECK(options->sandbox.limits.file_size_bytes == defaults.sandbox.limits.file_size_bytes);
}
