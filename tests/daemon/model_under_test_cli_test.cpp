// Whose model is under test, as the real binary reports it: `tailforge models` lists every track
// that has models (the configured track first) and names each track's model under test, and
// `tailforge doctor` says what the next retrain trigger runs, for which model. Real SQLite files.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "store/database.h"
#include "synth/model_registry.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

void add_model(const std::string& db_path, const json& definition) {
  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  Result<ModelRecord> model = register_model(*db, definition);
  REQUIRE_MESSAGE(model.ok(), model.message());
}

json run_json(const std::vector<std::string>& arguments) {
  ProcessResult ran = run_tailforge(arguments, 120);
  INFO(ran.stderr_text);
  CAPTURE(ran.stdout_text);
  REQUIRE((ran.exit_code == 0 || arguments.front() == "doctor"));
  return json::parse(ran.stdout_text);
}

// The "retrain" check of `doctor --json`.
json doctor_retrain(const std::string& db_path, const std::string& config = "") {
  std::vector<std::string> argv = {"doctor", "--json", "--db", db_path};
  if (!config.empty()) argv.insert(argv.end(), {"--config", config});
  json report = run_json(argv);
  for (const json& check : report["checks"]) {
    if (check["name"] == "retrain") return check;
  }
  FAIL("doctor printed no retrain check: " << report.dump());
  return json();
}

const json kBaselineV1 = {{"name", "baseline-v1"},
                          {"kind", "command"},
                          {"command", {"/usr/bin/tailforge", "baseline", "translate", "--dictionary", "/d.json"}}};

}  // namespace

TEST_CASE("models lists every track that has models, the configured track first, each with its model under test") {
  TempDir dir;
  std::string db = dir.file("models.db");
  REQUIRE(Database::open(db).ok());
  json empty = run_json({"models", "--json", "--db", db});
  REQUIRE(empty["tracks"].size() == 1);  // the configured track, models or not
  CHECK(empty["tracks"][0]["track"] == "cuda2hip");
  CHECK(empty["tracks"][0]["models"].empty());
  CHECK(empty["tracks"][0]["model_under_test"]["name"].is_null());

  add_model(db, {{"name", "decompiler"}, {"kind", "command"}, {"track", "ptx2cuda"}, {"command", {"/bin/cat"}}});
  add_model(db, {{"name", "gcc-o1"}, {"kind", "command"}, {"track", "c2x86"}, {"command", {"/bin/cat"}}});
  add_model(db, kBaselineV1);
  add_model(db, {{"name", "mine"}, {"kind", "openai"}, {"endpoint", "http://127.0.0.1:9"}});

  json listing = run_json({"models", "--json", "--db", db});
  REQUIRE(listing["tracks"].size() == 3);
  CHECK(listing["tracks"][0]["track"] == "cuda2hip");
  CHECK(listing["tracks"][1]["track"] == "c2x86");
  CHECK(listing["tracks"][2]["track"] == "ptx2cuda");
  CHECK(listing["tracks"][0]["models"].size() == 2);
  CHECK(listing["tracks"][0]["model_under_test"]["name"] == "mine");  // registered after baseline-v1, unevaluated
  CHECK(listing["tracks"][1]["model_under_test"]["name"] == "gcc-o1");
  CHECK(listing["tracks"][2]["model_under_test"]["name"] == "decompiler");

  json one = run_json({"models", "--json", "--track", "c2x86", "--db", db});
  CHECK(one["track"] == "c2x86");
  REQUIRE(one["models"].size() == 1);
  CHECK(one["models"][0]["name"] == "gcc-o1");
  CHECK(one == listing["tracks"][1]);

  ProcessResult table = run_tailforge({"models", "--db", db});
  REQUIRE(table.exit_code == 0);
  const std::string& text = table.stdout_text;
  CAPTURE(text);
  size_t cuda2hip = text.find("models of cuda2hip"), c2x86 = text.find("models of c2x86"),
         ptx2cuda = text.find("models of ptx2cuda");
  REQUIRE(cuda2hip != std::string::npos);
  REQUIRE(c2x86 != std::string::npos);
  REQUIRE(ptx2cuda != std::string::npos);
  CHECK(cuda2hip < c2x86);
  CHECK(c2x86 < ptx2cuda);
  CHECK(text.find("under test: mine (the newest active model of your own on cuda2hip") != std::string::npos);
  CHECK(text.find("under test: gcc-o1") != std::string::npos);

  // The configured track is listed first; synth.model_under_test names the one under test.
  std::string config = dir.file("c2x86.json");
  std::ofstream(config) << R"({"synth": {"policy_file": "policies/synth_policy_c2x86.json",
                                         "model_under_test": "baseline-v1"}})";
  json configured = run_json({"models", "--json", "--config", config, "--db", db});
  REQUIRE(configured["tracks"].size() == 3);
  CHECK(configured["tracks"][0]["track"] == "c2x86");
  CHECK(configured["tracks"][1]["track"] == "cuda2hip");
  CHECK(configured["tracks"][1]["model_under_test"]["name"] == "baseline-v1");
  CHECK(configured["tracks"][1]["model_under_test"]["why"] == "synth.model_under_test names it");
}

TEST_CASE("doctor says what the next retrain trigger runs and for which model") {
  TempDir dir;
  std::string db = dir.file("doctor.db");
  REQUIRE(Database::open(db).ok());

  json first = doctor_retrain(db);
  std::string detail = first["detail"];
  CAPTURE(detail);
  CHECK(first["level"] == "ok");
  CHECK(detail.find("at the next retrain trigger of cuda2hip: `") == 0);
  CHECK(detail.find("/tailforge baseline train --min-support 8` (retrain.command is unset and the track has no "
                    "model yet") != std::string::npos);
  CHECK(detail.find("for a first version") != std::string::npos);

  add_model(db, kBaselineV1);
  detail = doctor_retrain(db)["detail"];
  CHECK(detail.find("baseline train --min-support 8` (retrain.command is unset and baseline-v1 is a baseline learner "
                    "version") != std::string::npos);
  CHECK(detail.find("for baseline-v1, the track's newest version (no model under test: no active model of cuda2hip "
                    "has evaluations yet)") != std::string::npos);

  // The user's own model is under test: the default runs no command, and doctor warns.
  add_model(db, {{"name", "mine"}, {"kind", "openai"}, {"endpoint", "http://127.0.0.1:9"}});
  json own = doctor_retrain(db);
  detail = own["detail"];
  CHECK(own["level"] == "warn");
  CHECK(detail.find("no command (no retrain command: the model under test mine is not the baseline learner; set "
                    "retrain.command to your trainer), no webhook: only a snapshot is exported, for mine, the model "
                    "under test") != std::string::npos);
  CHECK(own["fix"].get<std::string>().find("set retrain.command to your trainer") == 0);

  // An explicit command runs whatever the model under test.
  std::string config = dir.file("trainer.json");
  std::ofstream(config) << R"({"retrain": {"command": ["/opt/train.sh", "--parent", "{tailforge}"]}})";
  json configured = doctor_retrain(db, config);
  detail = configured["detail"];
  CHECK(configured["level"] == "ok");
  CHECK(detail.find("`/opt/train.sh --parent ") != std::string::npos);
  CHECK(detail.find("(retrain.command), for mine, the model under test") != std::string::npos);

  // synth.model_under_test naming a model that is not registered: nothing is under test, a warning.
  std::string typo = dir.file("typo.json");
  std::ofstream(typo) << R"({"synth": {"model_under_test": "mine-v2"}, "retrain": {"command": ["/opt/train.sh"]}})";
  json unregistered = doctor_retrain(db, typo);
  CHECK(unregistered["level"] == "warn");
  CHECK(unregistered["detail"].get<std::string>().find("synth.model_under_test names 'mine-v2', which is not "
                                                       "registered") != std::string::npos);
}
