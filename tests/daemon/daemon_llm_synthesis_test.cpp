// The daemon with agents.synthesizer = "llm" against the fake OpenAI server: one cycle's
// synthesis asks the LLM once per seed, stores its programs as synthesized samples whose lineage
// names the LLM synthesizer, verifies them in the same cycle, and records every request; an
// endpoint outage makes the synthesize job retry and fail without stopping the daemon.
#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "agents/generator/generator.h"
#include "base/files.h"
#include "base/process.h"
#include "store/database.h"
#include "test_support/fake_openai_server.h"
#include "test_support/query.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

std::string write_config(const TempDir& dir, const FakeOpenAiServer& server) {
  json config = {{"log_level", "info"},
                 {"store", {{"job_max_attempts", 3}, {"job_backoff_base_ms", 50}, {"job_backoff_max_ms", 200}}},
                 {"daemon", {{"samples_per_cycle", 3}, {"progress", false}, {"llm_slots", 1}}},
                 {"agents", {{"generator", "builtin"}, {"translator", "builtin"}, {"synthesizer", "llm"}}},
                 {"eval", {{"enabled", false}}},
                 {"synth", {{"enabled", true}, {"top_k", 1}, {"multiplier", 2}}},
                 {"retrain", {{"enabled", false}}},
                 {"verifier", {{"stages", {"translate"}}}},
                 {"llm",
                  {{"base_url", server.base_url()},
                   {"model", "fake-coder"},
                   {"api_key_env", ""},
                   {"timeout_ms", 5000},
                   {"max_attempts", 2},
                   {"backoff_base_ms", 10},
                   {"backoff_max_ms", 20},
                   {"breaker_failures", 0}}}};
  std::string path = dir.file("config.json");
  std::ofstream(path) << config.dump(2);
  return path;
}

ProcessResult run_daemon_cycle(const std::string& db, const std::string& config) {
  ProcessSpec spec;
  spec.argv = {TAILFORGE_BINARY, "daemon", "--cycles", "1", "--db", db, "--config", config, "--no-progress"};
  spec.timeout_seconds = 120;
  return run_process(spec);
}

}  // namespace

TEST_CASE("with the LLM synthesizer a cycle stores and verifies the LLM's programs for its tail") {
  TempDir dir;
  FakeOpenAiServer server;
  Result<GeneratorCatalog> catalog = load_default_generator_catalog(data_dir());
  REQUIRE(catalog.ok());
  std::atomic<int> programs{0};
  server.set_responder([&](const ReceivedRequest&) {
    std::string reply = "These programs keep the construct and change the setting.\n";
    for (int i = 0; i < 2; ++i) {
      Result<GeneratedProgram> program = generate_program(*catalog, batch_request(9001, programs++));
      reply += "```cuda\n" + (program ? program->source : std::string("not a program")) + "```\n";
    }
    return CannedResponse{200, {}, FakeOpenAiServer::completion(reply, "stop", "", 300, 700)};
  });
  std::string db_path = dir.file("synth.db");

  ProcessResult run = run_daemon_cycle(db_path, write_config(dir, server));
  INFO(run.stderr_text);
  REQUIRE(run.exit_code == 0);
  CHECK(run.stderr_text.find("agents: built-in generator, built-in translator; LLM fake-coder") != std::string::npos);
  CHECK(run.stderr_text.find("LLM synthesizer") != std::string::npos);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  int64_t requests = static_cast<int64_t>(server.requests().size());
  CHECK(requests >= 1);
  CHECK(query_int(*db, "SELECT count(*) FROM llm_call WHERE role = 'synthesizer' AND status = 'ok' AND cached = 0") ==
        requests);
  CHECK(query_int(*db, "SELECT count(*) FROM llm_call WHERE role <> 'synthesizer'") == 0);
  int64_t synthesized = query_int(*db, "SELECT count(*) FROM sample WHERE origin = 'synthesized'");
  CHECK(synthesized >= 1);
  CHECK(synthesized <= 2 * requests);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM sample s JOIN lineage l ON l.child_id = s.id"
                  " JOIN llm_call c ON c.prompt_hash = s.prompt_hash AND c.role = 'synthesizer'"
                  " WHERE s.origin = 'synthesized' AND s.model = 'fake-coder' AND s.status IN ('verified', 'failed')"
                  " AND l.relation = 'synthesized_from' AND l.agent = 'llm-synthesizer:fake-coder'"
                  " AND l.model = 'fake-coder' AND json_extract(l.reason, '$.dimension') IS NOT NULL") == synthesized);
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE kind = 'synthesize' AND state = 'done'") == 1);
  CHECK(query_int(*db, "SELECT count(*) FROM cycle WHERE state = 'done' AND synthesized = " +
                           std::to_string(synthesized)) == 1);
}

TEST_CASE("an LLM synthesizer outage fails the synthesize job with retries, and the cycle still closes") {
  TempDir dir;
  FakeOpenAiServer server;
  server.set_responder([](const ReceivedRequest&) { return CannedResponse{503, {}, R"({"error":"overloaded"})"}; });
  std::string db_path = dir.file("down.db");

  ProcessResult run = run_daemon_cycle(db_path, write_config(dir, server));
  INFO(run.stderr_text);
  REQUIRE(run.exit_code == 0);
  CHECK(run.stderr_text.find("LLM synthesizer: agent.llm.server_error") != std::string::npos);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  CHECK(query_int(*db,
                  "SELECT count(*) FROM job WHERE kind = 'synthesize' AND state = 'dead' AND attempts = 3"
                  " AND last_error LIKE '%LLM synthesizer: agent.llm.server_error%'") == 1);
  CHECK(query_int(*db, "SELECT count(*) FROM sample WHERE origin = 'synthesized'") == 0);
  // 3 job attempts, each stopped by its first seed's 2 HTTP attempts.
  CHECK(server.requests().size() == 6);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM llm_call WHERE role = 'synthesizer' AND status = 'agent.llm.server_error'") ==
        6);
  CHECK(query_int(*db, "SELECT count(*) FROM cycle WHERE state = 'done'") == 1);
}
