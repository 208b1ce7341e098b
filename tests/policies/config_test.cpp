#include <doctest/doctest.h>

#include <fstream>

#include "base/files.h"
#include "policies/config.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

std::string write_file(const TempDir& dir, const std::string& name, const std::string& text) {
  std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

const nlohmann::json kDefaults = nlohmann::json::parse(R"({
  "log_level": "info",
  "daemon": {"cycles": 0, "drain_grace_seconds": 30, "rate": 1.5},
  "llm": {"endpoints": {}},
  "model": null
})");

}  // namespace

TEST_CASE("the shipped default configuration loads and holds every section") {
  Result<nlohmann::json> config = load_config("");
  REQUIRE(config.ok());
  for (const char* section :
       {"store", "daemon", "http", "verifier", "sandbox", "agents", "llm", "taxonomy", "synth", "retrain"}) {
    CHECK_MESSAGE(config->contains(section), section);
  }
  CHECK((*config)["agents"]["generator"] == "builtin");  // the default run needs no LLM
  CHECK((*config)["agents"]["translator"] == "builtin");
}

TEST_CASE("an agent must be builtin or llm; another value fails naming the key path and both values") {
  Result<nlohmann::json> defaults = load_config("");
  REQUIRE(defaults.ok());
  nlohmann::json both = nlohmann::json::parse(R"({"agents": {"generator": "llm", "translator": "llm"}})");
  Result<nlohmann::json> llm = merge_config(*defaults, both, "u.json");
  REQUIRE(llm.ok());
  CHECK((*llm)["agents"]["generator"] == "llm");
  CHECK((*llm)["agents"]["translator"] == "llm");
  Result<nlohmann::json> wrong =
      merge_config(*defaults, nlohmann::json::parse(R"({"agents": {"translator": "gpt-4"}})"), "u.json");
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.message() == "u.json: key /agents/translator has value \"gpt-4\", expected \"builtin\" or \"llm\"");
  Result<nlohmann::json> not_text =
      merge_config(*defaults, nlohmann::json::parse(R"({"agents": {"generator": 1}})"), "u.json");
  REQUIRE_FALSE(not_text.ok());
  CHECK(not_text.message() == "u.json: key /agents/generator has value 1, expected a string");
}

TEST_CASE("a user file overrides defaults and keeps the rest") {
  Result<nlohmann::json> merged =
      merge_config(kDefaults, nlohmann::json::parse(R"({"daemon": {"cycles": 3}, "llm": {"endpoints": {"local": "x"}}})"),
                   "user.json");
  REQUIRE(merged.ok());
  CHECK((*merged)["daemon"]["cycles"] == 3);
  CHECK((*merged)["daemon"]["drain_grace_seconds"] == 30);
  CHECK((*merged)["llm"]["endpoints"]["local"] == "x");
}

TEST_CASE("an unknown key fails naming the file, the key path and the value") {
  Result<nlohmann::json> merged =
      merge_config(kDefaults, nlohmann::json::parse(R"({"daemon": {"cylces": 3}})"), "/etc/tf.json");
  REQUIRE_FALSE(merged.ok());
  CHECK(merged.message() == "/etc/tf.json: unknown key /daemon/cylces (value 3)");
}

TEST_CASE("a wrong type fails naming the file, the key path, the value and the expected type") {
  Result<nlohmann::json> merged =
      merge_config(kDefaults, nlohmann::json::parse(R"({"daemon": {"cycles": "many"}})"), "user.json");
  REQUIRE_FALSE(merged.ok());
  CHECK(merged.message() == "user.json: key /daemon/cycles has value \"many\", expected an integer");
  Result<nlohmann::json> real = merge_config(kDefaults, nlohmann::json::parse(R"({"daemon": {"rate": 2}})"), "u");
  CHECK(real.ok());  // an integer is a number
  Result<nlohmann::json> fraction = merge_config(kDefaults, nlohmann::json::parse(R"({"daemon": {"cycles": 2.5}})"), "u");
  CHECK_FALSE(fraction.ok());
}

TEST_CASE("a config file with broken JSON names the file and the position") {
  TempDir dir;
  std::string path = write_file(dir, "broken.json", "{\n  \"daemon\": {\"cycles\": 3,,}\n}\n");
  Result<nlohmann::json> config = load_config(path);
  REQUIRE_FALSE(config.ok());
  CHECK(config.message().find(path) == 0);
  CHECK(config.message().find("line 2") != std::string::npos);
}

TEST_CASE("a config file that is not an object, or is missing, is an error naming it") {
  TempDir dir;
  std::string list = write_file(dir, "list.json", "[1, 2]");
  CHECK(load_config(list).message() == list + ": the configuration must be a JSON object");
  CHECK(load_config(dir.file("absent.json")).message() == dir.file("absent.json") + ": cannot open file");
}

TEST_CASE("--demo's configuration sits between the defaults and the user's file, and is smaller than the defaults") {
  Result<nlohmann::json> defaults = load_config("");
  REQUIRE(defaults.ok());
  std::string demo_file = data_path("config/demo.json");
  Result<nlohmann::json> demo_only = read_json_file(demo_file);
  REQUIRE_MESSAGE(demo_only.ok(), demo_only.message());
  Result<nlohmann::json> demo = load_config_layers({demo_file, ""});
  REQUIRE_MESSAGE(demo.ok(), demo.message());
  // Same loop, fewer samples: fewer programs per cycle and no fill.
  CHECK((*demo)["daemon"]["samples_per_cycle"] == (*demo_only)["daemon"]["samples_per_cycle"]);
  CHECK((*demo)["daemon"]["samples_per_cycle"].get<int>() < (*defaults)["daemon"]["samples_per_cycle"].get<int>());
  CHECK((*demo)["daemon"]["fill_samples"] == 0);
  CHECK((*demo)["agents"] == (*defaults)["agents"]);
  // NVIDIA code for the first of the default's GPU targets only; every other verifier key is the default's.
  nlohmann::json verifier = (*demo)["verifier"];
  REQUIRE(verifier["sm_targets"].size() == 1);
  CHECK(verifier["sm_targets"][0] == (*defaults)["verifier"]["sm_targets"][0]);
  verifier["sm_targets"] = (*defaults)["verifier"]["sm_targets"];
  CHECK(verifier == (*defaults)["verifier"]);
  CHECK((*demo)["synth"]["multiplier"] == (*defaults)["synth"]["multiplier"]);
  TempDir dir;
  std::string user = write_file(dir, "user.json", R"({"daemon": {"samples_per_cycle": 3}})");
  Result<nlohmann::json> layered = load_config_layers({demo_file, user});
  REQUIRE(layered.ok());
  CHECK((*layered)["daemon"]["samples_per_cycle"] == 3);
  CHECK((*layered)["daemon"]["fill_samples"] == 0);
  // A bad layer is named.
  std::string bad = write_file(dir, "bad.json", R"({"daemon": {"no_such_key": 1}})");
  Result<nlohmann::json> refused = load_config_layers({demo_file, bad});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.message().find("bad.json") != std::string::npos);
}
