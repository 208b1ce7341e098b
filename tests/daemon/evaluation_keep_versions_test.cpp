// eval.keep_versions: the cycle's evaluation step queues evaluate jobs only for the newest K
// versions of each lineage (a model and its retrained descendants); older ones are superseded,
// and `tailforge models` says so. A bad value is a configuration error naming file, key and value.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon/evaluation_jobs.h"
#include "daemon/loaded_policies.h"
#include "policies/config.h"
#include "store/evaluations.h"
#include "store/samples.h"
#include "synth/model_registry.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

// One evaluation item; lineage "a" of five versions (a-v1 <- a-v2 <- ... <- a-v5) and "b" of two.
void seed_lineages(Database& db) {
  Sample sample{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = "// an item\n",
                .status = "verified"};
  Result<InsertOutcome> inserted = insert_sample_if_absent(db, sample);
  REQUIRE(inserted.ok());
  REQUIRE(add_eval_items(db, {EvalItem{"cuda2hip", inserted->id, 1, std::nullopt, std::nullopt, 0}}).ok());
  for (int v = 1; v <= 5; ++v) {
    json definition = {{"name", "a-v" + std::to_string(v)}, {"kind", "builtin"}};
    if (v > 1) definition["parent"] = "a-v" + std::to_string(v - 1);
    REQUIRE(register_model(db, definition).ok());
  }
  REQUIRE(register_model(db, {{"name", "b-v1"}, {"kind", "builtin"}}).ok());
  REQUIRE(register_model(db, {{"name", "b-v2"}, {"kind", "builtin"}, {"parent", "b-v1"}}).ok());
}

// Runs one evaluate_models step under `keep_versions`; returns the models that got evaluate jobs.
std::string models_with_jobs(Database& db, const std::string& work_dir, int64_t keep_versions) {
  Result<json> config = load_config("");
  REQUIRE(config.ok());
  (*config)["eval"]["keep_versions"] = keep_versions;
  Result<std::unique_ptr<LoadedPolicies>> resources = load_policies(*config);
  REQUIRE(resources.ok());
  EvaluationJobs jobs((*resources)->eval, (*resources)->synth, (*resources)->setup(nullptr, work_dir),
                      (*resources)->runtime(nullptr));
  JobQueue queue(db);
  REQUIRE(db.exec("DELETE FROM job").ok());
  REQUIRE(queue.enqueue({.kind = kEvaluateModelsJob, .payload = R"({"cycle": 1})"}).ok());
  Result<std::optional<Job>> step = queue.lease("test", 60000, {kEvaluateModelsJob});
  REQUIRE(step.ok());
  REQUIRE(step->has_value());
  REQUIRE(jobs.plan(db, queue, **step, "test").ok());
  return query_text(db, "SELECT group_concat(name, ' ') FROM (SELECT m.name FROM job j JOIN model m"
                        " ON m.id = json_extract(j.payload, '$.model_id') WHERE j.kind = 'evaluate' ORDER BY m.name)");
}

}  // namespace

TEST_CASE("only the newest eval.keep_versions versions of a lineage get evaluation jobs; another lineage keeps its own") {
  TempDir dir;
  std::string db_path = dir.file("versions.db");
  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  seed_lineages(*db);

  CHECK(models_with_jobs(*db, dir.file("work"), 3) == "a-v3 a-v4 a-v5 b-v1 b-v2\n");
  CHECK(models_with_jobs(*db, dir.file("work"), 1) == "a-v5 b-v2\n");
  CHECK(models_with_jobs(*db, dir.file("work"), 0) == "a-v1 a-v2 a-v3 a-v4 a-v5 b-v1 b-v2\n");
}

TEST_CASE("tailforge models shows superseded versions as such, in text and JSON") {
  TempDir dir;
  std::string db_path = dir.file("versions.db");
  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    seed_lineages(*db);
  }
  ProcessResult listed = run_tailforge({"models", "--json", "--db", db_path});
  INFO(listed.stderr_text);
  REQUIRE(listed.exit_code == 0);
  json listing = json::parse(listed.stdout_text);  // every track with models: cuda2hip alone here
  REQUIRE(listing["tracks"].size() == 1);
  json report = listing["tracks"][0];
  std::string superseded;
  for (const json& model : report["models"]) {
    REQUIRE(model.contains("superseded"));
    if (model["superseded"].get<bool>()) superseded += model["name"].get<std::string>() + " ";
  }
  CHECK(superseded == "a-v1 a-v2 ");

  ProcessResult text = run_tailforge({"models", "--db", db_path});
  REQUIRE(text.exit_code == 0);
  CHECK(text.stdout_text.find("a-v1 (superseded)") != std::string::npos);
  CHECK(text.stdout_text.find("a-v3 (superseded)") == std::string::npos);
  CHECK(text.stdout_text.find("b-v1 (superseded)") == std::string::npos);
  CHECK(text.stdout_text.find("older than the newest 3 versions of its lineage (eval.keep_versions)") !=
        std::string::npos);
}

TEST_CASE("a negative eval.keep_versions is an error naming the file, the key and the value") {
  TempDir dir;
  std::string config = dir.file("bad.json");
  std::ofstream(config) << R"({"eval": {"keep_versions": -2}})";
  Result<json> loaded = load_config(config);
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.message() == config + ": key /eval/keep_versions has value -2, expected an integer >= 0");
}
