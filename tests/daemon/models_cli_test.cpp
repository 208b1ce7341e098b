// The models-under-test commands of the real binary: model add|retire|activate, models, eval,
// and the offline baseline learner (baseline train|translate), on real SQLite files.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "base/files.h"
#include "base/process.h"
#include "store/database.h"
#include "test_support/query.h"
#include "test_support/spawn.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "test_support/translatable_personas.h"
#include "verifier/toolchains.h"

using namespace tailforge;
using nlohmann::json;

namespace {

ProcessResult run_tailforge(std::vector<std::string> arguments, const std::string& stdin_text = "") {
  ProcessSpec spec;
  spec.argv = {TAILFORGE_BINARY};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.stdin_text = stdin_text;
  spec.timeout_seconds = 180;
  return run_process(spec);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `model add ... --db db --no-check`, the arguments first: these tests are about what is stored,
// their endpoints and commands exist only on paper (model_check_test.cpp checks real ones).
ProcessResult model_add(const std::string& db, std::vector<std::string> arguments) {
  std::vector<std::string> argv = {"model", "add", "--no-check", "--db", db};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return run_tailforge(argv);
}

// The cuda2hip object of `models --json`: without --track it lists every track that has models,
// the configured one (cuda2hip) first.
json models_json(const std::string& db) {
  ProcessResult models = run_tailforge({"models", "--json", "--db", db});
  INFO(models.stderr_text);
  REQUIRE(models.exit_code == 0);
  json listing = json::parse(models.stdout_text);
  REQUIRE(listing["tracks"].size() >= 1);
  CHECK(listing["tracks"][0]["track"] == "cuda2hip");
  return listing["tracks"][0];
}

// A small CUDA program; `variant` changes its comment and constants.
// Includes <cmath>: without a math header the rule translator adds math.h (cuda_runtime.h brings it in
// CUDA), a line the offline learner does not learn to insert.
std::string cuda_program(int variant) {
  return "// training program " + std::to_string(variant) + R"(
#include <cstdio>
#include <cmath>
#include <cuda_runtime.h>

__global__ void scale(const float* x, float* y, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * factor;
}

int main() {
  const int n = )" + std::to_string(256 * (variant + 1)) +
         R"(;
  float *x = nullptr, *y = nullptr;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMemset(x, 0, n * sizeof(float));
  scale<<<n / 128, 128>>>(x, y, )" +
         std::to_string(variant + 2) + R"(.0f, n);
  cudaDeviceSynchronize();
  float first = 0.0f;
  cudaMemcpy(&first, y, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(x);
  cudaFree(y);
  printf("first %.1f\n", first);
  return 0;
}
)";
}

}  // namespace

// Guards `model add` for each kind and the models listing: what is stored (kind, endpoint,
// parameters, parent) is what was given, and the table and JSON show it.
TEST_CASE("model add registers openai, command and builtin models, and models lists them") {
  TempDir dir;
  std::string db = dir.file("models.db");
  ProcessResult openai = model_add(db, {"--name", "gpt-a", "--endpoint", "http://127.0.0.1:9", "--model-id",
                                        "qwen-coder", "--timeout", "30"});
  INFO(openai.stderr_text);
  REQUIRE(openai.exit_code == 0);
  CHECK(contains(openai.stdout_text, "model gpt-a (openai, cuda2hip) registered as #1"));
  ProcessResult command = model_add(db, {"--name", "dict-b", "--kind", "command", "--parent", "gpt-a", "--command",
                                         "/bin/cat -u"});
  INFO(command.stderr_text);
  REQUIRE(command.exit_code == 0);
  ProcessResult builtin = model_add(db, {"--name", "rules-c", "--kind", "builtin", "--track", "cuda2hip"});
  INFO(builtin.stderr_text);
  REQUIRE(builtin.exit_code == 0);

  {
    Result<Database> store = Database::open(db);
    REQUIRE(store.ok());
    CHECK(query_text(*store, "SELECT name || ' ' || kind || ' ' || track || ' ' || coalesce(endpoint, '-') || ' ' ||"
                             " active FROM model ORDER BY id") ==
          "gpt-a openai cuda2hip http://127.0.0.1:9 1\ndict-b command cuda2hip - 1\nrules-c builtin cuda2hip - 1\n");
    CHECK(query_text(*store, "SELECT json_extract(parameters, '$.model_id') || ' ' ||"
                             " json_extract(parameters, '$.timeout_seconds') FROM model WHERE name = 'gpt-a'") ==
          "qwen-coder 30.0\n");
    CHECK(query_text(*store, "SELECT json_extract(parameters, '$.command') FROM model WHERE name = 'dict-b'") ==
          "[\"/bin/cat\",\"-u\"]\n");
    CHECK(query_int(*store, "SELECT count(*) FROM model c JOIN model p ON p.id = c.parent_id"
                            " WHERE c.name = 'dict-b' AND p.name = 'gpt-a'") == 1);
  }

  ProcessResult table = run_tailforge({"models", "--db", db});
  INFO(table.stderr_text);
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.stdout_text, "models of cuda2hip, evaluation set v0 (0 items)"));
  for (const char* line : {"gpt-a", "dict-b", "rules-c", "openai", "command", "builtin"}) {
    CHECK_MESSAGE(contains(table.stdout_text, line), line);
  }
  CHECK_FALSE(contains(table.stdout_text, "(retired)"));

  json report = models_json(db);
  CHECK(report["track"] == "cuda2hip");
  CHECK(report["evaluation_set"] == json{{"version", 0}, {"items", 0}, {"retired", 0}, {"near_duplicate_threshold", 0.8},
                                         {"training_row_similarity", json::array()},
                                         {"held_out", {{"groups", json::object()},
                                                       {"trained_samples_of_reserved_templates", json::object()}}}});
  REQUIRE(report["models"].size() == 3);
  CHECK(report["models"][0]["name"] == "gpt-a");
  CHECK(report["models"][0]["parent"].is_null());
  CHECK(report["models"][1]["name"] == "dict-b");
  CHECK(report["models"][1]["kind"] == "command");
  CHECK(report["models"][1]["parent"] == "gpt-a");
  CHECK(report["models"][2]["kind"] == "builtin");
  for (const json& model : report["models"]) {
    CHECK(model["active"] == true);
    CHECK(model["evaluation"]["evaluated"] == 0);
    CHECK(model["evaluation"]["accuracy"].is_null());
  }
  ProcessResult other_track = run_tailforge({"models", "--json", "--track", "c2x86", "--db", db});
  REQUIRE(other_track.exit_code == 0);
  CHECK(json::parse(other_track.stdout_text)["track"] == "c2x86");
  CHECK(json::parse(other_track.stdout_text)["models"].empty());
}

// Guards the validation of a definition: each bad one exits non-zero with a message naming what
// is wrong, and nothing of it is stored.
TEST_CASE("a bad model definition exits non-zero naming the field, and stores nothing") {
  TempDir dir;
  std::string db = dir.file("bad.db");
  REQUIRE(model_add(db, {"--name", "good", "--kind", "builtin"}).exit_code == 0);

  struct Case {
    std::vector<std::string> arguments;
    std::string named;
  };
  const Case cases[] = {
      {{"--name", "no-endpoint", "--kind", "openai"}, "--endpoint"},
      {{"--name", "no-endpoint-default-kind"}, "--endpoint"},
      {{"--name", "ftp", "--endpoint", "ftp://127.0.0.1:9"}, "--endpoint"},
      {{"--name", "magic", "--kind", "magic"}, "kind 'magic'"},
      {{"--name", "orphan", "--kind", "builtin", "--parent", "ghost"}, "parent 'ghost'"},
      {{"--name", "no-argv", "--kind", "command"}, "--command"},
      {{"--name", "other-track", "--kind", "builtin", "--track", "nonesuch"}, "track 'nonesuch'"},
      {{"--name", "slow", "--kind", "builtin", "--timeout", "soon"}, "--timeout"},
      {{"--name", "zero", "--kind", "builtin", "--timeout", "0"}, "timeout_seconds"},
      {{"--name", "no-event", "--kind", "builtin", "--retrain-event", "7"}, "retrain event 7"},
      {{"--name", "bad name", "--kind", "builtin"}, "name"},
      {{"--kind", "builtin"}, "--name"},
      {{"--name", "good", "--kind", "command", "--command", "/bin/cat"}, "model 'good' already exists"},  // another definition, same name
      {{"--name", "empty-argv", "--kind", "command", "--command"}, "--command"},
  };
  for (const Case& bad : cases) {
    ProcessResult added = model_add(db, bad.arguments);
    std::string shown = bad.arguments[0] + " " + bad.arguments[1] + (bad.arguments.size() > 3 ? " " + bad.arguments[3] : "");
    CAPTURE(shown);
    CAPTURE(added.stderr_text);
    CHECK(added.exit_code != 0);
    CHECK(contains(added.stderr_text, bad.named));
    CHECK(added.stdout_text.empty());
  }
  Result<Database> store = Database::open(db);
  REQUIRE(store.ok());
  CHECK(query_text(*store, "SELECT name || ' ' || kind FROM model") == "good builtin\n");
}

// Guards the parser's rest-of-line option: after --command every word is the model's argv, even
// words that look like tailforge options (--name, --help) or use the --command=WORD form.
TEST_CASE("a command model's argv: one --command string split as a shell would, or every word after --") {
  TempDir dir;
  std::string db = dir.file("argv.db");
  // After `--`, every word is the command's, options of tailforge's own included.
  ProcessResult added = model_add(db, {"--name", "dict", "--kind", "command", "--timeout", "20", "--",
                                       TAILFORGE_BINARY, "baseline", "translate", "--dictionary", "/data/d.json",
                                       "--name", "not-a-name", "--help", "-x", "two words"});
  INFO(added.stderr_text);
  REQUIRE(added.exit_code == 0);
  CHECK(contains(added.stdout_text, "model dict (command, cuda2hip) registered"));
  ProcessResult inline_form = model_add(db, {"--name", "cat", "--kind", "command", "--command=/bin/cat -n"});
  INFO(inline_form.stderr_text);
  REQUIRE(inline_form.exit_code == 0);

  Result<Database> store = Database::open(db);
  REQUIRE(store.ok());
  json argv = json::parse(query_text(*store, "SELECT json_extract(parameters, '$.command') FROM model WHERE name = 'dict'"));
  CHECK(argv == json{TAILFORGE_BINARY, "baseline", "translate", "--dictionary", "/data/d.json", "--name", "not-a-name",
                     "--help", "-x", "two words"});
  CHECK(query_text(*store, "SELECT json_extract(parameters, '$.timeout_seconds') FROM model WHERE name = 'dict'") ==
        "20.0\n");
  CHECK(query_text(*store, "SELECT json_extract(parameters, '$.command') FROM model WHERE name = 'cat'") ==
        "[\"/bin/cat\",\"-n\"]\n");
  CHECK(query_int(*store, "SELECT count(*) FROM model") == 2);

  // Options after --command are tailforge's: --db names the store, and nothing is swallowed.
  std::string other = dir.file("other.db");
  ProcessResult split = run_tailforge({"model", "add", "--no-check", "--name", "perl", "--kind", "command", "--command",
                                       "perl 'my script.pl' \"a \\\"b\\\"\" c\\ d /dev/stdin", "--db", other});
  INFO(split.stderr_text);
  REQUIRE(split.exit_code == 0);
  Result<Database> second = Database::open(other);
  REQUIRE(second.ok());
  CHECK(query_text(*second, "SELECT json_extract(parameters, '$.command') FROM model WHERE name = 'perl'") ==
        "[\"perl\",\"my script.pl\",\"a \\\"b\\\"\",\"c d\",\"/dev/stdin\"]\n");
  CHECK(query_int(*store, "SELECT count(*) FROM model WHERE name = 'perl'") == 0);

  ProcessResult unterminated = model_add(db, {"--name", "q", "--kind", "command", "--command", "perl 'x.pl"});
  CHECK(unterminated.exit_code != 0);
  CHECK(contains(unterminated.stderr_text, "unterminated single quote"));
  ProcessResult both = model_add(db, {"--name", "b", "--kind", "command", "--command", "cat", "--", "cat"});
  CHECK(both.exit_code != 0);
  CHECK(contains(both.stderr_text, "not both"));
  ProcessResult stray = run_tailforge({"status", "--db", db, "--", "x"});
  CHECK(stray.exit_code == 2);
  CHECK(contains(stray.stderr_text, "unexpected '-- x'"));
}

TEST_CASE("model add keeps an endpoint's key variable, CA file and request fields, never a key") {
  TempDir dir;
  std::string db = dir.file("endpoint.db");
  setenv("TAILFORGE_TEST_SECRET", "sk-never-stored", 1);
  ProcessResult added = model_add(db, {"--name", "hosted", "--endpoint", "https://api.example.com/v1", "--model-id", "m",
                                       "--api-key-env", "TAILFORGE_TEST_SECRET", "--ca-file", "/etc/my-ca.pem",
                                       "--request-fields", R"({"stop": ["</s>"], "top_p": 0.9})"});
  INFO(added.stderr_text);
  REQUIRE(added.exit_code == 0);
  Result<Database> store = Database::open(db);
  REQUIRE(store.ok());
  json parameters = json::parse(query_text(*store, "SELECT parameters FROM model WHERE name = 'hosted'"));
  CHECK(parameters["api_key_env"] == "TAILFORGE_TEST_SECRET");
  CHECK(parameters["ca_file"] == "/etc/my-ca.pem");
  CHECK(parameters["request_fields"] == json{{"stop", {"</s>"}}, {"top_p", 0.9}});
  CHECK(query_int(*store, "SELECT count(*) FROM model WHERE parameters LIKE '%sk-never-stored%'") == 0);
  CHECK(added.stdout_text.find("sk-never-stored") == std::string::npos);
  unsetenv("TAILFORGE_TEST_SECRET");

  ProcessResult bad_fields = model_add(db, {"--name", "b", "--endpoint", "http://h:1", "--request-fields", "[1]"});
  CHECK(bad_fields.exit_code != 0);
  CHECK(contains(bad_fields.stderr_text, "--request-fields needs a JSON object"));
  ProcessResult bad_url = model_add(db, {"--name", "c", "--endpoint", "http://h:1/v1?x=1"});
  CHECK(bad_url.exit_code != 0);
  CHECK(contains(bad_url.stderr_text, "no query"));
}

// Guards retire/activate: the active flag changes, results stay, and `models` marks a retired one.
TEST_CASE("retire and activate switch a model off and on, and models marks the retired one") {
  TempDir dir;
  std::string db = dir.file("retire.db");
  REQUIRE(model_add(db, {"--name", "rules-a", "--kind", "builtin"}).exit_code == 0);
  REQUIRE(model_add(db, {"--name", "rules-b", "--kind", "builtin"}).exit_code == 0);

  ProcessResult retired = run_tailforge({"model", "retire", "rules-a", "--db", db});
  INFO(retired.stderr_text);
  REQUIRE(retired.exit_code == 0);
  CHECK(contains(retired.stdout_text, "model rules-a retired"));
  {
    Result<Database> store = Database::open(db);
    REQUIRE(store.ok());
    CHECK(query_text(*store, "SELECT name || ' ' || active FROM model ORDER BY id") == "rules-a 0\nrules-b 1\n");
  }
  ProcessResult table = run_tailforge({"models", "--db", db});
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.stdout_text, "rules-a (retired)"));
  CHECK_FALSE(contains(table.stdout_text, "rules-b (retired)"));
  json report = models_json(db);
  CHECK(report["models"][0]["active"] == false);
  CHECK(report["models"][1]["active"] == true);

  ProcessResult activated = run_tailforge({"model", "activate", "rules-a", "--db", db});
  INFO(activated.stderr_text);
  REQUIRE(activated.exit_code == 0);
  CHECK(contains(activated.stdout_text, "model rules-a active"));
  CHECK_FALSE(contains(run_tailforge({"models", "--db", db}).stdout_text, "(retired)"));
  CHECK(models_json(db)["models"][0]["active"] == true);

  ProcessResult ghost = run_tailforge({"model", "retire", "ghost", "--db", db});
  CHECK(ghost.exit_code == 1);
  CHECK(contains(ghost.stderr_text, "no model named 'ghost'"));
  CHECK(run_tailforge({"model", "retire", "--db", db}).exit_code == 2);
  CHECK(run_tailforge({"model", "promote", "rules-a", "--db", db}).exit_code == 2);
}

// Guards `tailforge eval`: it judges the items a model has no result for (all, or --limit K),
// stores one evaluation each, prints the count and the accuracy, and judges nothing twice.
TEST_CASE("eval judges the items a model has no result for and prints its accuracy") {
  if (!testing::amd_tools_here("the judge's amd.* stages")) return;
  TempDir dir;
  std::string db = dir.file("eval.db");
  std::string config = dir.file("eval.json");
  std::ofstream(config) << json{{"log_level", "warn"},
                                {"daemon", {{"samples_per_cycle", 3}, {"progress", false}, {"compile_slots", 2}}},
                                {"generator", {{"personas_file", write_translatable_personas(dir)}}},
                                {"eval", {{"fraction", 1.0}}},
                                {"synth", {{"enabled", false}}},
                                {"retrain", {{"enabled", false}}},
                                {"llm", {{"api_key_env", ""}, {"max_attempts", 1}, {"connect_timeout_ms", 2000}}},
                                {"verifier", {{"stages", {"translate", "amd.asm"}}}}}
                               .dump();
  ProcessResult daemon = run_tailforge({"daemon", "--cycles", "1", "--db", db, "--config", config, "--no-progress"});
  INFO(daemon.stderr_text);
  REQUIRE(daemon.exit_code == 0);
  int64_t items = 0;
  {
    Result<Database> store = Database::open(db);
    REQUIRE(store.ok());
    items = query_int(*store, "SELECT count(*) FROM eval_item");
  }
  REQUIRE(items >= 2);
  std::string n = std::to_string(items);
  REQUIRE(model_add(db, {"--name", "rules", "--kind", "builtin"}).exit_code == 0);
  REQUIRE(model_add(db, {"--name", "echo-cuda", "--kind", "command", "--command", "/bin/cat"}).exit_code == 0);
  REQUIRE(model_add(db, {"--name", "echo-again", "--kind", "command", "--command", "/bin/cat"}).exit_code == 0);

  // The rule translator is the oracle the items were verified with: it passes them all.
  ProcessResult rules = run_tailforge({"eval", "--model", "rules", "--db", db, "--config", config});
  INFO(rules.stderr_text);
  REQUIRE(rules.exit_code == 0);
  CHECK(rules.stdout_text.rfind("judged " + n + " items: " + n + " ok, 0 failed\n", 0) == 0);
  CHECK(contains(rules.stdout_text, "1.000 v1"));
  // `cat` answers with the CUDA itself, which the gfx1100 compile rejects.
  ProcessResult echo = run_tailforge({"eval", "--model", "echo-cuda", "--db", db, "--config", config});
  INFO(echo.stderr_text);
  REQUIRE(echo.exit_code == 0);
  CHECK(echo.stdout_text.rfind("judged " + n + " items: 0 ok, " + n + " failed\n", 0) == 0);
  CHECK(contains(echo.stdout_text, "0.000 v1"));

  // Again: everything is judged already.
  ProcessResult again = run_tailforge({"eval", "--model", "rules", "--db", db, "--config", config});
  INFO(again.stderr_text);
  REQUIRE(again.exit_code == 0);
  CHECK(again.stdout_text.rfind("judged 0 items: 0 ok, 0 failed\n", 0) == 0);
  CHECK(contains(again.stderr_text, "(" + n + " judged before)"));

  // --limit 1, then the rest; --json says the same.
  ProcessResult one = run_tailforge({"eval", "--model", "echo-again", "--limit", "1", "--json", "--db", db, "--config", config});
  INFO(one.stderr_text);
  REQUIRE(one.exit_code == 0);
  json first = json::parse(one.stdout_text);
  CHECK(first["model"] == "echo-again");
  CHECK(first["judged"] == 1);
  CHECK(first["failed"] == 1);
  CHECK(first["not_judged"] == 0);
  ProcessResult rest = run_tailforge({"eval", "--model", "echo-again", "--json", "--db", db, "--config", config});
  REQUIRE(rest.exit_code == 0);
  CHECK(json::parse(rest.stdout_text)["judged"] == items - 1);

  Result<Database> store = Database::open(db);
  REQUIRE(store.ok());
  CHECK(query_int(*store, "SELECT count(*) FROM evaluation") == 3 * items);
  CHECK(query_int(*store, "SELECT count(*) FROM evaluation e JOIN model m ON m.id = e.model_id"
                          " WHERE m.name = 'rules' AND e.ok AND e.status = 'ok'") == items);
  CHECK(query_int(*store, "SELECT count(*) FROM evaluation e JOIN model m ON m.id = e.model_id"
                          " WHERE m.kind = 'command' AND NOT e.ok AND e.category LIKE 'amd.%'") == 2 * items);
  json report = models_json(db);
  CHECK(report["models"][0]["evaluation"]["accuracy"] == 1.0);
  CHECK(report["models"][1]["evaluation"]["accuracy"] == 0.0);

  // An endpoint that refuses connections judges nothing: exit 1, nothing stored.
  REQUIRE(model_add(db, {"--name", "down", "--endpoint", "http://127.0.0.1:1"}).exit_code == 0);
  ProcessResult down = run_tailforge({"eval", "--model", "down", "--db", db, "--config", config});
  INFO(down.stderr_text);
  CHECK(down.exit_code == 1);
  CHECK(contains(down.stderr_text, "evaluation of down paused: agent.llm.connection: POST http://127.0.0.1:1/v1/chat/completions"));
  CHECK(contains(down.stderr_text, n + " items not judged (an endpoint fault is never a model failure)"));
  CHECK(down.stdout_text.rfind("judged 0 items: 0 ok, 0 failed\n", 0) == 0);
  CHECK(query_int(*store, "SELECT count(*) FROM evaluation") == 3 * items);

  // The README's way to compare with hipify-perl: a command model reading the CUDA on stdin.
  std::filesystem::path hipify_perl =
      std::filesystem::path(TAILFORGE_TEST_DATA) / "../../../shared/tools/hipify-perl/hipify-perl";
  if (!std::filesystem::exists(hipify_perl)) {
    testing::skip(testing::Missing::shared_checkout, "hipify-perl as a command model: no " + hipify_perl.string());
  } else if (testing::program_here("perl", "hipify-perl as a command model")) {
    REQUIRE(model_add(db, {"--name", "hipify-perl", "--kind", "command", "--", "perl",
                           std::filesystem::canonical(hipify_perl).string(), "-quiet-warnings", "/dev/stdin"})
                .exit_code == 0);
    ProcessResult hipify = run_tailforge({"eval", "--model", "hipify-perl", "--json", "--db", db, "--config", config});
    INFO(hipify.stderr_text);
    REQUIRE(hipify.exit_code == 0);
    json judged = json::parse(hipify.stdout_text);
    CHECK(judged["judged"] == items);
    CHECK(judged["ok"].get<int64_t>() + judged["failed"].get<int64_t>() == items);
    // Its answers are HIP, unlike the CUDA `cat` echoed back: they compile for gfx1100.
    CHECK(judged["ok"].get<int64_t>() >= 1);
  }

  ProcessResult ghost = run_tailforge({"eval", "--model", "ghost", "--db", db, "--config", config});
  CHECK(ghost.exit_code == 1);
  CHECK(contains(ghost.stderr_text, "no model named 'ghost'"));
  CHECK(run_tailforge({"eval", "--db", db}).exit_code == 2);
}

// Guards the offline baseline learner end to end: `baseline train` reads an alpaca snapshot and
// writes a dictionary (registering nothing with --no-register, a command model without), and
// `baseline translate` turns CUDA it was trained on the like of into the learned HIP.
TEST_CASE("baseline train learns a dictionary from a snapshot and baseline translate applies it") {
  TempDir dir;
  Result<HipifyRules> rules = load_hipify_rules(data_path("policies/hipify_rules.json"));
  REQUIRE(rules.ok());
  std::string snapshot = dir.file("snapshot");
  std::filesystem::create_directories(snapshot);
  json rows = json::array();
  for (int variant = 0; variant < 6; ++variant) {
    TranslationResult hip = translate_cuda_to_hip(*rules, cuda_program(variant));
    REQUIRE(hip.ok);
    rows.push_back({{"instruction", "Translate this CUDA program to HIP."},
                    {"input", cuda_program(variant)},
                    {"output", hip.hip_source}});
  }
  std::ofstream(snapshot + "/manifest.json") << json{{"format", "alpaca"}, {"files", {{"train", "train.json"}}}}.dump();
  std::ofstream(snapshot + "/train.json") << rows.dump(1);
  std::string db = dir.file("baseline.db");

  ProcessResult trained = run_tailforge({"baseline", "train", "--snapshot", snapshot, "--no-register", "--db", db});
  INFO(trained.stderr_text);
  REQUIRE(trained.exit_code == 0);
  std::string dictionary = snapshot + "/baseline-dictionary.json";
  CHECK(contains(trained.stdout_text, "from 6 training rows (min support 3)"));
  CHECK(contains(trained.stdout_text, dictionary));
  REQUIRE(std::filesystem::exists(dictionary));
  std::ifstream in(dictionary);
  json document = json::parse(in);
  CHECK(document["training_rows"] == 6);
  CHECK_FALSE(document["rules"].empty());
  // --no-register: nothing registered (the store is not even created).
  CHECK((!std::filesystem::exists(db) || models_json(db)["models"].empty()));

  // Unseen constants, the same constructs: the learned HIP is the rule translator's.
  std::string unseen = cuda_program(11);
  TranslationResult expected = translate_cuda_to_hip(*rules, unseen);
  REQUIRE(expected.ok);
  ProcessResult translated = run_tailforge({"baseline", "translate", "--dictionary", dictionary}, unseen);
  INFO(translated.stderr_text);
  REQUIRE(translated.exit_code == 0);
  CHECK(translated.stdout_text == expected.hip_source);
  std::string file = dir.file("unseen.cu");
  std::ofstream(file) << unseen;
  ProcessResult from_file = run_tailforge({"baseline", "translate", "--dictionary", dictionary, file});
  CHECK(from_file.exit_code == 0);
  CHECK(from_file.stdout_text == translated.stdout_text);

  // Without --no-register the dictionary becomes a command model that runs `baseline translate`.
  std::string other = dir.file("named-dictionary.json");
  ProcessResult registered = run_tailforge({"baseline", "train", "--snapshot", snapshot, "--out", other, "--name",
                                            "baseline-hand", "--min-support", "2", "--db", db});
  INFO(registered.stderr_text);
  REQUIRE(registered.exit_code == 0);
  CHECK(contains(registered.stdout_text, "min support 2"));
  Result<Database> store = Database::open(db);
  REQUIRE(store.ok());
  CHECK(query_text(*store, "SELECT name || ' ' || kind FROM model") == "baseline-hand command\n");
  json argv = json::parse(
      query_text(*store, "SELECT json_extract(parameters, '$.command') FROM model WHERE name = 'baseline-hand'"));
  REQUIRE(argv.size() == 5);
  CHECK(argv[1] == "baseline");
  CHECK(argv[2] == "translate");
  CHECK(argv[3] == "--dictionary");
  CHECK(argv[4] == other);

  CHECK(run_tailforge({"baseline", "translate"}).exit_code == 2);
  CHECK(run_tailforge({"baseline", "train", "--snapshot", dir.file("nowhere"), "--no-register"}).exit_code == 1);
}

// Guards Database::migrate (store/database.cpp): the schema version is read before the migration's
// BEGIN IMMEDIATE and not read again inside it, so a second process opening a new database at the
// same moment applies the migrations again ("table cycle already exists", "duplicate column name:
// kind") and exits 1. A `model add` run while the daemon creates its database does this.
TEST_CASE("commands started together on a new database all open it") {
  TempDir dir;
  int failed = 0;
  for (int round = 0; round < 3; ++round) {
    std::string db = dir.file("fresh-" + std::to_string(round) + ".db");
    std::vector<pid_t> pids;
    for (int i = 0; i < 4; ++i) {
      pids.push_back(spawn_in_background(
          {TAILFORGE_BINARY, "model", "add", "--name", "m" + std::to_string(i), "--kind", "builtin", "--db", db},
          "/dev/null"));
    }
    for (pid_t pid : pids) {
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
  }
  CHECK(failed == 0);
}
