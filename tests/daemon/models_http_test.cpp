// The models endpoints of the HTTP API: GET /v1/models answers what `tailforge models --json`
// prints, and POST /v1/models registers a model version like `tailforge model add`, behind the
// bearer token, with a 400 naming the field of a bad definition.
#include <doctest/doctest.h>
#include <httplib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "base/process.h"
#include "daemon/http/http_api.h"
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

// The real HTTP API on a free loopback port over a database in a temporary folder.
struct Api {
  TempDir dir;
  std::string db_path = dir.file("api.db");
  DaemonControl control;
  std::unique_ptr<HttpApi> api;
  int port = 0;

  explicit Api(const std::string& token) {
    Result<json> config = load_config("");
    REQUIRE(config.ok());
    (*config)["http"]["token_env"] = "";
    if (!token.empty()) {
      std::string token_file = dir.file("token");
      std::ofstream(token_file) << token << "\n";
      (*config)["http"]["token_file"] = token_file;
    }
    REQUIRE(Database::open(db_path).ok());
    Result<std::unique_ptr<HttpApi>> started = HttpApi::start("127.0.0.1:0", *config, db_path, control, [] {});
    REQUIRE(started.ok());
    api = std::move(*started);
    port = std::stoi(api->address().substr(api->address().rfind(':') + 1));
  }
};

// Two models, one evaluation item and one (passed) evaluation, stored through the store's API.
void seed_models(const std::string& db_path) {
  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  Sample sample{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = "// an item\n",
                .status = "verified"};
  Result<InsertOutcome> inserted = insert_sample_if_absent(*db, sample);
  REQUIRE(inserted.ok());
  REQUIRE(add_eval_items(*db, {EvalItem{"cuda2hip", inserted->id, 1, std::nullopt, std::nullopt, 0}}).ok());
  Result<ModelRecord> parent = register_model(*db, {{"name", "rules"}, {"kind", "builtin"}});
  REQUIRE(parent.ok());
  Result<ModelRecord> child =
      register_model(*db, {{"name", "dict-v2"}, {"kind", "command"}, {"command", {"/bin/cat"}}, {"parent", "rules"}});
  REQUIRE(child.ok());
  EvaluationRecord evaluation{.model_id = parent->id, .sample_id = inserted->id, .track = "cuda2hip", .ok = true,
                              .status = "ok", .checked = "compile"};
  REQUIRE(insert_evaluation(*db, evaluation).ok());
}

// `models --json` for one track, or for every track that has models when `track` is empty.
json cli_models(const std::string& db_path, const std::string& track) {
  std::vector<std::string> argv = {"models", "--json", "--db", db_path};
  if (!track.empty()) argv.insert(argv.end(), {"--track", track});
  ProcessResult models = run_tailforge(argv);
  INFO(models.stderr_text);
  REQUIRE(models.exit_code == 0);
  return json::parse(models.stdout_text);
}

}  // namespace

// Guards that the API and the CLI report models from one source: same JSON, track filter included.
TEST_CASE("GET /v1/models answers the same JSON as models --json") {
  Api server("s3cret");
  seed_models(server.db_path);
  httplib::Client client("127.0.0.1", server.port);

  auto plain = client.Get("/v1/models");
  REQUIRE(plain);
  CHECK(plain->status == 200);
  json listing = json::parse(plain->body);
  CHECK(listing == cli_models(server.db_path, ""));
  REQUIRE(listing["tracks"].size() == 1);  // only cuda2hip has models
  json printed = cli_models(server.db_path, "cuda2hip");
  json body = listing["tracks"][0];
  CHECK(body == printed);
  REQUIRE(body["models"].size() == 2);
  CHECK(body["models"][0]["evaluation"]["accuracy"] == 1.0);
  CHECK(body["models"][1]["parent"] == "rules");
  CHECK(body["model_under_test"]["name"] == "dict-v2");  // the user's command model, not the built-in

  auto tracked = client.Get("/v1/models?track=cuda2hip");
  REQUIRE(tracked);
  CHECK(tracked->status == 200);
  CHECK(json::parse(tracked->body) == printed);

  auto other = client.Get("/v1/models?track=c2x86");
  REQUIRE(other);
  CHECK(other->status == 200);
  CHECK(json::parse(other->body) == cli_models(server.db_path, "c2x86"));
  CHECK(json::parse(other->body)["models"].empty());
}

// Guards that /v1/taxonomy answers the per-model taxonomy and comparison that the CLI prints.
TEST_CASE("GET /v1/taxonomy?model=A&compare_model=B answers what taxonomy --model A --compare-model B prints") {
  Api server("");
  seed_models(server.db_path);
  {
    Result<Database> db = Database::open(server.db_path);
    REQUIRE(db.ok());
    Result<std::optional<ModelRecord>> child = find_model(*db, "dict-v2");
    REQUIRE(child.ok());
    REQUIRE(child->has_value());
    std::string item = query_text(*db, "SELECT id FROM sample");
    item.pop_back();  // the newline
    EvaluationRecord failed{.model_id = (*child)->id, .sample_id = item,
                            .track = "cuda2hip", .ok = false, .status = "fail", .stage = "amd.asm.gfx1100",
                            .category = "amd.compile.undeclared_identifier", .message = "use of undeclared identifier",
                            .checked = "compile"};
    REQUIRE(insert_evaluation(*db, failed).ok());
  }
  ProcessResult printed = run_tailforge(
      {"taxonomy", "--json", "--model", "dict-v2", "--compare-model", "rules", "--db", server.db_path});
  INFO(printed.stderr_text);
  REQUIRE(printed.exit_code == 0);
  json from_cli = json::parse(printed.stdout_text);

  httplib::Client client("127.0.0.1", server.port);
  auto answer = client.Get("/v1/taxonomy?model=dict-v2&compare_model=rules");
  REQUIRE(answer);
  REQUIRE(answer->status == 200);
  json from_http = json::parse(answer->body);
  CHECK(from_http.at("total") == from_cli.at("total"));
  CHECK(from_http.at("total") == 1);
  CHECK(from_http.at("categories") == from_cli.at("categories"));
  CHECK(from_http.at("categories").dump().find("amd.compile.undeclared_identifier") != std::string::npos);
  CHECK(from_http.at("model_comparison") == from_cli.at("model_comparison"));
  CHECK(from_http.at("model_comparison").at("common_items") == 1);

  auto unknown = client.Get("/v1/taxonomy?model=ghost");
  REQUIRE(unknown);
  CHECK(unknown->status == 400);
  CHECK(unknown->body.find("no model named 'ghost'") != std::string::npos);
}

// Guards POST /v1/models: 201 and a stored model with the token, 401 without or with a wrong one,
// 400 naming the field for each bad definition, and nothing stored for any refused request.
TEST_CASE("POST /v1/models registers a model with the token, and answers 401 and 400 naming the field") {
  Api server("s3cret");
  httplib::Client client("127.0.0.1", server.port);
  httplib::Headers token = {{"Authorization", "Bearer s3cret"}};
  std::string openai = json{{"name", "api-a"}, {"kind", "openai"}, {"endpoint", "http://127.0.0.1:9"},
                            {"model_id", "qwen"}, {"timeout_seconds", 30}}
                           .dump();

  auto anonymous = client.Post("/v1/models", openai, "application/json");
  REQUIRE(anonymous);
  CHECK(anonymous->status == 401);
  httplib::Headers wrong = {{"Authorization", "Bearer nope"}};
  auto wrong_token = client.Post("/v1/models", wrong, openai, "application/json");
  REQUIRE(wrong_token);
  CHECK(wrong_token->status == 401);
  CHECK(cli_models(server.db_path, "cuda2hip")["models"].empty());

  auto created = client.Post("/v1/models", token, openai, "application/json");
  REQUIRE(created);
  CHECK(created->status == 201);
  json answer = json::parse(created->body);
  CHECK(answer["name"] == "api-a");
  CHECK(answer["kind"] == "openai");
  CHECK(answer["track"] == "cuda2hip");
  CHECK(answer["active"] == true);
  CHECK(answer["parent_id"].is_null());

  std::string command = json{{"name", "api-b"}, {"kind", "command"}, {"command", {"/bin/cat", "--dictionary"}},
                             {"parent", "api-a"}, {"track", "cuda2hip"}}
                            .dump();
  auto child = client.Post("/v1/models", token, command, "application/json");
  REQUIRE(child);
  CHECK(child->status == 201);
  CHECK(json::parse(child->body)["parent_id"] == answer["id"]);

  struct Bad {
    std::string body;
    std::string named;
  };
  const Bad bad[] = {
      {R"({"name": "x", "kind": "openai"})", "endpoint"},
      {R"({"name": "x", "kind": "magic"})", "kind 'magic'"},
      {R"({"name": "x", "kind": "command", "command": "/bin/cat"})", "'command'"},
      {R"({"name": "x", "kind": "command", "command": []})", "command"},
      {R"({"name": "x", "kind": "builtin", "colour": "red"})", "'colour'"},
      {R"({"name": "x", "kind": "builtin", "parent": "ghost"})", "parent 'ghost'"},
      {R"({"name": "x", "kind": "builtin", "retrain_event": "seven"})", "'retrain_event'"},
      {R"({"name": "x", "kind": "builtin", "retrain_event": 7})", "retrain event 7"},
      {R"({"name": "x", "kind": "builtin", "timeout_seconds": -1})", "timeout_seconds"},
      {R"({"name": "x", "kind": "builtin", "track": "nonesuch"})", "track 'nonesuch'"},
      {R"({"name": 5, "kind": "builtin"})", "'name'"},
      {R"({"kind": "builtin"})", "name"},
      {R"({"name": "api-a", "kind": "builtin"})", "api-a"},
      {R"([{"name": "x"}])", "JSON object"},
      {R"({"name": "x", "kind": )", "JSON object"},
  };
  for (const Bad& request : bad) {
    CAPTURE(request.body);
    auto refused = client.Post("/v1/models", token, request.body, "application/json");
    REQUIRE(refused);
    CHECK(refused->status == 400);
    json error = json::parse(refused->body, nullptr, false);
    REQUIRE(error.is_object());
    CHECK(error["status"] == 400);
    CHECK(error["error"].get<std::string>().find(request.named) != std::string::npos);
  }

  json models = cli_models(server.db_path, "cuda2hip");
  REQUIRE(models["models"].size() == 2);
  CHECK(models["models"][0]["name"] == "api-a");
  CHECK(models["models"][1]["name"] == "api-b");
  CHECK(models["models"][1]["parent"] == "api-a");
  Result<Database> db = Database::open(server.db_path);
  REQUIRE(db.ok());
  CHECK(query_int(*db, "SELECT json_extract(parameters, '$.timeout_seconds') = 30 AND"
                       " json_extract(parameters, '$.model_id') = 'qwen' FROM model WHERE name = 'api-a'") == 1);
}

// Guards that registering is off, not open, when the daemon has no token.
TEST_CASE("POST /v1/models answers 403 when no API token is configured") {
  Api server("");
  httplib::Client client("127.0.0.1", server.port);
  std::string builtin = json{{"name", "rules"}, {"kind", "builtin"}}.dump();
  auto refused = client.Post("/v1/models", builtin, "application/json");
  REQUIRE(refused);
  CHECK(refused->status == 403);
  httplib::Headers token = {{"Authorization", "Bearer anything"}};
  auto with_header = client.Post("/v1/models", token, builtin, "application/json");
  REQUIRE(with_header);
  CHECK(with_header->status == 403);
  auto listed = client.Get("/v1/models");
  REQUIRE(listed);
  CHECK(listed->status == 200);
  CHECK(json::parse(listed->body)["models"].empty());
}
