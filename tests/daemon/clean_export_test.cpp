// Training-ready text on a fresh store made the daemon's way: no exported row of any track the
// store holds, in any format, and no evaluation prompt a model under test is sent, names tailforge,
// a seed, or a template id (those are the lineage, kept in the manifest).
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "test_support/read_whole_file.h"
#include "test_support/fake_openai_server.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {


std::set<std::string> strings_of(Database& db, const std::string& sql) {
  Result<Statement> select = db.prepare(sql);
  REQUIRE(select.ok());
  std::set<std::string> out;
  while (select->step()) out.insert(select->text(0));
  return out;
}

// What no text a model sees may hold: tailforge, a seed, a template id of the store.
void check_clean(const std::string& text, const std::set<std::string>& template_ids) {
  CHECK(text.find("tailforge") == std::string::npos);
  CHECK(text.find("seed") == std::string::npos);
  for (const std::string& id : template_ids) CHECK_MESSAGE(text.find(id) == std::string::npos, id);
}

}  // namespace

TEST_CASE("a fresh store's exports and evaluation prompts hold no provenance, in every track and format" *
          doctest::test_suite("long")) {
  TempDir dir;
  FakeOpenAiServer server;
  server.set_responder([](const ReceivedRequest&) {
    return CannedResponse{200, {}, FakeOpenAiServer::completion("```hip\n// an answer\n```\n")};
  });
  std::string db_path = dir.file("fresh.db");
  std::string config = dir.file("fresh.json");
  std::ofstream(config) << json{{"log_level", "warn"},
                                {"daemon", {{"samples_per_cycle", 6}, {"progress", false}, {"compile_slots", 2}}},
                                {"eval", {{"fraction", 0.5}}},
                                {"synth", {{"enabled", false}}},
                                {"retrain", {{"enabled", false}}},
                                {"llm", {{"api_key_env", ""}, {"max_attempts", 1}}}}
                               .dump();
  ProcessResult added = run_tailforge({"model", "add", "--name", "remote", "--endpoint", server.base_url() + "/v1",
                                       "--model-id", "fake-coder", "--db", db_path, "--config", config});
  REQUIRE_MESSAGE(added.exit_code == 0, added.stdout_text << added.stderr_text);
  size_t check_requests = server.requests().size();
  ProcessResult daemon = run_tailforge({"daemon", "--cycles", "1", "--db", db_path, "--config", config, "--no-progress"}, 300);
  INFO(daemon.stderr_text);
  REQUIRE(daemon.exit_code == 0);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  std::set<std::string> template_ids = strings_of(*db, "SELECT DISTINCT template_id FROM sample WHERE template_id IS NOT NULL");
  REQUIRE_FALSE(template_ids.empty());
  std::set<std::string> tracks = strings_of(*db, "SELECT DISTINCT track FROM sample WHERE status = 'verified'");
  REQUIRE(tracks.count("cuda2hip"));

  // The evaluation prompts: every request the daemon sent to the model under test.
  std::vector<ReceivedRequest> requests = server.requests();
  REQUIRE(requests.size() > check_requests);
  for (size_t i = check_requests; i < requests.size(); ++i) {
    json body = json::parse(requests[i].body);
    for (const json& message : body["messages"]) check_clean(message["content"].get<std::string>(), template_ids);
  }

  for (const std::string& track : tracks) {
    for (const char* format : {"alpaca", "sharegpt", "jsonl"}) {
      CAPTURE(track);
      CAPTURE(format);
      std::string out = dir.file(track + "-" + format);
      ProcessResult exported = run_tailforge({"export", "--track", track, "--format", format, "--out", out, "--db", db_path,
                                              "--config", config});
      REQUIRE_MESSAGE(exported.exit_code == 0, exported.stderr_text);
      std::string extension = std::string(format) == "jsonl" ? ".jsonl" : ".json";
      std::string rows = read_whole_file(out + "/train" + extension) + read_whole_file(out + "/eval" + extension);
      CHECK(rows.size() > 10);
      check_clean(rows, template_ids);
      // The lineage is in the manifest, keyed by each row's sample.
      json manifest = json::parse(read_whole_file(out + "/manifest.json"));
      for (const json& listed : manifest["samples"]) {
        if (listed.contains("template")) CHECK(template_ids.count(listed["template"].get<std::string>()) == 1);
      }
    }
  }
}
