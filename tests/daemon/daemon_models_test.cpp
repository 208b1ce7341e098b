// The daemon evaluating models under test: an openai model behind the fake OpenAI server is
// judged once per evaluation item, its failures categorized and its accuracy reported; a daemon
// killed while evaluating resumes without judging an item twice or losing one; and a retrain
// event a crash left running is rerun (or closed as failed) by the restarted daemon.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "base/files.h"
#include "base/process.h"
#include "store/database.h"
#include "store/samples.h"
#include "synth/minhash.h"
#include "synth/training_text.h"
#include "test_support/fake_openai_server.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/spawn.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "test_support/translatable_personas.h"
#include "verifier/toolchains.h"

using namespace tailforge;
using nlohmann::json;

namespace {

std::string write_config(const TempDir& dir, const std::string& name, const json& overrides) {
  json config = {{"log_level", "info"},
                 {"store", {{"job_max_attempts", 4}, {"job_backoff_base_ms", 50}, {"job_backoff_max_ms", 200}}},
                 {"daemon", {{"samples_per_cycle", 4}, {"progress", false}, {"compile_slots", 2}, {"llm_slots", 2}}},
                 {"agents", {{"generator", "builtin"}, {"translator", "builtin"}}},
                 {"eval", {{"enabled", true}, {"fraction", 1.0}}},
                 {"synth", {{"enabled", false}}},
                 {"retrain", {{"enabled", false}}},
                 {"verifier", {{"stages", {"translate", "amd.asm"}}}},
                 {"generator", {{"personas_file", write_translatable_personas(dir)}}}};
  config.merge_patch(overrides);
  std::string path = dir.file(name);
  std::ofstream(path) << config.dump(2);
  return path;
}

ProcessResult run_daemon_cycle(const std::string& db, const std::string& config) {
  return run_tailforge({"daemon", "--cycles", "1", "--db", db, "--config", config, "--no-progress"}, 180);
}

std::string quote(const std::string& text) { return "'" + text + "'"; }

// The daemon in the background, its stderr in a file: for killing it mid-run.
pid_t spawn_daemon(const std::string& db, const std::string& config, const std::string& log) {
  return spawn_in_background(
      {TAILFORGE_BINARY, "daemon", "--cycles", "1", "--db", db, "--config", config, "--no-progress"}, log);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Polls `db_path` every 50 ms until `condition` holds (true) or the daemon exits or 90 s pass.
bool wait_until(pid_t daemon, const std::string& db_path, const std::function<bool(Database&)>& condition) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(daemon, nullptr, WNOHANG) == daemon) return false;
    {
      Result<Database> db = Database::open(db_path);
      if (db.ok() && condition(*db)) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

int64_t count(Database& db, const std::string& sql) {
  Result<Statement> statement = db.prepare(sql);
  if (!statement.ok() || !statement->step()) return -1;
  return statement->int64(0);
}

void kill_daemon(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  CHECK(WIFSIGNALED(status));
}

// ---- the scripted openai model --------------------------------------------------------------

// The translator prompt quotes the source in a ```cuda block ("" when it does not).
std::string quoted_source(const std::string& user) {
  size_t open = user.find("```cuda\n");
  size_t close = user.rfind("\n```");
  if (open == std::string::npos || close == std::string::npos || close < open + 8) return "";
  return user.substr(open + 8, close - open - 8);
}

// How the fake endpoint answers one item, assigned round-robin in the order items are first asked.
enum class Behaviour { good, unchanged, garbage, rate_limited_first, server_error_thrice };
const Behaviour kBehaviours[] = {Behaviour::good, Behaviour::unchanged, Behaviour::garbage,
                                 Behaviour::rate_limited_first, Behaviour::server_error_thrice};

struct ScriptedModel {
  HipifyRules rules;
  std::mutex mutex;
  std::map<std::string, Behaviour> behaviour;  // by sample id
  std::map<std::string, int> requests;         // by sample id
  std::vector<std::string> model_ids;          // the "model" of each request

  CannedResponse answer(const ReceivedRequest& request) {
    json body = json::parse(request.body, nullptr, false);
    if (!body.is_object()) return {400, {}, R"({"error":"not json"})"};
    std::string source = quoted_source(body["messages"].back()["content"].get<std::string>());
    // `model add` checks the endpoint first with a short request that quotes no source.
    if (source.empty()) return CannedResponse{200, {}, FakeOpenAiServer::completion("ready")};
    std::string id = sample_id_for(source);
    Behaviour what;
    int nth;
    {
      std::lock_guard lock(mutex);
      size_t seen = behaviour.size();
      what = behaviour.try_emplace(id, kBehaviours[seen % 5]).first->second;
      nth = ++requests[id];
      model_ids.push_back(body.value("model", std::string()));
    }
    auto code = [](const std::string& language, const std::string& text) {
      return CannedResponse{200, {}, FakeOpenAiServer::completion("```" + language + "\n" + text + "\n```\n")};
    };
    auto good = [&] {
      TranslationResult hip = translate_cuda_to_hip(rules, source);
      return code("hip", hip.ok ? hip.hip_source : "// the rule translator refused: " + hip.message);
    };
    switch (what) {
      case Behaviour::good:
        return good();
      case Behaviour::unchanged:
        return code("cuda", source);
      case Behaviour::garbage:
        return CannedResponse{200, {}, FakeOpenAiServer::completion("Sorry, I would rather talk about the weather.")};
      case Behaviour::rate_limited_first:
        if (nth == 1) return CannedResponse{429, {{"Retry-After", "0"}}, R"({"error":"slow down"})"};
        return good();
      case Behaviour::server_error_thrice:
        if (nth <= 3) return CannedResponse{500, {}, R"({"error":"model crashed"})"};
        return good();
    }
    return CannedResponse{500, {}, R"({"error":"unreachable"})"};
  }
};

}  // namespace

// Guards the whole evaluation path of an openai model: one stored evaluation per item, failures
// categorized per model (compile failures and garbage replies alike), outages retried instead of
// stored, the model's accuracy in `models --json` equal to its evaluation rows, and every
// request recorded as an llm_call of role model_under_test.
TEST_CASE("an openai model is judged once per evaluation item, outages are retried and failures categorized") {
  if (!testing::amd_tools_here("the judge's amd.* stages")) return;
  TempDir dir;
  FakeOpenAiServer server;
  ScriptedModel model;
  Result<HipifyRules> rules = load_hipify_rules(data_path("policies/hipify_rules.json"));
  REQUIRE(rules.ok());
  model.rules = std::move(*rules);
  server.set_responder([&model](const ReceivedRequest& request) { return model.answer(request); });

  std::string db_path = dir.file("eval.db");
  json llm = {{"api_key_env", ""},        {"timeout_ms", 5000},      {"max_attempts", 2},
              {"backoff_base_ms", 10},    {"backoff_max_ms", 20},    {"breaker_failures", 0}};
  std::string config = write_config(dir, "eval.json", {{"daemon", {{"samples_per_cycle", 6}}}, {"llm", llm},
                                                       {"eval", {{"endpoint_pause_seconds", 0.2}}}});

  // The base URL as vLLM and OpenAI's docs write it, ending in /v1 (the fake, like a real server,
  // answers 404 anywhere but /v1/chat/completions). `model add` checks it before registering.
  ProcessResult added = run_tailforge({"model", "add", "--name", "fake-model-v1", "--kind", "openai", "--endpoint",
                                       server.base_url() + "/v1", "--model-id", "m", "--db", db_path, "--config", config});
  INFO(added.stderr_text);
  REQUIRE(added.exit_code == 0);
  CHECK(added.stdout_text.find("model fake-model-v1 (openai, cuda2hip) registered as #1") != std::string::npos);
  CHECK(added.stdout_text.find("ok: fake-model-v1 answers as model 'm'") != std::string::npos);

  ProcessResult run = run_daemon_cycle(db_path, config);
  INFO(run.stderr_text);
  REQUIRE(run.exit_code == 0);
  CHECK(run.stderr_text.find("cycle 1 done") != std::string::npos);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  int64_t model_id = query_int(*db, "SELECT id FROM model WHERE name = 'fake-model-v1'");
  std::string of_model = " model_id = " + std::to_string(model_id);
  int64_t items = query_int(*db, "SELECT count(*) FROM eval_item WHERE track = 'cuda2hip'");
  // eval.fraction 1.0: every verified sample is an item; five items give every behaviour one.
  CHECK(items == query_int(*db, "SELECT count(*) FROM sample WHERE status = 'verified'"));
  REQUIRE(items >= 5);

  std::map<std::string, Behaviour> behaviour;
  std::map<std::string, int> requests;
  {
    std::lock_guard lock(model.mutex);
    behaviour = model.behaviour;
    requests = model.requests;
    for (const std::string& id : model.model_ids) CHECK(id == "m");
  }
  CHECK(static_cast<int64_t>(behaviour.size()) == items);

  // Exactly one evaluation per item and model: none lost, none stored twice.
  CHECK(query_int(*db, "SELECT count(*) FROM evaluation WHERE" + of_model) == items);
  CHECK(query_int(*db, "SELECT count(*) FROM eval_item i JOIN evaluation e ON e.sample_id = i.sample_id AND e." +
                           of_model.substr(1)) == items);
  CHECK(query_int(*db, "SELECT count(*) FROM (SELECT sample_id FROM evaluation GROUP BY model_id, sample_id"
                       " HAVING count(*) > 1)") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE kind = 'evaluate'") == items);
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE kind = 'evaluate' AND state <> 'done'") == 0);

  int64_t expected_ok = 0, garbage = 0, unchanged = 0, rate_limited = 0, flaky = 0;
  for (const auto& [id, what] : behaviour) {
    CAPTURE(id);
    std::string row = " FROM evaluation WHERE" + of_model + " AND sample_id = " + quote(id);
    REQUIRE(query_int(*db, "SELECT count(*)" + row) == 1);
    std::string job = " FROM job WHERE idempotency_key = 'cycle:1:evaluate:" + std::to_string(model_id) + ":" + id + "'";
    switch (what) {
      case Behaviour::good:
        ++expected_ok;
        CHECK(query_int(*db, "SELECT ok AND status = 'ok' AND category IS NULL AND stage IS NULL" + row) == 1);
        CHECK(requests[id] == 1);
        break;
      case Behaviour::unchanged:
        ++unchanged;
        // CUDA is no HIP: the gfx1100 compile fails, and the failure has a category of its own.
        CHECK(query_int(*db, "SELECT NOT ok AND status = 'fail' AND stage = 'amd.asm.gfx1100'"
                             " AND category LIKE 'amd.%' AND checked = 'compile'" +
                                 row) == 1);
        CHECK(query_int(*db, "SELECT count(*) FROM evaluation_stage s JOIN evaluation e ON e.id = s.evaluation_id"
                             " WHERE e." +
                                 of_model.substr(1) + " AND e.sample_id = " + quote(id) +
                                 " AND s.stage = 'amd.asm.gfx1100' AND s.status = 'fail' AND s.category = e.category") ==
              1);
        break;
      case Behaviour::garbage:
        ++garbage;
        CHECK(query_int(*db, "SELECT NOT ok AND status = 'fail' AND stage = 'answer'"
                             " AND category = 'agent.llm.no_code_block' AND checked = 'answer'" +
                                 row) == 1);
        CHECK(requests[id] == 2);  // llm.max_attempts 2: a reply without code is asked again once
        break;
      case Behaviour::rate_limited_first:
        ++expected_ok;
        ++rate_limited;
        CHECK(query_int(*db, "SELECT ok" + row) == 1);
        CHECK(requests[id] == 2);
        CHECK(query_int(*db, "SELECT attempts" + job) == 1);  // retried inside the call, not by the queue
        break;
      case Behaviour::server_error_thrice:
        ++expected_ok;
        ++flaky;
        CHECK(query_int(*db, "SELECT ok" + row) == 1);
        CHECK(requests[id] == 4);
        // Two 500s: an endpoint fault, which stores nothing and pauses the model's evaluation;
        // the job waits for the pause's end without using up an attempt, then succeeds.
        CHECK(query_int(*db, "SELECT attempts" + job) == 1);
        CHECK(query_int(*db, "SELECT last_error LIKE '%paused: agent.llm.server_error%'" + job) == 1);
        break;
    }
  }
  CHECK(garbage >= 1);
  CHECK(unchanged >= 1);
  CHECK(flaky >= 1);
  CHECK(query_int(*db, "SELECT count(*) FROM evaluation WHERE" + of_model + " AND ok") == expected_ok);
  CHECK(query_int(*db, "SELECT count(*) FROM evaluation WHERE" + of_model + " AND NOT ok AND category IS NULL") == 0);
  // A model's failures are its own: nothing of them lands in the corpus's failure taxonomy.
  CHECK(query_int(*db, "SELECT count(*) FROM failure WHERE category LIKE 'agent.llm.%'") == 0);

  // Every request is an llm_call row of the model under test, with its outcome.
  auto calls = [&](const std::string& status) {
    return query_int(*db, "SELECT count(*) FROM llm_call WHERE role = 'model_under_test' AND model = 'm'"
                          " AND endpoint = " + quote(server.base_url() + "/v1") + " AND status = " + quote(status));
  };
  // (The check's GET /v1/models and its short chat request went out before the daemon ran.)
  CHECK(query_int(*db, "SELECT count(*) FROM llm_call") == static_cast<int64_t>(server.requests().size()) - 2);
  CHECK(query_int(*db, "SELECT count(*) FROM llm_call WHERE role = 'model_under_test'") ==
        static_cast<int64_t>(server.requests().size()) - 2);
  CHECK(query_int(*db, "SELECT count(*) FROM model_pause") == 0);  // the pause ended with the next answer
  CHECK(calls("ok") == expected_ok + unchanged);
  CHECK(calls("agent.llm.no_code_block") == 2 * garbage);
  CHECK(calls("agent.llm.rate_limited") == rate_limited);
  CHECK(calls("agent.llm.server_error") == 3 * flaky);

  // `models --json`: the accuracy is the evaluation rows'.
  ProcessResult models = run_tailforge({"models", "--json", "--track", "cuda2hip", "--db", db_path, "--config", config});
  INFO(models.stderr_text);
  REQUIRE(models.exit_code == 0);
  json report = json::parse(models.stdout_text);
  CHECK(report["evaluation_set"]["items"] == items);
  REQUIRE(report["models"].size() == 1);
  const json& summary = report["models"][0];
  CHECK(summary["name"] == "fake-model-v1");
  CHECK(summary["kind"] == "openai");
  CHECK(summary["active"] == true);
  CHECK(summary["evaluation"]["items"] == items);
  CHECK(summary["evaluation"]["evaluated"] == items);
  CHECK(summary["evaluation"]["ok"] == expected_ok);
  CHECK(summary["evaluation"]["accuracy"].get<double>() ==
        doctest::Approx(static_cast<double>(expected_ok) / static_cast<double>(items)));

  // The model's failure taxonomy answers (its JSON shape is still changing: only what it names).
  ProcessResult taxonomy = run_tailforge({"taxonomy", "--model", "fake-model-v1", "--json", "--db", db_path});
  INFO(taxonomy.stderr_text);
  CHECK(taxonomy.exit_code == 0);
  CHECK(taxonomy.stdout_text.find("no_code_block") != std::string::npos);
}

// Guards the evaluate job's crash safety: the evaluation and the job's completion are one
// transaction, so a SIGKILL mid-evaluation neither loses an item nor judges one twice, and the
// restarted daemon resumes the leased evaluate jobs.
TEST_CASE("a daemon killed while evaluating resumes and stores every evaluation exactly once" *
          doctest::test_suite("long")) {
  TempDir dir;
  std::string db_path = dir.file("killed.db");
  std::string config = write_config(dir, "killed.json", {{"daemon", {{"samples_per_cycle", 5}}}});
  ProcessResult added = run_tailforge({"model", "add", "--name", "slow-cat", "--kind", "command", "--db", db_path,
                                       "--config", config, "--", "/bin/sh", "-c", "sleep 2; cat"});
  INFO(added.stderr_text);
  REQUIRE(added.exit_code == 0);

  std::string first_log = dir.file("first.log");
  pid_t daemon = spawn_daemon(db_path, config, first_log);
  bool mid_evaluation = wait_until(daemon, db_path, [](Database& db) {
    return count(db, "SELECT count(*) FROM evaluation") >= 1 &&
           count(db, "SELECT count(*) FROM job WHERE kind = 'evaluate' AND state = 'leased'") >= 1;
  });
  kill_daemon(daemon);
  std::string first_run = read_file(first_log);
  INFO(first_run);
  REQUIRE(mid_evaluation);

  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    int64_t items = query_int(*db, "SELECT count(*) FROM eval_item");
    int64_t judged = query_int(*db, "SELECT count(*) FROM evaluation");
    MESSAGE("killed with " << judged << " of " << items << " items judged");
    CHECK(judged < items);
  }

  ProcessResult restarted = run_daemon_cycle(db_path, config);
  INFO(restarted.stderr_text);
  REQUIRE(restarted.exit_code == 0);
  CHECK(restarted.stderr_text.find("resumed: ") != std::string::npos);
  CHECK(restarted.stderr_text.find("cycle 1 resumed") != std::string::npos);
  CHECK(restarted.stderr_text.find("cycle 1 done") != std::string::npos);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  int64_t model_id = query_int(*db, "SELECT id FROM model WHERE name = 'slow-cat'");
  int64_t items = query_int(*db, "SELECT count(*) FROM eval_item");
  CHECK(items >= 3);
  CHECK(query_int(*db, "SELECT count(*) FROM evaluation WHERE model_id = " + std::to_string(model_id)) == items);
  CHECK(query_int(*db, "SELECT count(DISTINCT sample_id) FROM evaluation WHERE model_id = " +
                           std::to_string(model_id)) == items);
  CHECK(query_int(*db, "SELECT count(*) FROM eval_item i WHERE NOT EXISTS (SELECT 1 FROM evaluation e"
                       " WHERE e.sample_id = i.sample_id)") == 0);
  // `cat` answers with the CUDA itself: every item is a judged, categorized failure.
  CHECK(query_int(*db, "SELECT count(*) FROM evaluation WHERE NOT ok AND category LIKE 'amd.%'") == items);
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE kind = 'evaluate'") == items);
  CHECK(query_text(*db, "SELECT state || ' ' || count(*) FROM job WHERE kind = 'evaluate' GROUP BY state") ==
        "done " + std::to_string(items) + "\n");
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE kind = 'evaluate' AND interruptions > 0") >= 1);
  CHECK(query_int(*db, "SELECT count(*) FROM cycle WHERE state = 'done'") == 1);
}

// Guards the loop's retrain half with the default trainer ({tailforge} baseline train): the first
// cycle with verified samples fires the initial retrain, the trainer registers baseline-v1 for
// that event from the snapshot (none of whose samples is an evaluation item), and the same cycle's
// second evaluation step judges the new version on every item.
TEST_CASE("the default trainer registers a version for its retrain event, and the same cycle evaluates it") {
  // Evaluation items are picked by a hash of the sample id and their near-duplicates are held
  // out of training: the cycle makes enough samples that some are left to train on.
  TempDir dir;
  std::string db_path = dir.file("loop.db");
  std::string config = write_config(dir, "loop.json",
                                    {{"daemon", {{"samples_per_cycle", 10}}},
                                     {"eval", {{"fraction", 0.4}}},
                                     {"retrain", {{"enabled", true},
                                                  {"min_initial_verified", 1},
                                                  {"min_model_tail_samples", 0},
                                                  {"min_new_verified", 0},
                                                  {"min_tail_gain", 0},
                                                  {"accuracy_drop", 0},
                                                  {"snapshot_dir", dir.file("snapshots")}}}});
  ProcessResult run = run_daemon_cycle(db_path, config);
  INFO(run.stderr_text);
  REQUIRE(run.exit_code == 0);
  CHECK(run.stderr_text.find("retrain event 1 ok after 1 attempt(s)") != std::string::npos);
  CHECK(run.stderr_text.find("new model baseline-v1") != std::string::npos);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  CHECK(query_text(*db, "SELECT status || ' ' || attempts FROM retrain_event") == "ok 1\n");
  CHECK(query_int(*db, "SELECT count(*) FROM retrain_event e JOIN model m ON m.id = e.model_id"
                       " WHERE m.name = 'baseline-v1' AND m.kind = 'command' AND m.retrain_event_id = e.id") == 1);
  int64_t items = query_int(*db, "SELECT count(*) FROM eval_item");
  REQUIRE(items >= 1);
  CHECK(query_int(*db, "SELECT count(*) FROM trained_sample") >= 1);
  CHECK(query_int(*db, "SELECT count(*) FROM eval_item i JOIN trained_sample t ON t.sample_id = i.sample_id") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM evaluation e JOIN model m ON m.id = e.model_id"
                       " WHERE m.name = 'baseline-v1'") == items);
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE kind = 'evaluate' AND state <> 'done'") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM cycle WHERE state = 'done'") == 1);

  ProcessResult models = run_tailforge({"models", "--json", "--track", "cuda2hip", "--db", db_path});
  REQUIRE(models.exit_code == 0);
  json report = json::parse(models.stdout_text);
  REQUIRE(report["models"].size() == 1);
  CHECK(report["model_under_test"]["name"] == "baseline-v1");  // no model of the user's: the evaluated version
  CHECK(report["models"][0]["name"] == "baseline-v1");
  CHECK(report["models"][0]["retrain_event"] == 1);
  CHECK(report["models"][0]["snapshot"]["train_samples"].get<int64_t>() >= 1);
  CHECK(report["models"][0]["evaluation"]["items"] == items);

  // No evaluation item has a near-duplicate among the training rows of the written snapshot:
  // the exact 5-shingle Jaccard similarity, computed here from the files.
  MinHashOptions shingles;  // the store's: 5-token shingles, threshold 0.8
  std::vector<std::string> item_texts;
  std::istringstream ids(query_text(*db, "SELECT sample_id FROM eval_item"));
  for (std::string id; std::getline(ids, id);) item_texts.push_back(training_text(find_sample(*db, id).value()->text));
  int snapshots = 0;
  double largest = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.file("snapshots"))) {
    ++snapshots;
    json train = json::parse(std::ifstream(entry.path() / "train.json"));
    for (const json& row : train) {
      for (const std::string& item : item_texts) {
        largest = std::max(largest, shingle_jaccard(row["input"].get<std::string>(), item, shingles));
      }
    }
    json manifest = json::parse(std::ifstream(entry.path() / "manifest.json"));
    CHECK(manifest["evaluation_set"]["items"] == items);
    CHECK(manifest["evaluation_set"]["items_with_near_duplicate"] == 0);
    if (largest >= 0.5) CHECK(std::abs(manifest["evaluation_set"]["largest_similarity"].get<double>() - largest) < 1e-9);
  }
  MESSAGE("largest similarity of an evaluation item to a training row: " << largest);
  CHECK(snapshots == 1);
  CHECK(largest < shingles.threshold);
  REQUIRE(report["evaluation_set"]["training_row_similarity"].size() == 1);
  CHECK(report["evaluation_set"]["training_row_similarity"][0]["items_with_near_duplicate"] == 0);
  // Drawn under the exact rule, the set survives a re-judgement whole.
  ProcessResult rejudged = run_tailforge({"rejudge", "--json", "--db", db_path, "--track", "cuda2hip"});
  REQUIRE(rejudged.exit_code == 0);
  json judged = json::parse(rejudged.stdout_text);
  CHECK(judged["judged"] == items);
  CHECK(judged["retired_now"] == 0);
  CHECK(judged["active"] == items);
}

namespace {

json retrain_section(const json& command, const std::string& on_interrupted, const TempDir& dir) {
  return {{"enabled", true},
          {"min_initial_verified", 1},
          {"min_model_tail_samples", 0},
          {"min_new_verified", 0},
          {"min_tail_gain", 0},
          {"accuracy_drop", 0},
          {"command", command},
          {"timeout_seconds", 60},
          {"on_interrupted", on_interrupted},
          {"max_attempts", 3},
          {"snapshot_dir", dir.file("snapshots-" + on_interrupted)}};
}

// A trainer that runs `first` (shell text; "$0" is this tailforge), logs into the snapshot, writes
// its pid (its process group, see run_process) to `pid_file` and hangs.
json hanging_trainer(const std::string& first, const std::string& pid_file) {
  return {"/bin/sh", "-c",
          first + "echo started >> \"$TAILFORGE_SNAPSHOT_DIR/log\"; echo $$ > " + pid_file + "; exec sleep 30",
          "{tailforge}"};
}

const json kQuickTrainer = {"/bin/sh", "-c", "echo again >> \"$TAILFORGE_SNAPSHOT_DIR/log\""};

// Runs a cycle whose retrain command hangs, SIGKILLs the daemon while the event is running,
// ends the orphaned command, and restarts with `restart_command` and `on_interrupted`.
ProcessResult crash_during_retrain_then_restart(const TempDir& dir, const std::string& name,
                                                const std::string& on_interrupted, const std::string& first = "",
                                                const json& restart_command = kQuickTrainer) {
  std::string db_path = dir.file(name + ".db");
  std::string pid_file = dir.file(name + ".trainer.pid");
  json overrides = {{"daemon", {{"samples_per_cycle", 2}}},
                    {"eval", {{"enabled", false}, {"fraction", 0.0}}},
                    {"retrain", retrain_section(hanging_trainer(first, pid_file), on_interrupted, dir)}};
  std::string slow_config = write_config(dir, name + "-slow.json", overrides);
  overrides["retrain"]["command"] = restart_command;
  std::string quick_config = write_config(dir, name + "-quick.json", overrides);

  // Created before the daemon starts, so the polling below never opens a database being created.
  REQUIRE(Database::open(db_path).ok());
  std::string log = dir.file(name + "-first.log");
  pid_t daemon = spawn_daemon(db_path, slow_config, log);
  bool running = wait_until(daemon, db_path, [&](Database& db) {
    return count(db, "SELECT count(*) FROM retrain_event WHERE status = 'running'") == 1 &&
           read_file(pid_file).find_first_of("0123456789") != std::string::npos;
  });
  kill_daemon(daemon);
  std::string trainer = read_file(pid_file);
  if (trainer.find_first_of("0123456789") != std::string::npos) {
    kill(-std::stoi(trainer), SIGKILL);  // the hung trainer this test started, with its process group
  }
  std::string first_run = read_file(log);
  INFO(first_run);
  REQUIRE(running);
  return run_daemon_cycle(db_path, quick_config);
}

}  // namespace

// Guards resume_interrupted_retrains: an event the crash left 'running' is marked interrupted at
// start and rerun once (attempts 2) on the same snapshot with on_interrupted "rerun", or closed as
// failed with "fail"; either way no event stays running or interrupted and the cycle closes.
TEST_CASE("a retrain event a crash left running is rerun after a restart, or failed by policy") {
  TempDir dir;
  SUBCASE("rerun") {
    ProcessResult restarted = crash_during_retrain_then_restart(dir, "rerun", "rerun");
    INFO(restarted.stderr_text);
    REQUIRE(restarted.exit_code == 0);
    CHECK(restarted.stderr_text.find("1 retrain events were left running by a previous run: marked interrupted") !=
          std::string::npos);
    Result<Database> db = Database::open(dir.file("rerun.db"));
    REQUIRE(db.ok());
    CHECK(query_int(*db, "SELECT count(*) FROM retrain_event") == 1);
    CHECK(query_text(*db, "SELECT status || ' ' || attempts FROM retrain_event") == "ok 2\n");
    CHECK(query_int(*db, "SELECT output LIKE 'attempt 2 after an interruption by a crash%' FROM retrain_event") == 1);
    std::string snapshot = query_text(*db, "SELECT snapshot_dir FROM retrain_event");
    snapshot.pop_back();
    CHECK(read_file(snapshot + "/log") == "started\nagain\n");  // the same snapshot, run again
    CHECK(query_int(*db, "SELECT count(*) FROM job WHERE kind = 'retrain' AND state = 'done'") == 1);
    CHECK(query_int(*db, "SELECT count(*) FROM cycle WHERE state = 'done'") == 1);
  }
  SUBCASE("rerun after the trainer registered its version") {
    // The crash hits after `baseline train` registered baseline-v1 for the event; the rerun of the
    // default trainer registers the same version again, which must neither fail nor add a model.
    ProcessResult restarted = crash_during_retrain_then_restart(
        dir, "registered", "rerun", "\"$0\" baseline train || exit 1; ", {"{tailforge}", "baseline", "train"});
    INFO(restarted.stderr_text);
    REQUIRE(restarted.exit_code == 0);
    Result<Database> db = Database::open(dir.file("registered.db"));
    REQUIRE(db.ok());
    CHECK(query_text(*db, "SELECT status || ' ' || attempts FROM retrain_event") == "ok 2\n");
    CHECK(query_text(*db, "SELECT name || ' ' || retrain_event_id FROM model") == "baseline-v1 1\n");
    CHECK(query_int(*db, "SELECT count(*) FROM retrain_event e JOIN model m ON m.id = e.model_id"
                         " WHERE m.name = 'baseline-v1'") == 1);
    CHECK(query_int(*db, "SELECT count(*) FROM cycle WHERE state = 'done'") == 1);
  }
  SUBCASE("fail") {
    ProcessResult restarted = crash_during_retrain_then_restart(dir, "fail", "fail");
    INFO(restarted.stderr_text);
    REQUIRE(restarted.exit_code == 0);
    Result<Database> db = Database::open(dir.file("fail.db"));
    REQUIRE(db.ok());
    CHECK(query_int(*db, "SELECT count(*) FROM retrain_event") == 1);
    CHECK(query_text(*db, "SELECT status || ' ' || attempts FROM retrain_event") == "failed 1\n");
    CHECK(query_int(*db, "SELECT output LIKE '%interrupted by a crash after 1 attempt(s); retrain.on_interrupted is"
                         " fail%' FROM retrain_event") == 1);
    std::string snapshot = query_text(*db, "SELECT snapshot_dir FROM retrain_event");
    snapshot.pop_back();
    CHECK(read_file(snapshot + "/log") == "started\n");  // not run again
    CHECK(query_int(*db, "SELECT count(*) FROM retrain_event WHERE status IN ('running', 'interrupted')") == 0);
    CHECK(query_int(*db, "SELECT count(*) FROM cycle WHERE state = 'done'") == 1);
  }
}
