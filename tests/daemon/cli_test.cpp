#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "base/process.h"
#include "store/corpus.h"
#include "store/cycles.h"
#include "store/database.h"
#include "store/samples.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/toolchains.h"

using namespace tailforge;

TEST_CASE("--help lists the commands and exits 0") {
  ProcessResult help = run_tailforge({"--help"});
  CHECK(help.exit_code == 0);
  for (const char* command : {"daemon", "status", "taxonomy", "verify", "lineage", "export", "toolchains"}) {
    CHECK_MESSAGE(help.stdout_text.find(std::string("  ") + command) != std::string::npos, command);
  }
}

TEST_CASE("an unknown command or option exits 2 with one line naming it, then the usage") {
  ProcessResult command = run_tailforge({"frobnicate"});
  CHECK(command.exit_code == 2);
  CHECK(command.stderr_text.rfind("tailforge: unknown command 'frobnicate'\nusage:", 0) == 0);
  ProcessResult option = run_tailforge({"status", "--verbose"});
  CHECK(option.exit_code == 2);
  CHECK(option.stderr_text.rfind("tailforge: unknown option '--verbose' for 'status'\nusage:", 0) == 0);
}

TEST_CASE("an option's value of the wrong form exits 2 naming the option and the form, before anything runs") {
  TempDir dir;  // no database: the form is checked before the command looks for one
  struct Bad {
    std::vector<std::string> words;
    std::string says;
  };
  const std::vector<Bad> cases = {
      {{"kernelopt", "run", "--samples", "abc"}, "option '--samples' needs a whole number from 1 to 1000, got 'abc'"},
      {{"worker", "--jobs", "2.5", "--server", "http://127.0.0.1:9"}, "option '--jobs' needs a whole number"},
      {{"daemon", "--listen", "127.0.0.1:70000"}, "option '--listen' needs HOST:PORT"},
      {{"taxonomy", "--since", "3x"}, "option '--since' needs a duration before now"},
      {{"curate", "--high-speedup", "abc"}, "option '--high-speedup' needs a number of at least 0, got 'abc'"},
      {{"curate", "--single-share", "1.5"}, "option '--single-share' needs a number from 0 to 1"},
      {{"curate", "--difficulty", "30,20"}, "option '--difficulty' needs two numbers A,B"},
      {{"curate", "--difficulty", "30"}, "option '--difficulty' needs two numbers A,B"},
      {{"export", "--out", "x", "--format", "csv"}, "option '--format' needs one of alpaca, sharegpt, jsonl, got 'csv'"},
      {{"curate", "--track", "cuda2hip"}, "option '--track' needs one of kernelopt, got 'cuda2hip'"},
      {{"gc", "--cap-mb", "-1"}, "option '--cap-mb' needs a whole number of at least 0"},
      {{"daemon", "--cycles=1e3"}, "option '--cycles' needs a whole number"},
      {{"eval", "--model", "m", "--limit", "0"}, "option '--limit' needs a whole number of at least 1"},
      {{"slurm", "script", "--array", "nan"}, "option '--array' needs a whole number"},
      {{"worker", "--poll", "inf", "--server", "http://127.0.0.1:9"}, "option '--poll' needs a number"},
      {{"generate", "--count", "99999999999999999999"}, "option '--count' needs a whole number"},
      {{"status", "--log-level", "loud"}, "option '--log-level' needs one of trace, debug, info, warn, error, off"},
  };
  for (const Bad& bad : cases) {
    ProcessSpec spec;
    spec.argv = {TAILFORGE_BINARY};
    spec.argv.insert(spec.argv.end(), bad.words.begin(), bad.words.end());
    spec.cwd = dir.path();
    spec.timeout_seconds = 30;
    ProcessResult run = run_process(spec);
    INFO(bad.words[0] << " " << bad.words[1] << " " << bad.words[2]);
    CHECK(run.exit_code == 2);
    CHECK(run.stderr_text.rfind("tailforge: " + bad.says, 0) == 0);
    CHECK(std::filesystem::is_empty(dir.path()));
  }
  // The same values of the right form pass the check (and the command then runs or says why not).
  ProcessResult fine = run_tailforge({"generate", "--count", "2", "--seed", "+5", "--out", dir.file("gen")});
  CHECK(fine.exit_code == 0);
}

TEST_CASE("--help of a command shows each option's form from the same declarations the parser checks") {
  ProcessResult help = run_tailforge({"kernelopt", "--help"});
  REQUIRE(help.exit_code == 0);
  CHECK(help.stdout_text.find("--samples N") != std::string::npos);
  CHECK(help.stdout_text.find("[a whole number from 1 to 1000]") != std::string::npos);
  ProcessResult curate = run_tailforge({"curate", "--help"});
  CHECK(curate.stdout_text.find("--difficulty A,B") != std::string::npos);
  CHECK(curate.stdout_text.find("[a number from 0 to 1]") != std::string::npos);
  ProcessResult taxonomy = run_tailforge({"taxonomy", "--help"});
  CHECK(taxonomy.stdout_text.find("--since TIME") != std::string::npos);
  CHECK(taxonomy.stdout_text.find("--trend NAME") != std::string::npos);
  CHECK(taxonomy.stdout_text.find("[one of hour, day]") != std::string::npos);
}

TEST_CASE("status --json prints the stable keys for a new database") {
  TempDir dir;
  REQUIRE(Database::open(dir.file("fresh.db")).ok());  // what the daemon's first start leaves
  ProcessResult status = run_tailforge({"status", "--json", "--db", dir.file("fresh.db")});
  REQUIRE(status.exit_code == 0);
  nlohmann::json body = nlohmann::json::parse(status.stdout_text);
  for (const char* key : {"samples", "samples_by_origin", "samples_by_track", "verified", "failures_by_category",
                          "jobs_by_state", "cycles", "retrain_events"}) {
    CHECK_MESSAGE(body.contains(key), key);
  }
  CHECK(body["samples"] == 0);
}

TEST_CASE("a command that reads the store exits 2 where there is none, and creates no file") {
  TempDir dir;
  const std::vector<std::vector<std::string>> readers = {
      {"status"}, {"status", "--json"}, {"taxonomy"}, {"tails"}, {"models"}, {"lineage", "abc"},
      {"export", "--out", "out"}, {"serve"}, {"gc"}, {"backup", "--out", "copy.db"}, {"eval", "--model", "m"},
      {"curate"}, {"model", "retire", "--name", "m"}, {"kernelopt", "report"}};
  for (const std::vector<std::string>& words : readers) {
    ProcessSpec spec;
    spec.argv = {TAILFORGE_BINARY};
    spec.argv.insert(spec.argv.end(), words.begin(), words.end());
    spec.cwd = dir.path();
    spec.timeout_seconds = 30;
    ProcessResult run = run_process(spec);
    INFO(words.front() << " " << (words.size() > 1 ? words[1] : ""));
    CHECK(run.exit_code == 2);
    CHECK(run.stderr_text == "tailforge: no database at tailforge.db (start the daemon or pass --db)\n");
    CHECK(std::filesystem::is_empty(dir.path()));
  }
  // --db names the missing file.
  ProcessResult named = run_tailforge({"status", "--db", dir.file("elsewhere.db")});
  CHECK(named.exit_code == 2);
  CHECK(named.stderr_text.find("no database at " + dir.file("elsewhere.db")) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("elsewhere.db")));
}

TEST_CASE("a bad configuration stops a command with the file, key path, value and expectation") {
  TempDir dir;
  std::string config = dir.file("bad.json");
  std::ofstream(config) << R"({"daemon": {"samples_per_cycle": "twelve"}})";
  ProcessResult daemon = run_tailforge({"daemon", "--cycles", "1", "--config", config, "--db", dir.file("x.db")});
  CHECK(daemon.exit_code == 1);
  CHECK(daemon.stderr_text ==
        "tailforge: " + config + ": key /daemon/samples_per_cycle has value \"twelve\", expected an integer\n");
}

TEST_CASE("verify --track takes the tracks whose files the chain checks by itself, from the track table") {
  TempDir dir;
  std::string file = dir.file("k.cu");
  std::ofstream(file) << "__global__ void k() {}\n";
  for (const char* track : {"ptx2cuda", "kernelopt", "fortran"}) {
    ProcessResult verify = run_tailforge({"verify", file, "--track", track, "--db", dir.file("v.db")});
    CAPTURE(verify.stderr_text);
    CHECK(verify.exit_code == 2);
    CHECK(verify.stderr_text.find(std::string("--track must be one of cuda2hip, sass2rdna3, c2x86, got '") + track + "'") !=
          std::string::npos);
  }
}

TEST_CASE("verify --json gives each stage's CPU seconds beside its wall seconds") {
  TempDir dir;
  std::string file = dir.file("k.cu");
  std::ofstream(file) << "__global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }\nint main() { return 0; }\n";
  ProcessResult verify = run_tailforge({"verify", file, "--json", "--db", dir.file("v.db")});
  CAPTURE(verify.stderr_text);
  nlohmann::json chain = nlohmann::json::parse(verify.stdout_text, nullptr, false);
  REQUIRE(chain.is_object());
  int compiled = 0;
  for (const nlohmann::json& stage : chain["stages"]) {
    CAPTURE(stage.dump());
    REQUIRE(stage.contains("cpu_seconds"));
    // A compiler's process uses CPU; a stage that ran none (translation, skipped) counts none.
    bool ran_compiler = stage["status"] == "ok" && !stage["cached"].get<bool>() &&
                        (stage["name"] == "nvidia.exe" || stage["name"].get<std::string>().rfind("amd.asm.", 0) == 0);
    if (ran_compiler) {
      ++compiled;
      CHECK(stage["cpu_seconds"].get<double>() > 0);
    }
    if (stage["status"] == "skipped") CHECK(stage["cpu_seconds"].get<double>() == 0);
  }
  // A fresh store has no cached stage: every compiler here ran, nvcc for nvidia.exe and clang for
  // the one AMD target.
  bool nvcc = testing::nvcc_here("nvidia.exe's CPU seconds");
  bool amd = testing::amd_tools_here("amd.asm's CPU seconds");
  CHECK(compiled == int(nvcc) + int(amd));
}

TEST_CASE("version prints the version") {
  ProcessResult version = run_tailforge({"version"});
  CHECK(version.exit_code == 0);
  CHECK(version.stdout_text.rfind("tailforge ", 0) == 0);
}

TEST_CASE("tails prints a cycle's stored tail list and its top tail's share cycle by cycle") {
  TempDir dir;
  std::string db_path = dir.file("tails.db");
  {
    Database db = std::move(Database::open(db_path).value());
    int64_t first = start_cycle(db, 1, 0).value();
    int64_t second = start_cycle(db, 2, 0).value();
    auto add = [&db](int64_t cycle, const std::string& text, std::vector<std::string> features) {
      Sample sample{"", "cuda2hip", "template", "cuda", text};
      sample.features = std::move(features);
      sample.status = "verified";
      sample.cycle_id = cycle;
      REQUIRE(insert_sample_if_absent(db, sample).ok());
    };
    add(first, "a", {"atomics"});
    add(first, "b", {"atomics"});
    add(second, "c", {"switch"});
    add(second, "d", {"switch", "atomics"});
    REQUIRE(replace_tail_report(db, second, {{1, "feature", "switch", "corpus_share", 0.9, R"({"share":0.0})"},
                                             {2, "domain", "scan", "pipeline_yield", 0.5, "{}"}})
                .ok());
  }
  ProcessResult table = run_tailforge({"tails", "--db", db_path});
  REQUIRE_MESSAGE(table.exit_code == 0, table.stderr_text);
  CHECK(table.stdout_text.find("tails of cycle 2 (2)") != std::string::npos);
  CHECK(table.stdout_text.find("share of feature/switch in the verified cuda2hip corpus") != std::string::npos);

  ProcessResult json = run_tailforge({"tails", "--db", db_path, "--json", "--series", "feature/atomics"});
  REQUIRE_MESSAGE(json.exit_code == 0, json.stderr_text);
  nlohmann::json body = nlohmann::json::parse(json.stdout_text);
  CHECK(body["cycle_id"] == 2);
  CHECK(body["entries"][0]["name"] == "switch");
  CHECK(body["series"]["name"] == "atomics");
  REQUIRE(body["series"]["points"].size() == 2);
  CHECK(body["series"]["points"][0]["share"] == 1.0);   // 2 of 2 after cycle 1
  CHECK(body["series"]["points"][1]["share"] == 0.75);  // 3 of 4 after cycle 2

  CHECK(run_tailforge({"tails", "--db", db_path, "--cycle", "1"}).exit_code == 1);  // no list stored
  CHECK(run_tailforge({"tails", "--db", db_path, "--series", "persona/x"}).exit_code == 2);
  CHECK(run_tailforge({"tails", "--db", db_path, "--cycle", "zero"}).exit_code == 2);
}

namespace tailforge {

TEST_CASE("backup copies the database to --out, checked, and the copy is a store the commands read") {
  TempDir dir;
  std::string db_path = dir.file("live.db"), out = dir.file("copy.db");
  {
    Database db = Database::open(db_path).value();
    Sample sample{.track = "c2x86", .origin = "template", .language = "c", .text = "int one(void) { return 1; }"};
    REQUIRE(insert_sample_if_absent(db, sample).ok());
  }
  ProcessResult missing = run_tailforge({"backup", "--db", db_path});
  CHECK(missing.exit_code == 2);
  CHECK(missing.stderr_text.find("--out") != std::string::npos);
  ProcessResult backed_up = run_tailforge({"backup", "--db", db_path, "--out", out});
  REQUIRE_MESSAGE(backed_up.exit_code == 0, backed_up.stderr_text);
  CHECK(backed_up.stdout_text.find("backed up " + db_path + " to " + out) != std::string::npos);
  CHECK(backed_up.stdout_text.find("1 samples, schema v" + std::to_string(current_schema_version()) + ", integrity ok") !=
        std::string::npos);
  ProcessResult status = run_tailforge({"status", "--db", out, "--json"});
  REQUIRE(status.exit_code == 0);
  CHECK(nlohmann::json::parse(status.stdout_text)["samples"] == 1);
}

}  // namespace tailforge

namespace tailforge {

TEST_CASE("doctor says which architectures programs are built for and which GPU it found") {
  if (!testing::nvcc_here("the cuda2hip track builds nothing")) return;
  TempDir dir;
  std::string db_path = dir.file("doctor.db");
  REQUIRE(Database::open(db_path).ok());
  std::string sm75 = dir.file("sm75.json");
  std::ofstream(sm75) << R"({"verifier": {"sm_targets": ["sm_75", "sm_90"]}})";
  ProcessResult ran = run_tailforge({"doctor", "--db", db_path, "--config", sm75, "--json"});
  CAPTURE(ran.stdout_text);
  nlohmann::json report = nlohmann::json::parse(ran.stdout_text);
  std::string level, detail;
  for (const nlohmann::json& check : report["checks"]) {
    if (check["name"] == "gpu targets") level = check["level"], detail = check["detail"];
  }
  CHECK(level == "ok");
  CHECK(detail.find("programs are built for sm_75, sm_90") != std::string::npos);
  CHECK(detail.find("+ PTX compute_75") != std::string::npos);
  if (detected_toolchains().has_gpu("nvidia")) {
    CHECK(detail.find("GPU found: sm_") != std::string::npos);
  } else {
    CHECK(detail.find("GPU found: none") != std::string::npos);
  }
}

TEST_CASE("doctor says what the configured track needs, what is wrong and how to fix it; exit 1 when it cannot run") {
  TempDir dir;
  std::string db_path = dir.file("doctor.db");
  REQUIRE(Database::open(db_path).ok());
  std::string c2x86 = dir.file("c2x86.json");
  std::ofstream(c2x86) << R"({"synth": {"policy_file": "policies/synth_policy_c2x86.json"}})";
  ProcessResult healthy = run_tailforge({"doctor", "--db", db_path, "--config", c2x86, "--json"});
  nlohmann::json report = nlohmann::json::parse(healthy.stdout_text);
  CAPTURE(healthy.stdout_text);
  CHECK(report["track"] == "c2x86");
  std::map<std::string, std::string> level;
  for (const nlohmann::json& check : report["checks"]) level[check["name"]] = check["level"];
  CHECK(level["config"] == "ok");
  CHECK(level["database"] == "ok");
  CHECK(level["disk"] == "ok");
  CHECK(level.count("gcc") == 1);
  CHECK(level.count("sandbox") == 1);
  // What the machine has, asked apart from doctor: gcc and a working sandbox make the track runnable.
  bool runnable = testing::tools_here({"gcc"}, "doctor's ready verdict") && testing::sandbox_here();
  CHECK(level["gcc"] == (detected_toolchains().tool("gcc").found() ? "ok" : "fail"));
  if (runnable) CHECK(level["sandbox"] == "ok");
  CHECK(report["ready"] == runnable);
  CHECK(healthy.exit_code == (runnable ? 0 : 1));

  // Where a GPU exists, doctor says whether its programs' host memory is capped, and why not.
  if (level["gpu"] != "ok") {
    testing::skip(testing::Missing::gpu, "the memory-cap line (no NVIDIA GPU reachable in the sandbox here)");
  } else {
    CHECK((level["memory cap"] == "ok" || level["memory cap"] == "warn"));
    for (const nlohmann::json& check : report["checks"]) {
      if (check["name"] != "memory cap") continue;
      std::string detail = check["detail"];
      CAPTURE(detail);
      if (check["level"] == "ok") CHECK(detail.find("capped at 8192 MB") != std::string::npos);
      else CHECK(detail.find("not capped: ") != std::string::npos);
    }
    std::string uncapped = dir.file("uncapped.json");
    std::ofstream(uncapped) << R"({"sandbox": {"gpu_memory_cap_bytes": 0}})";
    ProcessResult without_cap = run_tailforge({"doctor", "--db", db_path, "--config", uncapped});
    CAPTURE(without_cap.stdout_text);
    CHECK(without_cap.stdout_text.find("sandbox.gpu_memory_cap_bytes is 0: GPU programs may use all host memory") !=
          std::string::npos);
  }

  std::string broken = dir.file("broken.json");
  std::ofstream(broken) << R"({"synth": {"policy_file": "policies/synth_policy_c2x86.json"},
                               "sandbox": {"bwrap": "/nonexistent/bwrap"}, "daemon": {"min_free_disk_mb": 999999999}})";
  ProcessResult sick = run_tailforge({"doctor", "--db", db_path, "--config", broken});
  CAPTURE(sick.stdout_text);
  CHECK(sick.exit_code == 1);
  CHECK(sick.stdout_text.find("FAIL  sandbox: ") != std::string::npos);
  CHECK(sick.stdout_text.find("FAIL  disk: ") != std::string::npos);
  CHECK(sick.stdout_text.find("      fix: free space there, or lower daemon.min_free_disk_mb") != std::string::npos);
  CHECK(sick.stdout_text.find("the daemon cannot run the c2x86 track here: fix the FAIL lines") != std::string::npos);

  std::string invalid = dir.file("invalid.json");
  std::ofstream(invalid) << R"({"daemon": {"samples_per_cycle": "many"}})";
  ProcessResult unreadable = run_tailforge({"doctor", "--db", db_path, "--config", invalid});
  CHECK(unreadable.exit_code == 1);
  CHECK(unreadable.stdout_text.find("FAIL  config: ") != std::string::npos);
  CHECK(unreadable.stdout_text.find("samples_per_cycle") != std::string::npos);
}

}  // namespace tailforge

namespace {

// A store with a verified sample's 0.5 MB output and two failed samples' 1 MB outputs (older,
// newer): their artifact ids in that order.
std::vector<std::string> store_with_outputs(const std::string& db_path) {
  Database db = Database::open(db_path).value();
  std::vector<std::string> ids;
  auto add = [&](const std::string& text, const std::string& status, char fill, int64_t bytes, int64_t created) {
    Sample sample{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = text};
    std::string id = insert_sample_if_absent(db, sample).value().id;
    REQUIRE(set_sample_status(db, id, status).ok());
    ArtifactRecord record{.stage = "nvidia.run", .name = "stdout", .kind = "stdout",
                          .content = std::string(static_cast<size_t>(bytes), fill)};
    std::string artifact = insert_artifact(db, id, record).value();
    REQUIRE(db.exec("UPDATE artifact SET created_ms = " + std::to_string(created) + " WHERE id = '" + artifact + "'").ok());
    ids.push_back(artifact);
  };
  add("__global__ void v() {}", "verified", 'a', 512 * 1024, 1);
  add("__global__ void f1() {}", "failed", 'b', 1024 * 1024, 2);
  add("__global__ void f2() {}", "failed", 'c', 1024 * 1024, 3);
  return ids;
}

}  // namespace

TEST_CASE("gc reports what retention would free under the cap and frees it with --collect") {
  TempDir dir;
  std::string db_path = dir.file("gc.db");
  std::vector<std::string> ids = store_with_outputs(db_path);
  const std::string kept = ids[0], old_failure = ids[1], new_failure = ids[2];
  std::string config = dir.file("cap.json");
  std::ofstream(config) << R"({"store": {"artifact_cap_mb": 2}})";
  // 2.5 MB against a 2 MB cap: down to 1.8 MB, the older failure's output goes.
  ProcessResult planned = run_tailforge({"gc", "--db", db_path, "--config", config});
  REQUIRE_MESSAGE(planned.exit_code == 0, planned.stderr_text);
  CAPTURE(planned.stdout_text);
  CHECK(planned.stdout_text.find("artifacts: 3 (2.5 MB); cap 2 MB") != std::string::npos);
  CHECK(planned.stdout_text.find("would free: 1 artifacts, 1.0 MB -> 1.5 MB") != std::string::npos);
  ProcessResult as_json = run_tailforge({"gc", "--db", db_path, "--cap-mb", "2", "--json"});
  nlohmann::json plan = nlohmann::json::parse(as_json.stdout_text);
  CHECK(plan["failed_only"]["count"] == 2);
  CHECK(plan["kept"]["bytes"] == 512 * 1024);
  CHECK(plan["would_free"]["bytes"] == 1024 * 1024);
  {
    Database db = Database::open(db_path).value();
    CHECK(query_int(db, "SELECT count(*) FROM artifact") == 3);  // reporting frees nothing
  }
  ProcessResult collected = run_tailforge({"gc", "--db", db_path, "--cap-mb", "2", "--collect"});
  REQUIRE_MESSAGE(collected.exit_code == 0, collected.stderr_text);
  CHECK(collected.stdout_text.find("freed: 1 artifacts, 1.0 MB -> 1.5 MB") != std::string::npos);
  Database db = Database::open(db_path).value();
  CHECK(query_int(db, "SELECT count(*) FROM artifact WHERE id = '" + old_failure + "'") == 0);
  CHECK(query_int(db, "SELECT count(*) FROM artifact WHERE id IN ('" + kept + "', '" + new_failure + "')") == 2);
  CHECK(query_int(db, "SELECT count(*) FROM sample") == 3);
  CHECK(run_tailforge({"gc", "--db", db_path, "--cap-mb", "lots"}).exit_code == 2);
}

TEST_CASE("the daemon holds artifacts under store.artifact_cap_mb" * doctest::test_suite("long")) {
  TempDir dir;
  std::string db_path = dir.file("capped.db");
  std::vector<std::string> ids = store_with_outputs(db_path);
  std::string config = dir.file("cap.json");
  std::ofstream(config) << R"({"store": {"artifact_cap_mb": 2}, "daemon": {"samples_per_cycle": 1},
      "synth": {"enabled": false}, "eval": {"enabled": false}, "retrain": {"enabled": false}})";
  ProcessResult ran = run_tailforge({"daemon", "--db", db_path, "--config", config, "--cycles", "1", "--no-progress"}, 300);
  REQUIRE_MESSAGE(ran.exit_code == 0, ran.stderr_text);
  CHECK(ran.stderr_text.find("artifacts over 2 MB: freed 1") != std::string::npos);
  Database db = Database::open(db_path).value();
  CHECK(query_int(db, "SELECT count(*) FROM artifact WHERE id = '" + ids[1] + "'") == 0);
  CHECK(query_int(db, "SELECT count(*) FROM artifact WHERE id = '" + ids[0] + "'") == 1);
  CHECK(query_int(db, "SELECT coalesce(sum(size), 0) FROM artifact") <= 2 * 1048576);
}

TEST_CASE("daemon.cycles_in_flight: the next cycle starts while the current one runs, and each counts its own samples" *
          doctest::test_suite("long")) {
  TempDir dir;
  std::string db_path = dir.file("overlap.db");
  std::string config = dir.file("overlap.json");
  std::ofstream(config) << R"({"daemon": {"samples_per_cycle": 1, "cycles_in_flight": 2, "compile_slots": 2},
      "synth": {"enabled": false}, "eval": {"enabled": false}, "retrain": {"enabled": false}})";
  ProcessResult ran = run_tailforge({"daemon", "--db", db_path, "--config", config, "--cycles", "2", "--no-progress"}, 300);
  REQUIRE_MESSAGE(ran.exit_code == 0, ran.stderr_text);
  CHECK_MESSAGE(ran.stderr_text.find("cycle 2 started early (cycle 1 is current)") != std::string::npos, ran.stderr_text);
  // daemon.fill_samples unset: 24 per worker (2 compile slots, and GPU slots where there is a GPU).
  std::string start_line = "daemon started on " + db_path + ": ";
  size_t started = ran.stderr_text.find(start_line);
  REQUIRE_MESSAGE(started != std::string::npos, ran.stderr_text);
  int workers = std::atoi(ran.stderr_text.c_str() + started + start_line.size());
  CHECK(workers >= 2);
  std::string fill = "an early cycle fills idle workers with up to " + std::to_string(24 * workers) + " more samples";
  CHECK_MESSAGE(ran.stderr_text.find(fill) != std::string::npos, ran.stderr_text);
  Database db = Database::open(db_path).value();
  CHECK(query_int(db, "SELECT max(planned) FROM cycle") <= 1 + 24 * workers);
  CHECK(query_int(db, "SELECT count(*) FROM cycle WHERE state = 'done' AND generated >= 1") == 2);
  // Each cycle's counts are its own samples' verdicts.
  CHECK(query_int(db, "SELECT count(*) FROM cycle c WHERE c.verified + c.failed ="
                      " (SELECT count(*) FROM sample s WHERE s.cycle_id = c.id)") == 2);
  CHECK(query_int(db, "SELECT count(*) FROM sample WHERE status = 'pending'") == 0);
  CHECK(query_int(db, "SELECT count(*) FROM deferred_sample_status") == 0);
}
