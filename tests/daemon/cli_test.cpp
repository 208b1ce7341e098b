#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support/temp_dir.h"
#include "verifier/process.h"

using namespace tailforge;

namespace {

ProcessResult run_tailforge(std::vector<std::string> arguments) {
  ProcessSpec spec;
  spec.argv = {TAILFORGE_BINARY};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.timeout_seconds = 60;
  return run_process(spec);
}

}  // namespace

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
