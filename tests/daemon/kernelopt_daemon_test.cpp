// The kernelopt track as the daemon's loop, through the tailforge binary on a real store with
// real nvcc: tasks grow every cycle, their references and built-in candidates are built, the
// kernelopt models are judged on every evaluation task, failures land in the taxonomy per model,
// and where no GPU exists the run and timing are skipped with the reason and no speedup is ever
// stored; then a retrain: the curated snapshot (candidates a GPU host measured) is handed to a
// command, which registers the next version, and the same cycle evaluates it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "agents/kernelopt/builtin_tasks.h"
#include "synth/kernelopt/store.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/timed_measurement.h"
#include "test_support/tools_here.h"
#include "verifier/toolchains.h"

namespace tailforge {
namespace {

// The model that answers with the reference it was shown (right, and no faster), and one that
// answers with prose (a compile failure).
void add_models(const std::string& db_path) {
  ProcessResult copier = run_tailforge({"model", "add", "--db", db_path, "--name", "copier", "--kind", "command",
                                        "--track", "kernelopt", "--command", "sed -n /^```cuda$/,/^```$/p"});
  REQUIRE_MESSAGE(copier.exit_code == 0, copier.stderr_text);
  ProcessResult talker = run_tailforge({"model", "add", "--db", db_path, "--name", "talker", "--kind", "command",
                                        "--track", "kernelopt", "--command", "echo surely-faster"});
  REQUIRE_MESSAGE(talker.exit_code == 0, talker.stderr_text);
}

// One NVIDIA target where no GPU runs the programs (a quicker build); the GPU's own where one does.
std::string write_config(TempDir& dir, const std::string& retrain, const std::string& under_test = "") {
  std::string config = dir.file("kernelopt.json");
  std::string targets = detected_toolchains().has_gpu("nvidia") ? "" : R"("verifier": {"sm_targets": ["sm_80"]},)";
  std::ofstream(config) << R"({"daemon": {"samples_per_cycle": 2, "fill_samples": 0, "cycles_in_flight": 1},
    )" << targets << R"(
    "synth": {"policy_file": "policies/synth_policy_kernelopt.json", "multiplier": 2, "top_k": 1,
              "model_under_test": ")" << under_test << R"("},
    "eval": {"fraction": 1.0, "min_items_per_family": 0, "min_items_per_tree": 0},
    "retrain": )" << retrain << "}";
  return config;
}

ProcessResult run_daemon(const std::string& db_path, const std::string& config, int cycles) {
  ProcessResult ran = run_tailforge({"daemon", "--db", db_path, "--config", config, "--cycles", std::to_string(cycles),
                                     "--no-progress"},
                                    900);
  CAPTURE(ran.stderr_text.substr(ran.stderr_text.size() > 6000 ? ran.stderr_text.size() - 6000 : 0));
  REQUIRE(ran.exit_code == 0);
  return ran;
}

}  // namespace

TEST_CASE("kernelopt daemon: tasks grow each cycle, models are judged on them, timing is said to need a GPU" *
          doctest::test_suite("long")) {
  if (!testing::nvcc_here("kernel tasks and candidates") || !testing::sandbox_here()) return;
  bool gpu = detected_toolchains().has_gpu("nvidia");
  TempDir dir;
  std::string db_path = dir.file("k.db");
  add_models(db_path);
  std::string config = write_config(dir, R"({"track": "kernelopt", "enabled": false})");
  ProcessResult ran = run_daemon(db_path, config, 2);
  if (!gpu) CHECK(ran.stderr_text.find("timing needs a GPU") != std::string::npos);

  Database db = Database::open(db_path).value();
  CHECK(query_int(db, "SELECT count(*) FROM cycle WHERE state = 'done'") == 2);
  CHECK(query_int(db, "SELECT count(*) FROM sample WHERE track <> 'kernelopt'") == 0);
  // Both cycles made tasks: each cycle's generate jobs and, in kernelopt_task, the verified ones.
  CHECK(query_int(db, "SELECT count(DISTINCT cycle_id) FROM sample WHERE origin = 'template'") == 2);
  int64_t tasks = query_int(db, "SELECT count(*) FROM kernelopt_task");
  CHECK(tasks >= 4);
  // Each verified task's built-in candidates were built; without a GPU their runs are skipped
  // with the reason, and nothing has a speedup.
  CHECK(query_int(db, "SELECT count(*) FROM kernelopt_candidate WHERE origin = 'builtin'") >= 3 * tasks);
  if (!gpu) {
    CHECK(query_int(db, "SELECT count(*) FROM kernelopt_measurement WHERE speedup IS NOT NULL") == 0);
    CHECK(query_int(db, "SELECT count(*) FROM kernelopt_measurement WHERE status = 'skipped' AND detail <> ''") > 0);
  }
  // Every active model was measured in each cycle on the items it had not answered.
  for (const char* model : {"copier", "talker"}) {
    CAPTURE(model);
    CHECK(query_int(db, std::string("SELECT count(*) FROM evaluation e JOIN model m ON m.id = e.model_id WHERE m.name = '") +
                            model + "'") == query_int(db, "SELECT count(*) FROM eval_item WHERE track = 'kernelopt'"));
  }
  INFO(query_text(db, "SELECT c.task || ' ' || m.status || ' ' || m.category || ' ' || substr(m.detail, 1, 300)"
                      " FROM kernelopt_candidate c JOIN kernelopt_measurement m ON m.candidate_id = c.id"
                      " WHERE c.model = 'copier'"));
  // The copier is right; timed, it is no faster than what it copied, so below the speedup target
  // it fails as kernelopt.slower and nothing else.
  CHECK(query_int(db, "SELECT count(*) FROM evaluation e JOIN model m ON m.id = e.model_id WHERE m.name = 'copier'"
                      " AND (e.ok = 1 OR e.category = 'kernelopt.slower')") ==
        query_int(db, "SELECT count(*) FROM eval_item WHERE track = 'kernelopt'"));
  if (!gpu) {
    CHECK(query_int(db, "SELECT count(*) FROM evaluation e JOIN model m ON m.id = e.model_id"
                        " WHERE m.name = 'copier' AND e.ok = 1") > 0);
  }
  CHECK(query_int(db, "SELECT count(*) FROM evaluation e JOIN model m ON m.id = e.model_id"
                      " WHERE m.name = 'talker' AND e.category LIKE 'kernelopt.compile%'") > 0);

  ProcessResult taxonomy = run_tailforge({"taxonomy", "--db", db_path, "--track", "kernelopt", "--model", "talker"});
  REQUIRE_MESSAGE(taxonomy.exit_code == 0, taxonomy.stderr_text);
  CHECK(taxonomy.stdout_text.find("kernelopt") != std::string::npos);
  CHECK(taxonomy.stdout_text.find("compile") != std::string::npos);

  ProcessResult models = run_tailforge({"models", "--db", db_path, "--config", config, "--track", "kernelopt", "--json"});
  REQUIRE_MESSAGE(models.exit_code == 0, models.stderr_text);
  nlohmann::json listed = nlohmann::json::parse(models.stdout_text);
  bool copier_seen = false;
  for (const nlohmann::json& model : listed["models"]) {
    if (model["name"] != "copier") continue;
    copier_seen = true;
    REQUIRE(model.contains("kernels"));
    CHECK(model["kernels"]["candidates"].get<int>() > 0);
    CHECK(model["kernels"]["rejected"].empty());
    if (gpu) CHECK(model["kernels"]["right"].get<int>() > 0);
    if (!gpu) CHECK(model["kernels"]["fast_1"].is_null());
  }
  CHECK(copier_seen);
  ProcessResult table = run_tailforge({"models", "--db", db_path, "--config", config, "--track", "kernelopt"});
  REQUIRE(table.exit_code == 0);
  CHECK(table.stdout_text.find(gpu ? "kernels: correct" : "none run") != std::string::npos);
}

TEST_CASE("kernelopt daemon: a retrain on the curated snapshot registers the next version, which the cycle evaluates" *
          doctest::test_suite("long")) {
  if (!testing::nvcc_here("kernel tasks and candidates") || !testing::sandbox_here()) return;
  TempDir dir;
  std::string db_path = dir.file("k.db");
  add_models(db_path);
  // Measurements a GPU host made with `kernelopt run` on two GEMM tasks of the catalog: the curated
  // training data. (Written here as rows: this host may have no GPU to time them.)
  {
    Database db = Database::open(db_path).value();
    int stored = 0;
    for (const KernelTask& task : builtin_kernel_tasks()) {
      if (task.operator_type != kMatmulOperator || stored == 2) continue;
      ++stored;
      REQUIRE(store_kernelopt_task(db, task).ok());
      double speedup = 2.0;
      for (const KernelCandidate& candidate : builtin_candidates(task)) {
        StoredCandidate kept = store_kernelopt_candidate(db, task, candidate).value();
        REQUIRE(store_kernelopt_measurement(db, kept, task, timed_measurement(1.0, 1.0 / speedup), "gpu-host").ok());
        speedup *= 2;
      }
    }
    REQUIRE(stored == 2);
  }
  std::string script = dir.file("retrain.sh");
  std::ofstream(script) << "#!/bin/sh\nset -e\ntest -f \"$TAILFORGE_MANIFEST\"\n\"" << TAILFORGE_BINARY
                        << "\" model add --db \"$TAILFORGE_DB\" --name copier-v2 --kind command --track kernelopt"
                           " --command 'sed -n /^```cuda$/,/^```$/p' --parent \"$TAILFORGE_PARENT_MODEL\""
                           " --retrain-event \"$TAILFORGE_RETRAIN_EVENT\"\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  std::string config = write_config(dir, R"({"track": "kernelopt", "command": [")" + script +
                                             R"("], "min_initial_verified": 0, "min_new_verified": 1, "min_tail_gain": 0,
      "min_model_tail_samples": 0, "accuracy_drop": 0})",
                                    "copier");
  ProcessResult ran = run_daemon(db_path, config, 1);
  INFO(ran.stderr_text.substr(ran.stderr_text.size() > 6000 ? ran.stderr_text.size() - 6000 : 0));

  Database db = Database::open(db_path).value();
  REQUIRE(query_int(db, "SELECT count(*) FROM retrain_event WHERE status = 'ok'") == 1);
  CHECK(query_text(db, "SELECT p.name FROM model m JOIN model p ON p.id = m.parent_id WHERE m.name = 'copier-v2'") !=
        "");
  CHECK(query_int(db, "SELECT count(*) FROM evaluation e JOIN model m ON m.id = e.model_id WHERE m.name = 'copier-v2'") ==
        query_int(db, "SELECT count(*) FROM eval_item WHERE track = 'kernelopt'"));
  nlohmann::json reason = nlohmann::json::parse(query_text(db, "SELECT reason FROM retrain_event"));
  CHECK(reason["snapshot"]["train_samples"].get<int64_t>() > 0);
  ProcessResult models = run_tailforge({"models", "--db", db_path, "--config", config, "--track", "kernelopt"});
  REQUIRE(models.exit_code == 0);
  CHECK(models.stdout_text.find("copier-v2") != std::string::npos);
  CHECK(models.stdout_text.find("kernels: ") != std::string::npos);
}

}  // namespace tailforge
