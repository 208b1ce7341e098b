// Whose model is under test (synth/model_selection.h) and what the retrain trigger runs for it
// (synth/retrain.h): the user's own model from the moment it is registered, synth.model_under_test
// over it, the baseline learner's versions otherwise; retrain.command unset runs the baseline
// learner only for tailforge's own versions. Real SQLite files, real commands.
#include "synth/model_selection.h"

#include <doctest/doctest.h>

#include <fstream>

#include "policies/config.h"
#include "store/corpus.h"
#include "store/cycles.h"
#include "store/evaluations.h"
#include "store/samples.h"
#include "synth/model_registry.h"
#include "synth/retrain.h"
#include "synth/tails.h"
#include "test_support/distinct_kernels.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

struct Store {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  std::vector<std::string> items;
  int counter = 0;

  // A verified sample with a HIP artifact; distinct names on every line, so no two samples are
  // near-duplicates (a training snapshot holds none of an item's).
  std::string add_sample() {
    Sample sample;
    sample.track = "cuda2hip";
    sample.origin = "template";
    sample.language = "cuda";
    sample.text = distinct_kernel_text(++counter);
    sample.status = "verified";
    std::string id = insert_sample_if_absent(db, sample).value().id;
    REQUIRE(insert_artifact(db, id, {"translate.hip", "hip:source.hip", "hip", "// hip\n" + sample.text}).ok());
    return id;
  }
  // Samples that are evaluation items of version 1.
  void add_items(int count) {
    for (int i = 0; i < count; ++i) {
      std::string id = add_sample();
      REQUIRE(add_eval_items(db, {{"cuda2hip", id, 1, std::nullopt, std::nullopt, 0}}).ok());
      items.push_back(id);
    }
  }

  ModelRecord add(json definition) {
    Result<ModelRecord> made = register_model(db, definition);
    REQUIRE_MESSAGE(made.ok(), made.message());
    return *made;
  }
  // A version as `tailforge baseline train` registers it.
  ModelRecord baseline(const std::string& name, const std::optional<std::string>& parent = std::nullopt) {
    json definition = {{"name", name},
                       {"kind", "command"},
                       {"command", {"/usr/bin/tailforge", "baseline", "translate", "--dictionary", "/d/" + name}}};
    if (parent) definition["parent"] = *parent;
    return add(definition);
  }
  ModelRecord own(const std::string& name, const std::optional<std::string>& parent = std::nullopt) {
    json definition = {{"name", name}, {"kind", "openai"}, {"endpoint", "http://127.0.0.1:9"}};
    if (parent) definition["parent"] = *parent;
    return add(definition);
  }
  // The model fails every item with `category`.
  void fail_all(const ModelRecord& model, const std::string& category) {
    for (const std::string& item : items) {
      EvaluationRecord e{.model_id = model.id,
                         .sample_id = item,
                         .track = "cuda2hip",
                         .ok = false,
                         .status = "fail",
                         .category = category,
                         .checked = "compile"};
      REQUIRE(insert_evaluation(db, e).value());
    }
  }

  std::optional<std::string> under_test(const std::optional<std::string>& configured = std::nullopt,
                                        const std::string& track = "cuda2hip") {
    Result<UnderTest> tested = model_under_test(db, configured, track);
    REQUIRE_MESSAGE(tested.ok(), tested.message());
    return tested->model ? std::optional<std::string>(tested->model->name) : std::nullopt;
  }
};

// The retrain section of the shipped default configuration (retrain.command unset), firing on
// any new verified sample, snapshots in the test's folder.
RetrainPolicy default_retrain_policy(const TempDir& dir) {
  std::ifstream in(std::string(TAILFORGE_SOURCE_DIR) + "/config/default.json");
  json section = json::parse(in)["retrain"];
  section["min_new_verified"] = 1;
  section["min_tail_gain"] = 0;
  section["accuracy_drop"] = 0;
  section["min_model_tail_samples"] = 0;
  section["snapshot_dir"] = dir.file("snapshots");
  RetrainPolicy policy =
      retrain_policy_from_json(section, load_default_synth_policy(TAILFORGE_SOURCE_DIR).value()).value();
  policy.eval.enabled = false;  // the items are added by hand
  return policy;
}

}  // namespace

TEST_CASE("a baseline learner version is a command model running `baseline translate`; nothing else is") {
  Store store;
  CHECK(is_baseline_learner_version(store.baseline("baseline-v1")));
  CHECK_FALSE(is_users_model(store.baseline("baseline-v2")));
  ModelRecord cat = store.add({{"name", "cat"}, {"kind", "command"}, {"command", {"/bin/cat", "baseline", "x"}}});
  CHECK_FALSE(is_baseline_learner_version(cat));
  CHECK(is_users_model(cat));
  ModelRecord rules = store.add({{"name", "rules"}, {"kind", "builtin"}});
  CHECK_FALSE(is_baseline_learner_version(rules));
  CHECK_FALSE(is_users_model(rules));  // the built-in translator is tailforge's own
  CHECK(is_users_model(store.own("mine")));
}

TEST_CASE("the user's own model is under test once registered, even with newer evaluated baseline versions") {
  Store store;
  store.add_items(5);
  CHECK_FALSE(store.under_test().has_value());  // no model at all
  ModelRecord v1 = store.baseline("baseline-v1");
  CHECK_FALSE(store.under_test().has_value());  // a baseline version needs evaluations
  store.fail_all(v1, "amd.compile.undeclared_identifier");
  CHECK(store.under_test() == "baseline-v1");

  store.own("mine");  // no evaluation yet
  ModelRecord v2 = store.baseline("baseline-v2", "baseline-v1");
  store.fail_all(v2, "amd.compile.undeclared_identifier");
  CHECK(store.under_test() == "mine");
  Result<UnderTest> why = model_under_test(store.db, std::nullopt, "cuda2hip");
  CHECK(why->why.find("your own") != std::string::npos);

  store.own("mine-r2", "mine");  // its retrained version takes over
  CHECK(store.under_test() == "mine-r2");
  REQUIRE(set_model_active(store.db, "mine-r2", false).value());
  CHECK(store.under_test() == "mine");  // a retired model is not under test
  REQUIRE(set_model_active(store.db, "mine", false).value());
  CHECK(store.under_test() == "baseline-v2");
  CHECK_FALSE(store.under_test(std::nullopt, "c2x86").has_value());  // another track has none
}

TEST_CASE("synth.model_under_test overrides the rule on its own track only; a name not registered is none") {
  Store store;
  store.add_items(5);
  ModelRecord v1 = store.baseline("baseline-v1");
  store.fail_all(v1, "amd.compile.undeclared_identifier");
  store.own("mine");
  store.add({{"name", "gcc-o1"}, {"kind", "command"}, {"track", "c2x86"}, {"command", {"/bin/cat"}}});
  CHECK(store.under_test("baseline-v1") == "baseline-v1");
  CHECK(store.under_test("gcc-o1") == "mine");  // a c2x86 model leaves cuda2hip to the rule
  CHECK(store.under_test("gcc-o1", "c2x86") == "gcc-o1");
  CHECK(store.under_test("baseline-v1", "c2x86") == "gcc-o1");
  CHECK_FALSE(store.under_test("typo").has_value());
  Result<UnderTest> why = model_under_test(store.db, std::string("typo"), "cuda2hip");
  CHECK(why->why.find("'typo', which is not registered") != std::string::npos);
}

TEST_CASE("the long-tail detector reads the failures of the user's model, not of a newer baseline version") {
  Store store;
  store.add_items(6);
  ModelRecord mine = store.own("mine");
  store.fail_all(mine, "amd.compile.mine_fails_this");
  ModelRecord v1 = store.baseline("baseline-v1");
  store.fail_all(v1, "amd.compile.baseline_fails_this");
  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  auto model_tails = [&store](const SynthPolicy& p) {
    Result<std::vector<TailEntry>> tails = detect_tails(store.db, p);
    REQUIRE_MESSAGE(tails.ok(), tails.message());
    std::map<std::string, int64_t> out;  // category -> model id
    for (const TailEntry& entry : *tails) {
      if (entry.signal == "model_failure") out[entry.name] = entry.numbers["model_id"].get<int64_t>();
    }
    return out;
  };
  std::map<std::string, int64_t> tails = model_tails(policy);
  REQUIRE(tails.count("amd.compile.mine_fails_this") == 1);
  CHECK(tails["amd.compile.mine_fails_this"] == mine.id);
  CHECK(tails.count("amd.compile.baseline_fails_this") == 0);

  policy.model_under_test = "baseline-v1";
  tails = model_tails(policy);
  CHECK(tails.count("amd.compile.mine_fails_this") == 0);
  REQUIRE(tails.count("amd.compile.baseline_fails_this") == 1);
  CHECK(tails["amd.compile.baseline_fails_this"] == v1.id);
}

TEST_CASE("retrain.command: null is chosen per model under test, [] is none, an argv is that; others are refused") {
  SynthPolicy synth;
  RetrainPolicy unset = retrain_policy_from_json(json::parse(R"({"command": null})"), synth).value();
  CHECK_FALSE(unset.command.has_value());
  CHECK_FALSE(retrain_policy_from_json(json::object(), synth).value().command.has_value());
  RetrainPolicy none = retrain_policy_from_json(json::parse(R"({"command": []})"), synth).value();
  REQUIRE(none.command.has_value());
  CHECK(none.command->empty());
  RetrainPolicy mine = retrain_policy_from_json(json::parse(R"({"command": ["train.sh", "--fast"]})"), synth).value();
  CHECK(mine.command == std::vector<std::string>{"train.sh", "--fast"});
  Result<RetrainPolicy> numbers = retrain_policy_from_json(json::parse(R"({"command": [1, 2]})"), synth);
  REQUIRE_FALSE(numbers.ok());
  CHECK(numbers.message().find("retrain.command") != std::string::npos);

  Store store;
  ModelRecord v1 = store.baseline("baseline-v1");
  ModelRecord own = store.own("mine");
  ModelRecord rules = store.add({{"name", "rules"}, {"kind", "builtin"}});
  CHECK(retrain_command_for(unset, std::nullopt).argv == unset.baseline_command);
  CHECK(retrain_command_for(unset, v1).argv == unset.baseline_command);
  CHECK(retrain_command_for(unset, rules).argv == unset.baseline_command);
  RetrainCommand for_own = retrain_command_for(unset, own);
  CHECK(for_own.argv.empty());
  CHECK(
      for_own.why ==
      "no retrain command: the model under test mine is not the baseline learner; set retrain.command to your trainer");
  CHECK(retrain_command_for(mine, own).argv == *mine.command);
  CHECK(retrain_command_for(none, v1).argv.empty());

  // The configuration file: null or an argv; anything else names the file and the key.
  Result<json> defaults = load_config("");
  REQUIRE(defaults.ok());
  CHECK((*defaults)["retrain"]["command"].is_null());
  CHECK(merge_config(*defaults, json::parse(R"({"retrain": {"command": ["t.sh"]}})"), "u.json").ok());
  CHECK(merge_config(*defaults, json::parse(R"({"retrain": {"command": null}})"), "u.json").ok());
  Result<json> text = merge_config(*defaults, json::parse(R"({"retrain": {"command": "t.sh"}})"), "u.json");
  REQUIRE_FALSE(text.ok());
  CHECK(text.message() == "u.json: key /retrain/command has value \"t.sh\", expected an array of strings or null");
}

TEST_CASE("with the user's model under test the default configuration records the retrain event and runs no command") {
  Store store;
  store.add_items(3);
  for (int i = 0; i < 3; ++i) store.add_sample();  // to train on
  ModelRecord v1 = store.baseline("baseline-v1");
  store.fail_all(v1, "amd.compile.undeclared_identifier");
  store.own("mine");
  store.baseline("baseline-v2", "baseline-v1");  // newer, yet not under test
  RetrainPolicy policy = default_retrain_policy(store.dir);
  REQUIRE_FALSE(policy.command.has_value());
  // Were the baseline learner chosen, this would run and say so.
  policy.baseline_command = {"/bin/sh", "-c", "echo baseline learner ran"};
  int64_t cycle = start_cycle(store.db, 1, 0).value();

  Result<std::optional<RetrainOutcome>> fired = maybe_trigger_retrain(store.db, policy, cycle);
  REQUIRE_MESSAGE(fired.ok(), fired.message());
  REQUIRE(fired->has_value());
  const RetrainOutcome& outcome = **fired;
  MESSAGE(outcome.output);
  CHECK(outcome.parent_model == "mine");
  CHECK(outcome.status == "ok");
  CHECK(outcome.note.find("no retrain command: the model under test mine is not the baseline learner; set "
                          "retrain.command to your trainer") == 0);
  CHECK(outcome.note.find("nothing ran, the snapshot is in " + outcome.snapshot_dir) != std::string::npos);
  CHECK(outcome.output.find(outcome.note) != std::string::npos);
  CHECK(outcome.output.find("baseline learner ran") == std::string::npos);
  CHECK(std::filesystem::exists(outcome.manifest_path));
  Result<std::optional<RetrainEventRecord>> event = find_retrain_event(store.db, outcome.event_id);
  REQUIRE(event.ok());
  REQUIRE(event->has_value());
  CHECK_FALSE((*event)->command.has_value());
  CHECK((*event)->status == "ok");
  CHECK((*event)->output.value_or("").find("no retrain command") != std::string::npos);

  // What doctor shows for it.
  Result<RetrainPlan> plan = next_retrain_plan(&store.db, policy);
  REQUIRE(plan.ok());
  CHECK(plan->under_test.model->name == "mine");
  CHECK(plan->expanded_argv.empty());
  std::string line = describe_retrain_plan(*plan);
  CAPTURE(line);
  CHECK(line.find("no command (no retrain command: the model under test mine is not the baseline learner") !=
        std::string::npos);
  CHECK(line.find("no webhook: only a snapshot is exported, for mine, the model under test") != std::string::npos);
}

TEST_CASE("retrain.command unset runs the baseline learner for its versions; an explicit command runs for any model") {
  Store store;
  store.add_items(3);
  for (int i = 0; i < 3; ++i) store.add_sample();  // to train on
  ModelRecord v1 = store.baseline("baseline-v1");
  store.fail_all(v1, "amd.compile.undeclared_identifier");
  RetrainPolicy policy = default_retrain_policy(store.dir);
  policy.baseline_command = {"/bin/sh", "-c", "echo baseline learner retrains $TAILFORGE_PARENT_MODEL"};
  int64_t cycle = start_cycle(store.db, 1, 0).value();
  Result<std::optional<RetrainOutcome>> baseline = maybe_trigger_retrain(store.db, policy, cycle);
  REQUIRE_MESSAGE(baseline.ok(), baseline.message());
  REQUIRE(baseline->has_value());
  CHECK((*baseline)->output.find("baseline learner retrains baseline-v1") != std::string::npos);
  CHECK((*baseline)->note.empty());
  std::string plan = describe_retrain_plan(next_retrain_plan(&store.db, policy).value());
  CHECK(plan.find("`/bin/sh -c") != std::string::npos);
  CHECK(plan.find("baseline-v1 is a baseline learner version") != std::string::npos);

  store.own("mine");
  store.add_sample();  // a new snapshot
  policy.command = {"/bin/sh", "-c", "echo my trainer retrains $TAILFORGE_PARENT_MODEL"};
  Result<std::optional<RetrainOutcome>> explicit_command = maybe_trigger_retrain(store.db, policy, cycle);
  REQUIRE_MESSAGE(explicit_command.ok(), explicit_command.message());
  REQUIRE(explicit_command->has_value());
  CHECK((*explicit_command)->output.find("my trainer retrains mine") != std::string::npos);
  CHECK((*explicit_command)->status == "ok");
  CHECK(find_retrain_event(store.db, (*explicit_command)->event_id).value().value().command.has_value());
}
