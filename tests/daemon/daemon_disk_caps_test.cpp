// A daemon run under small caps (retrain.keep_snapshots 1, eval.keep_versions 1, 1 MB compile
// cache and artifacts, a 60-minute scratch age) retrains every cycle and ends with every place
// the daemon writes within its cap or retention rule.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "store/cache.h"
#include "store/database.h"
#include "store/retention.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"

using namespace tailforge;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void stale_folder(const fs::path& folder) {
  fs::create_directories(folder);
  std::ofstream(folder / "program.cu") << "left by a killed run";
  fs::last_write_time(folder, fs::file_time_type::clock::now() - std::chrono::hours(3));
}

}  // namespace

TEST_CASE("a daemon run under small caps ends with every store within its cap" * doctest::test_suite("long")) {
  TempDir dir;
  std::string db_path = dir.file("capped.db");
  fs::path snapshots = dir.file("snapshots"), scratch = dir.file("scratch");
  stale_folder(scratch / "tailforge-verify-OLDOLD");
  stale_folder(fs::path(db_path + ".work") / "00000000deadbeef");
  fs::create_directories(scratch / "tailforge-verify-NEWNEW");
  json config = {
      {"log_level", "info"},
      {"store", {{"artifact_cap_mb", 1}, {"llm_cache_max_mb", 1}}},
      {"daemon", {{"samples_per_cycle", 8}, {"fill_samples", 0}, {"progress", false}, {"compile_slots", 2},
                  {"scratch_max_age_minutes", 60}}},
      {"verifier", {{"stages", {"translate", "amd.asm"}}, {"cache_max_mb", 1}, {"scratch_root", scratch.string()}}},
      {"eval", {{"fraction", 0.4}, {"keep_versions", 1}}},
      {"synth", {{"enabled", false}}},
      {"retrain", {{"enabled", true}, {"min_initial_verified", 1}, {"min_model_tail_samples", 0},
                   {"min_new_verified", 1}, {"min_tail_gain", 0}, {"accuracy_drop", 0},
                   {"snapshot_dir", snapshots.string()}, {"keep_snapshots", 1}}}};
  std::string config_path = dir.file("capped.json");
  std::ofstream(config_path) << config.dump(2);

  ProcessResult run = run_tailforge(
      {"daemon", "--cycles", "3", "--db", db_path, "--config", config_path, "--no-progress"}, 300);
  INFO(run.spawn_error, run.stderr_text);
  REQUIRE(run.exit_code == 0);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  int64_t events = query_int(*db, "SELECT count(*) FROM retrain_event WHERE status = 'ok'");
  REQUIRE(events >= 2);  // a snapshot more than retrain.keep_snapshots was made
  int whole = 0, thinned = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(snapshots)) {
    if (fs::exists(entry.path() / "manifest.json")) {
      ++whole;
    } else {
      ++thinned;
      CHECK(fs::exists(entry.path() / "baseline-dictionary.json"));  // its superseded version still answers
    }
  }
  CHECK(whole == 1);
  CHECK(whole + thinned == events);
  // eval.keep_versions 1: once a newer version of the lineage was registered, the older one got no
  // new evaluation jobs; the newest got its own.
  CHECK(query_int(*db, "SELECT count(*) FROM job j JOIN model m ON m.id = json_extract(j.payload, '$.model_id')"
                       " WHERE j.kind = 'evaluate' AND EXISTS (SELECT 1 FROM model n WHERE n.id > m.id"
                       " AND n.created_ms < j.created_ms)") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE kind = 'evaluate' AND json_extract(payload, '$.model_id') ="
                       " (SELECT max(id) FROM model)") > 0);

  CHECK(cache_bytes(*db, "compile").value() <= 1048576);
  CHECK(cache_bytes(*db, "llm").value() <= 1048576);
  Result<ArtifactGcPlan> artifacts = plan_artifact_gc(*db, 1048576);
  REQUIRE(artifacts.ok());
  CHECK(artifacts->unreferenced.count == 0);
  // Over the cap, only what retention always keeps (verified samples' outputs, answers) may stay.
  CHECK((artifacts->total.bytes <= 1048576 || artifacts->failed_only.count == 0));

  // Each compile the daemon ran stored the CPU of its processes, which status --json sums per stage.
  int64_t compiled = query_int(*db, "SELECT count(*) FROM verification WHERE stage LIKE 'amd.asm.%' AND status = 'ok'"
                                    " AND cached = 0");
  // Where the AMD tools are, the daemon compiled for gfx1100: a run that compiled nothing fails.
  if (testing::amd_tools_here("the gfx1100 compiles whose CPU is checked")) {
    CHECK(compiled > 0);
    CHECK(query_int(*db, "SELECT count(*) FROM verification WHERE stage LIKE 'amd.asm.%' AND status = 'ok'"
                         " AND cached = 0 AND NOT cpu_seconds > 0") == 0);
    ProcessResult status = run_tailforge({"status", "--json", "--db", db_path});
    REQUIRE(status.exit_code == 0);
    json seconds = json::parse(status.stdout_text)["stage_seconds"];
    CHECK(seconds["cpu_total"].get<double>() > 0);
    int shown = 0;
    for (const json& stage : seconds["stages"]) {
      if (stage["stage"].get<std::string>().rfind("amd.asm.", 0) != 0) continue;
      ++shown;
      CHECK(stage["cpu_seconds"].get<double>() > 0);
    }
    CHECK(shown > 0);
  }

  CHECK_FALSE(fs::exists(scratch / "tailforge-verify-OLDOLD"));
  CHECK_FALSE(fs::exists(fs::path(db_path + ".work") / "00000000deadbeef"));
  CHECK(fs::exists(scratch / "tailforge-verify-NEWNEW"));
}
