// The refinement loop's bookkeeping without the daemon: which conditions fire a retraining for a
// model under test, what the trainer is told, how a crash-interrupted event is handled, and how
// `tailforge models` compares a version with its parent on the same evaluation set version.
#include <doctest/doctest.h>

#include <filesystem>

#include "base/process.h"
#include "store/corpus.h"
#include "store/cycles.h"
#include "store/evaluations.h"
#include "store/models.h"
#include "store/samples.h"
#include "synth/model_registry.h"
#include "synth/model_report.h"
#include "synth/retrain.h"
#include "test_support/distinct_kernels.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

struct Loop {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  RetrainPolicy policy;
  int64_t cycle = start_cycle(db, 1, 0).value();
  int counter = 0;

  Loop() {
    policy = retrain_policy_from_json(json::object(), load_default_synth_policy(TAILFORGE_SOURCE_DIR).value()).value();
    policy.snapshot_dir = dir.file("snapshots");
    policy.min_new_verified = 0;
    policy.min_tail_gain = 0;
    policy.accuracy_drop = 0;
    policy.min_initial_verified = 1;
    policy.eval.fraction = 0;  // items are added by hand here
    policy.command = {"/bin/sh", "-c",
                      "echo parent=$TAILFORGE_PARENT_MODEL track=$TAILFORGE_TRACK event=$TAILFORGE_RETRAIN_EVENT;"
                      " test -f \"$TAILFORGE_DB\" && test -f \"$TAILFORGE_MANIFEST\" && echo ready"};
  }

  // A verified pair with the feature tag; synthesized for `tail` when given.
  std::string add_pair(const std::string& feature, const std::optional<std::string>& tail_parent = std::nullopt,
                       const std::string& tail_feature = "") {
    Sample sample;
    sample.track = "cuda2hip";
    sample.origin = tail_parent ? "synthesized" : "template";
    sample.language = "cuda";
    ++counter;
    // Distinct names on every line: no two samples are near-duplicates.
    sample.text = distinct_kernel_text(counter);
    sample.status = "verified";
    sample.features = {feature};
    std::string id = insert_sample_if_absent(db, sample).value().id;
    REQUIRE(insert_artifact(db, id, {"translate.hip", "hip:source.hip", "hip", "// hip\n" + sample.text}).ok());
    if (tail_parent) {
      json reason = {{"dimension", "feature"}, {"name", tail_feature}, {"signal", "model_failure"}, {"score", 1.0}};
      REQUIRE(insert_lineage_edge(db, {*tail_parent, id, "synthesized_from", "builtin-synthesizer", std::nullopt,
                                       std::nullopt, reason.dump(), 0})
                  .ok());
    }
    return id;
  }

  void add_item(const std::string& id, int64_t version) {
    REQUIRE(add_eval_items(db, {{"cuda2hip", id, version, std::nullopt, std::nullopt, 0}}).ok());
  }

  ModelRecord model(const std::string& name, const std::optional<std::string>& parent = std::nullopt,
                    std::optional<int64_t> event = std::nullopt) {
    json definition = {{"name", name}, {"kind", "builtin"}};
    if (parent) definition["parent"] = *parent;
    if (event) definition["retrain_event"] = *event;
    Result<ModelRecord> made = register_model(db, definition);
    REQUIRE_MESSAGE(made.ok(), made.message());
    return *made;
  }

  void judge(const ModelRecord& model, const std::string& item, bool ok) {
    EvaluationRecord e;
    e.model_id = model.id;
    e.sample_id = item;
    e.track = "cuda2hip";
    e.ok = ok;
    e.status = ok ? "ok" : "fail";
    if (!ok) e.category = "amd.compile.undeclared_identifier";
    e.checked = "compile";
    REQUIRE(insert_evaluation(db, e).value());
  }
};

}  // namespace

TEST_CASE("a first version is trained once the track has no model, and the trainer learns where it stands") {
  Loop loop;
  loop.policy.min_initial_verified = 3;
  loop.add_pair("atomics");
  CHECK_FALSE(maybe_trigger_retrain(loop.db, loop.policy, loop.cycle).value().has_value());
  loop.add_pair("atomics");
  loop.add_pair("switch");
  Result<std::optional<RetrainOutcome>> fired = maybe_trigger_retrain(loop.db, loop.policy, loop.cycle);
  REQUIRE_MESSAGE(fired.ok(), fired.message());
  REQUIRE(fired->has_value());
  const RetrainOutcome& outcome = **fired;
  CHECK(outcome.status == "ok");
  CHECK(json::parse(outcome.reason)["conditions"][0]["condition"] == "initial_model");
  CHECK(outcome.output.find("parent= track=cuda2hip event=" + std::to_string(outcome.event_id)) != std::string::npos);
  CHECK(outcome.output.find("ready") != std::string::npos);
  CHECK_FALSE(outcome.model.has_value());  // the command registered nothing

  // Once a model exists the initial condition is spent.
  loop.model("v1", std::nullopt, outcome.event_id);
  loop.add_pair("switch");
  CHECK_FALSE(maybe_trigger_retrain(loop.db, loop.policy, loop.cycle).value().has_value());
}

TEST_CASE("{tailforge} in the command is this executable") {
  Loop loop;
  loop.policy.command = {"{tailforge}", "--version"};  // the test binary: doctest prints its version
  loop.add_pair("atomics");
  Result<std::optional<RetrainOutcome>> fired = maybe_trigger_retrain(loop.db, loop.policy, loop.cycle);
  REQUIRE_MESSAGE(fired.ok(), fired.message());
  REQUIRE(fired->has_value());
  CHECK((*fired)->output.find("doctest") != std::string::npos);
  CHECK((*fired)->output.find("$ " + current_executable()) != std::string::npos);
}

TEST_CASE("a tail the model under test fails fires a retraining once synthesis filled it, with that model as parent") {
  Loop loop;
  std::string hard = loop.add_pair("constant_memory"), easy = loop.add_pair("atomics");
  loop.add_item(hard, 1);
  loop.add_item(easy, 1);
  ModelRecord v1 = loop.model("v1");
  loop.judge(v1, hard, false);
  loop.judge(v1, easy, true);
  json numbers = {{"model_id", v1.id}, {"failure_rate", 1.0}, {"evaluated", 1}, {"failed", 1}};
  REQUIRE(replace_tail_report(loop.db, loop.cycle, {{1, "feature", "constant_memory", "model_failure", 3.0, numbers.dump()}}).ok());
  loop.policy.min_model_tail_samples = 3;
  loop.add_pair("constant_memory", hard, "constant_memory");
  loop.add_pair("constant_memory", hard, "constant_memory");
  CHECK_FALSE(maybe_trigger_retrain(loop.db, loop.policy, loop.cycle).value().has_value());
  loop.add_pair("constant_memory", hard, "constant_memory");
  Result<std::optional<RetrainOutcome>> fired = maybe_trigger_retrain(loop.db, loop.policy, loop.cycle);
  REQUIRE_MESSAGE(fired.ok(), fired.message());
  REQUIRE(fired->has_value());
  json reason = json::parse((*fired)->reason);
  MESSAGE(reason.dump());
  json condition = reason["conditions"][0];
  CHECK(condition["condition"] == "model_tail");
  CHECK(condition["model"] == "v1");
  CHECK(condition["tails"][0]["name"] == "constant_memory");
  CHECK(condition["tails"][0]["gain"] == 3);
  CHECK((*fired)->parent_model == "v1");
  CHECK((*fired)->output.find("parent=v1") != std::string::npos);
  CHECK(find_retrain_event(loop.db, (*fired)->event_id).value()->parent_model_id == v1.id);
  // The snapshot trains on the synthesized samples, never on the items.
  std::set<std::string> trained;
  REQUIRE(for_each_trained_sample_text(loop.db, "cuda2hip", [&](const std::string& id, const std::string&) {
            trained.insert(id);
          }).ok());
  CHECK(trained.size() == 3);
  CHECK_FALSE(trained.count(hard));
  CHECK(reason["snapshot"]["held_back_for_evaluation"] == 2);
}

TEST_CASE("an event a crash left running is rerun while attempts remain, else closed as failed") {
  Loop loop;
  loop.add_pair("atomics");
  RetrainOutcome first = *maybe_trigger_retrain(loop.db, loop.policy, loop.cycle).value();
  // The daemon died while the command ran: the event is still 'running' at the next start.
  REQUIRE(loop.db.exec("UPDATE retrain_event SET status = 'running', output = NULL").ok());
  CHECK(mark_running_retrain_events_interrupted(loop.db).value() == 1);
  CHECK(find_retrain_event(loop.db, first.event_id).value()->status == "interrupted");

  std::vector<RetrainOutcome> rerun = resume_interrupted_retrains(loop.db, loop.policy).value();
  REQUIRE(rerun.size() == 1);
  CHECK(rerun[0].status == "ok");
  CHECK(rerun[0].attempts == 2);
  CHECK(rerun[0].output.find("attempt 2 after an interruption") != std::string::npos);
  CHECK(rerun[0].output.find("ready") != std::string::npos);
  RetrainEventRecord event = *find_retrain_event(loop.db, first.event_id).value();
  CHECK(event.status == "ok");
  CHECK(event.attempts == 2);
  CHECK(resume_interrupted_retrains(loop.db, loop.policy).value().empty());

  // Out of attempts (or a policy of "fail"): closed as failed, never left hanging.
  REQUIRE(loop.db.exec("UPDATE retrain_event SET status = 'interrupted'").ok());
  loop.policy.max_attempts = 2;
  std::vector<RetrainOutcome> closed = resume_interrupted_retrains(loop.db, loop.policy).value();
  REQUIRE(closed.size() == 1);
  CHECK(closed[0].status == "failed");
  CHECK(closed[0].output.find("after 2 attempt(s)") != std::string::npos);
  CHECK(find_retrain_event(loop.db, first.event_id).value()->status == "failed");
  REQUIRE(loop.db.exec("UPDATE retrain_event SET status = 'interrupted'").ok());
  loop.policy.max_attempts = 5;
  loop.policy.on_interrupted = "fail";
  CHECK(resume_interrupted_retrains(loop.db, loop.policy).value().at(0).status == "failed");
}

TEST_CASE("an accuracy drop against an earlier version on the same set version fires") {
  Loop loop;
  std::vector<std::string> items;
  for (int i = 0; i < 4; ++i) {
    items.push_back(loop.add_pair("atomics"));
    loop.add_item(items.back(), 1);
  }
  loop.add_pair("switch");
  ModelRecord good = loop.model("good"), worse = loop.model("worse", std::string("good"));
  for (size_t i = 0; i < items.size(); ++i) {
    loop.judge(good, items[i], true);
    loop.judge(worse, items[i], i < 2);
  }
  loop.policy.accuracy_drop = 0.25;
  Result<std::optional<RetrainOutcome>> fired = maybe_trigger_retrain(loop.db, loop.policy, loop.cycle);
  REQUIRE_MESSAGE(fired.ok(), fired.message());
  REQUIRE(fired->has_value());
  json condition = json::parse((*fired)->reason)["conditions"][0];
  CHECK(condition["condition"] == "accuracy_drop");
  CHECK(condition["accuracy"] == 0.5);
  CHECK(condition["best_earlier_model"] == "good");
}

TEST_CASE("models are compared with their parent on the newest set version both evaluated, overall and on their tail") {
  Loop loop;
  std::vector<std::string> v1_items, v2_items;
  for (int i = 0; i < 4; ++i) v1_items.push_back(loop.add_pair(i < 2 ? "constant_memory" : "atomics"));
  for (int i = 0; i < 2; ++i) v2_items.push_back(loop.add_pair("constant_memory"));
  for (const std::string& id : v1_items) loop.add_item(id, 1);
  for (const std::string& id : v2_items) loop.add_item(id, 2);

  ModelRecord parent = loop.model("base-v1");
  RetrainEventRecord event;
  event.snapshot_hash = "s2";
  event.status = "ok";
  event.reason = json{{"conditions", {{{"condition", "model_tail"}, {"model", "base-v1"},
                                       {"tails", {{{"dimension", "feature"}, {"name", "constant_memory"},
                                                   {"signal", "model_failure"}}}}}}},
                      {"snapshot", {{"train_samples", 40}}}}
                     .dump();
  int64_t event_id = insert_retrain_event_if_new(loop.db, event).value().value();
  ModelRecord child = loop.model("base-v2", std::string("base-v1"), event_id);
  // The parent evaluated both versions and fails the constant-memory items; the child has
  // evaluated version 1 only, where it passes them.
  for (const std::string& id : v1_items) loop.judge(parent, id, id == v1_items[2] || id == v1_items[3]);
  for (const std::string& id : v2_items) loop.judge(parent, id, false);
  for (const std::string& id : v1_items) loop.judge(child, id, id != v1_items[3]);
  loop.judge(child, v2_items[0], true);

  ModelsReport report = models_report(loop.db, "cuda2hip").value();
  CHECK(report.eval_version == 2);
  CHECK(report.eval_items == 6);
  REQUIRE(report.models.size() == 2);
  const ModelSummary& p = report.models[0];
  const ModelSummary& c = report.models[1];
  CHECK(p.version == 2);
  CHECK(p.items == 6);
  CHECK(p.ok == 2);
  CHECK(c.version == 1);  // v2 is not complete for the child
  CHECK(c.items == 4);
  CHECK(c.ok == 3);
  CHECK(c.evaluated == 5);
  CHECK(c.parent == "base-v1");
  REQUIRE(c.compared_version == 1);
  CHECK(c.compared_items == 4);
  CHECK(c.parent_ok == 2);
  CHECK(c.compared_ok == 3);
  CHECK(c.snapshot_train_samples == 40);
  REQUIRE(c.tails.size() == 1);
  CHECK(c.tails[0].name == "constant_memory");
  CHECK(c.tails[0].items == 2);  // the version 2 items are not compared yet
  CHECK(c.tails[0].parent_ok == 0);
  CHECK(c.tails[0].ok == 2);

  json out = models_report_to_json(report);
  CHECK(out["models"][1]["parent_comparison"]["delta"].get<double>() == doctest::Approx(0.25));
  CHECK(out["models"][1]["retrained_for"][0]["accuracy"] == 1.0);
  std::string table = format_models_table(report);
  MESSAGE(table);
  CHECK(table.find("0.500->0.750 (+0.250)") != std::string::npos);
  CHECK(table.find("retrained for feature/constant_memory (model_failure): 0/2 -> 2/2 items") != std::string::npos);
}
