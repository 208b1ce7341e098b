#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "store/corpus.h"
#include "store/cycles.h"
#include "store/samples.h"
#include "test_support/temp_dir.h"
#include "test_support/run_tailforge.h"
#include "verifier/process.h"

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

TEST_CASE("status --json prints the stable keys for a new database") {
  TempDir dir;
  ProcessResult status = run_tailforge({"status", "--json", "--db", dir.file("fresh.db")});
  REQUIRE(status.exit_code == 0);
  nlohmann::json body = nlohmann::json::parse(status.stdout_text);
  for (const char* key : {"samples", "samples_by_origin", "samples_by_track", "verified", "failures_by_category",
                          "jobs_by_state", "cycles", "retrain_events"}) {
    CHECK_MESSAGE(body.contains(key), key);
  }
  CHECK(body["samples"] == 0);
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
