// Models from real servers, through the real binary against a real HTTP(S) server process-side
// (the in-project OpenAI-compatible fake): `model check` and the check `model add` runs, and
// endpoint faults (a wrong key, an unknown model id, 429 with Retry-After, 503, a garbage body,
// an untrusted certificate) that `eval` never stores as model failures: it pauses the model's
// evaluation, `status` names the fault, and once the server answers every item is judged.
#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "base/process.h"
#include "store/database.h"
#include "test_support/fake_openai_server.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "test_support/translatable_personas.h"

using namespace tailforge;
using nlohmann::json;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A store with evaluation items: one daemon cycle of the built-in generator and translator.
struct Store {
  TempDir dir;
  std::string db = dir.file("faults.db");
  std::string config = dir.file("faults.json");

  Store() {
    std::ofstream(config) << json{{"log_level", "warn"},
                                  {"daemon", {{"samples_per_cycle", 3}, {"progress", false}, {"compile_slots", 2}}},
                                  {"generator", {{"personas_file", write_translatable_personas(dir)}}},
                                  {"eval", {{"fraction", 1.0}, {"endpoint_pause_seconds", 30}}},
                                  {"synth", {{"enabled", false}}},
                                  {"retrain", {{"enabled", false}}},
                                  {"llm", {{"api_key_env", "TAILFORGE_TEST_KEY"}, {"max_attempts", 2}, {"backoff_base_ms", 10},
                                           {"backoff_max_ms", 20}, {"retry_after_max_ms", 50}, {"breaker_failures", 0},
                                           {"connect_timeout_ms", 2000}}},
                                  {"verifier", {{"stages", {"translate", "amd.asm"}}}}}
                                 .dump();
    ProcessResult daemon = run_tailforge({"daemon", "--cycles", "1", "--db", db, "--config", config, "--no-progress"}, 180);
    INFO(daemon.stderr_text);
    REQUIRE(daemon.exit_code == 0);
  }

  ProcessResult tailforge(std::vector<std::string> arguments) {
    arguments.insert(arguments.end(), {"--db", db, "--config", config});
    return run_tailforge(arguments, 120);
  }
  int64_t count(const std::string& sql) {
    Result<Database> store = Database::open(db);
    REQUIRE(store.ok());
    return query_int(*store, sql);
  }
};

// The fake answers as configured per test step.
struct Switchboard {
  std::mutex mutex;
  std::function<CannedResponse(const ReceivedRequest&)> answer;
  void set(std::function<CannedResponse(const ReceivedRequest&)> f) {
    std::lock_guard lock(mutex);
    answer = std::move(f);
  }
  CannedResponse operator()(const ReceivedRequest& request) {
    std::lock_guard lock(mutex);
    return answer(request);
  }
};

CannedResponse fixed(int status, std::string body, std::vector<std::pair<std::string, std::string>> headers = {}) {
  return CannedResponse{status, std::move(headers), std::move(body)};
}

}  // namespace

TEST_CASE("endpoint faults are never model failures: check names each, eval pauses, status says why, the fix judges all") {
  setenv("TAILFORGE_TEST_KEY", "sk-test-not-printed", 1);
  Store store;
  FakeOpenAiServer server;
  Switchboard board;
  server.set_responder([&board](const ReceivedRequest& request) { return board(request); });
  server.set_served_models({"served-coder"}, true);

  struct Fault {
    std::string name;
    std::string model_id;
    std::function<CannedResponse(const ReceivedRequest&)> answer;
    std::string category;
    std::string said;  // the status and what the server said, as the failure quotes them
  };
  std::vector<Fault> faults = {
      {"wrong-key", "served-coder",
       [](const ReceivedRequest&) { return fixed(401, R"({"error": {"message": "Incorrect API key provided"}})"); },
       "agent.llm.auth", "HTTP 401: Incorrect API key provided"},
      {"unknown-id", "no-such-model", nullptr, "agent.llm.unknown_model", "HTTP 404: The model `no-such-model` does not exist."},
      {"rate-limited", "served-coder",
       [](const ReceivedRequest&) { return fixed(429, R"({"error": {"message": "Rate limit reached"}})", {{"Retry-After", "120"}}); },
       "agent.llm.rate_limited", "HTTP 429: Rate limit reached"},
      {"overloaded", "served-coder", [](const ReceivedRequest&) { return fixed(503, "Service Unavailable"); },
       "agent.llm.server_error", "HTTP 503: Service Unavailable"},
      {"garbage", "served-coder", [](const ReceivedRequest&) { return fixed(200, "<html>proxy error</html>"); },
       "agent.llm.malformed_response", "HTTP 200: "},
  };
  std::string url = server.base_url() + "/v1/chat/completions";
  for (const Fault& fault : faults) {
    CAPTURE(fault.name);
    board.set(fault.answer ? fault.answer : [](const ReceivedRequest&) { return fixed(200, FakeOpenAiServer::completion("ready")); });
    std::vector<std::string> add = {"model", "add", "--name", fault.name, "--endpoint", server.base_url() + "/v1",
                                    "--model-id", fault.model_id};

    // model add checks first: nothing is registered, and the failure names URL, status and message.
    ProcessResult refused = store.tailforge(add);
    CHECK(refused.exit_code == 1);
    CHECK_MESSAGE(contains(refused.stdout_text, fault.category + ": "), refused.stdout_text);
    CHECK_MESSAGE(contains(refused.stdout_text, "POST " + url + ": " + fault.said), refused.stdout_text);
    CHECK(contains(refused.stdout_text, "GET " + server.base_url() + "/v1/models: HTTP 200, 1 model(s): served-coder"));
    CHECK(contains(refused.stderr_text, "model " + fault.name + " not registered"));
    CHECK_FALSE(contains(refused.stdout_text + refused.stderr_text, "sk-test-not-printed"));
    CHECK(store.count("SELECT count(*) FROM model WHERE name = '" + fault.name + "'") == 0);
    if (fault.name == "unknown-id") {
      CHECK(contains(refused.stdout_text, "model id 'no-such-model': not in the list (the server serves: served-coder"));
    }

    add.push_back("--no-check");
    REQUIRE(store.tailforge(add).exit_code == 0);
    ProcessResult check = store.tailforge({"model", "check", fault.name});
    CHECK(check.exit_code == 1);
    CHECK(contains(check.stdout_text, fault.category + ": "));
    CHECK(contains(check.stdout_text, "POST " + url + ": " + fault.said));

    // eval judges nothing, stores nothing, and pauses the model with the fault.
    ProcessResult eval = store.tailforge({"eval", "--model", fault.name});
    CHECK(eval.exit_code == 1);
    CHECK_MESSAGE(contains(eval.stderr_text, "evaluation of " + fault.name + " paused: " + fault.category + ": "),
                  eval.stderr_text);
    CHECK(contains(eval.stderr_text, "POST " + url + ": " + fault.said));
    CHECK(contains(eval.stderr_text, "items not judged (an endpoint fault is never a model failure)"));
    CHECK(store.count("SELECT count(*) FROM evaluation e JOIN model m ON m.id = e.model_id WHERE m.name = '" + fault.name +
                      "'") == 0);
    ProcessResult status = store.tailforge({"status", "--json"});
    REQUIRE(status.exit_code == 0);
    json paused = json::parse(status.stdout_text)["paused_models"];
    bool named = false;
    for (const json& p : paused) {
      if (p["model"] != fault.name) continue;
      named = true;
      CHECK(p["category"] == fault.category);
      CHECK(contains(p["message"].get<std::string>(), fault.said));
      if (fault.name == "rate-limited") {  // Retry-After 120 is longer than eval.endpoint_pause_seconds
        CHECK(p["resume_ms"].get<int64_t>() - p["since_ms"].get<int64_t>() >= 119000);
      }
    }
    CHECK(named);
    CHECK(contains(store.tailforge({"status"}).stdout_text, "evaluation paused: " + fault.name + " (cuda2hip): " + fault.category));
    CHECK(contains(store.tailforge({"models"}).stdout_text, "evaluation paused: " + fault.name + ": " + fault.category));
  }

  // The server is fixed: check passes with latency and tokens, and eval judges every item.
  board.set([](const ReceivedRequest&) { return fixed(200, FakeOpenAiServer::completion("```hip\n// no kernel\n```\n")); });
  ProcessResult check = store.tailforge({"model", "check", "wrong-key"});
  CHECK(check.exit_code == 0);
  CHECK(contains(check.stdout_text, "model id 'served-coder': served"));
  CHECK(contains(check.stdout_text, "POST " + url + ": HTTP 200 in "));
  CHECK(contains(check.stdout_text, "10 prompt + 20 completion tokens"));
  CHECK(contains(check.stdout_text, "answer: ```hip"));
  int64_t items = store.count("SELECT count(*) FROM eval_item WHERE track = 'cuda2hip'");
  REQUIRE(items >= 2);
  ProcessResult eval = store.tailforge({"eval", "--model", "wrong-key", "--json"});
  INFO(eval.stderr_text);
  CHECK(eval.exit_code == 0);
  CHECK(json::parse(eval.stdout_text)["judged"] == items);
  CHECK(store.count("SELECT count(*) FROM evaluation e JOIN model m ON m.id = e.model_id WHERE m.name = 'wrong-key'") == items);
  CHECK(store.count("SELECT count(*) FROM model_pause p JOIN model m ON m.id = p.model_id WHERE m.name = 'wrong-key'") == 0);
  json models = json::parse(store.tailforge({"models", "--json", "--track", "cuda2hip"}).stdout_text);
  for (const json& m : models["models"]) CHECK(m.contains("paused") == (m["name"] != "wrong-key"));
  // No answer stored for any model holds an endpoint fault.
  CHECK(store.count("SELECT count(*) FROM evaluation WHERE category IN ('agent.llm.auth', 'agent.llm.unknown_model',"
                    " 'agent.llm.rate_limited', 'agent.llm.server_error', 'agent.llm.malformed_response',"
                    " 'agent.llm.not_found', 'agent.llm.connection', 'agent.llm.tls')") == 0);
}

TEST_CASE("model add checks an https endpoint with a private CA, behind a prefix, and a command model that reads /dev/stdin") {
  Store store;
  ProcessSpec openssl;
  openssl.argv = {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                  "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", store.dir.file("key.pem"), "-out",
                  store.dir.file("cert.pem")};
  openssl.timeout_seconds = 60;
  ProcessResult made = run_process(openssl);
  if (!made.spawned) {
    testing::skip(testing::Missing::setup_tool, "openssl not found: " + made.spawn_error);
  } else {
    REQUIRE_MESSAGE(made.succeeded(), "openssl could not make a test certificate: " << made.stderr_text);
    FakeOpenAiServer server(store.dir.file("cert.pem"), store.dir.file("key.pem"));
    REQUIRE_MESSAGE(server.port() > 0, "the test's TLS server did not start with the certificate openssl made");
    server.set_prefix("/proxy");
    server.set_responder([](const ReceivedRequest&) { return fixed(200, FakeOpenAiServer::completion("ready")); });
    std::vector<std::string> add = {"model", "add", "--name", "hosted", "--endpoint", server.base_url() + "/proxy/v1",
                                    "--model-id", "fake-coder"};
    ProcessResult untrusted = store.tailforge(add);
    CHECK(untrusted.exit_code == 1);
    CHECK_MESSAGE(contains(untrusted.stdout_text, "agent.llm.tls: POST " + server.base_url() + "/proxy/v1/chat/completions"),
                  untrusted.stdout_text);
    CHECK(contains(untrusted.stdout_text, "--ca-file"));
    add.insert(add.end(), {"--ca-file", store.dir.file("cert.pem")});
    ProcessResult trusted = store.tailforge(add);
    CHECK_MESSAGE(trusted.exit_code == 0, trusted.stdout_text << trusted.stderr_text);
    CHECK(contains(trusted.stdout_text, "GET " + server.base_url() + "/proxy/v1/models: HTTP 200, 1 model(s): fake-coder"));
    CHECK(contains(trusted.stdout_text, "ok: hosted answers as model 'fake-coder'"));
    CHECK(contains(trusted.stdout_text, "registered as #"));
  }

  // A perl script reading the source from /dev/stdin, registered in the store --db names (which
  // follows --command's string), after it answered a small input.
  if (!testing::program_here("perl", "a command model")) return;
  std::ofstream(store.dir.file("to_hip.pl")) << "while (<>) { s/cuda/hip/g; print; }\n";
  std::string other = store.dir.file("other.db");
  ProcessResult perl = run_tailforge({"model", "add", "--name", "perl-hip", "--kind", "command", "--command",
                                      "perl " + store.dir.file("to_hip.pl") + " /dev/stdin", "--db", other});
  CHECK_MESSAGE(perl.exit_code == 0, perl.stdout_text << perl.stderr_text);
  CHECK(contains(perl.stdout_text, "a small cuda2hip input answered in "));
  CHECK(contains(perl.stdout_text, "__global__ void add_one"));
  Result<Database> registered = Database::open(other);
  REQUIRE(registered.ok());
  CHECK(query_int(*registered, "SELECT count(*) FROM model WHERE name = 'perl-hip'") == 1);
  CHECK(store.count("SELECT count(*) FROM model WHERE name = 'perl-hip'") == 0);
  // A command that fails is named with its exit code and stderr; nothing is registered.
  ProcessResult broken = run_tailforge({"model", "add", "--name", "broken", "--kind", "command", "--command",
                                        "sh -c 'echo no weights here >&2; exit 3'", "--db", other});
  CHECK(broken.exit_code == 1);
  CHECK(contains(broken.stdout_text, "model.command.exit"));
  CHECK(contains(broken.stdout_text, "no weights here"));
  CHECK(query_int(*registered, "SELECT count(*) FROM model WHERE name = 'broken'") == 0);
}
