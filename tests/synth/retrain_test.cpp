#include <doctest/doctest.h>

#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "store/corpus.h"
#include "store/cycles.h"
#include "store/samples.h"
#include "synth/retrain.h"
#include "test_support/temp_dir.h"
#include "test_support/varied_programs.h"

using namespace tailforge;

namespace {

void add_verified_pair(Database& db, int index) {
  Sample sample;
  sample.track = "cuda2hip";
  sample.origin = "template";
  sample.language = "cuda";
  sample.text = "__global__ void k" + std::to_string(index) + "(int* p) { p[threadIdx.x] = " +
                std::to_string(index * 13) + "; }\nint main() { return " + std::to_string(index) + "; }\n";
  sample.domain = "elementwise";
  sample.status = "verified";
  std::string id = insert_sample_if_absent(db, sample).value().id;
  REQUIRE(insert_artifact(db, id, {"translate.hip", "hip", "hip", "// hip\n" + sample.text}).ok());
}

RetrainPolicy test_policy(const TempDir& dir) {
  RetrainPolicy policy =
      retrain_policy_from_json(nlohmann::json::parse(R"({"min_new_verified": 5, "min_tail_gain": 0,
        "accuracy_drop": 0, "command": ["/bin/sh", "-c", "test -f \"$TAILFORGE_MANIFEST\" && echo event $TAILFORGE_RETRAIN_EVENT"],
        "timeout_seconds": 20})"),
                               load_default_synth_policy(TAILFORGE_SOURCE_DIR).value())
          .value();
  policy.snapshot_dir = dir.file("snapshots");
  return policy;
}

}  // namespace

TEST_CASE("a retrain trigger fires once at its threshold, runs its command, and a restart does not fire it again") {
  TempDir dir;
  RetrainPolicy policy = test_policy(dir);
  std::string path = dir.file("tailforge.db");
  {
    Database db = std::move(Database::open(path).value());
    int64_t cycle = start_cycle(db, 1, 0).value();
    for (int i = 0; i < 4; ++i) add_verified_pair(db, i);
    Result<std::optional<RetrainOutcome>> below = maybe_trigger_retrain(db, policy, cycle);
    REQUIRE_MESSAGE(below.ok(), below.message());
    CHECK_FALSE(below->has_value());

    add_verified_pair(db, 4);
    Result<std::optional<RetrainOutcome>> fired = maybe_trigger_retrain(db, policy, cycle);
    REQUIRE_MESSAGE(fired.ok(), fired.message());
    REQUIRE(fired->has_value());
    const RetrainOutcome& outcome = **fired;
    MESSAGE(outcome.reason << "\n" << outcome.output);
    CHECK(outcome.status == "ok");
    CHECK(outcome.output.find("event " + std::to_string(outcome.event_id)) != std::string::npos);
    CHECK(std::filesystem::exists(outcome.manifest_path));
    CHECK(nlohmann::json::parse(outcome.reason)["conditions"][0]["condition"] == "min_new_verified");
    std::vector<RetrainEventRecord> events = list_retrain_events(db, 10).value();
    REQUIRE(events.size() == 1);
    CHECK(events[0].status == "ok");
    CHECK(events[0].snapshot_hash == outcome.snapshot_hash);
    CHECK(events[0].seconds.value_or(-1) >= 0);

    Result<std::optional<RetrainOutcome>> again = maybe_trigger_retrain(db, policy, cycle);
    REQUIRE(again.ok());
    CHECK_FALSE(again->has_value());
  }
  {  // a restarted daemon with a lowered threshold still never fires twice for the same snapshot
    Database db = std::move(Database::open(path).value());
    RetrainPolicy eager = policy;
    eager.min_new_verified = 0;
    eager.min_tail_gain = 1;
    Result<std::optional<RetrainOutcome>> after_restart = maybe_trigger_retrain(db, eager, 1);
    REQUIRE(after_restart.ok());
    CHECK_FALSE(after_restart->has_value());
    CHECK(list_retrain_events(db, 10).value().size() == 1);

    for (int i = 5; i < 10; ++i) add_verified_pair(db, i);
    Result<std::optional<RetrainOutcome>> next = maybe_trigger_retrain(db, policy, 1);
    REQUIRE(next.ok());
    CHECK(next->has_value());
    CHECK(list_retrain_events(db, 10).value().size() == 2);
  }
}

TEST_CASE("a failing command and a webhook are recorded in the event") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  int64_t cycle = start_cycle(db, 1, 0).value();
  for (int i = 0; i < 5; ++i) add_verified_pair(db, i);

  httplib::Server server;
  std::string received;
  server.Post("/retrain", [&received](const httplib::Request& request, httplib::Response& response) {
    received = request.body;
    response.set_content("queued", "text/plain");
  });
  int port = server.bind_to_any_port("127.0.0.1");
  std::thread serving([&server] { server.listen_after_bind(); });
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));

  RetrainPolicy policy = test_policy(dir);
  policy.command = {"/bin/sh", "-c", "echo trainer broke >&2; exit 3"};
  policy.webhook = "http://127.0.0.1:" + std::to_string(port) + "/retrain";
  Result<std::optional<RetrainOutcome>> fired = maybe_trigger_retrain(db, policy, cycle);
  server.stop();
  serving.join();
  REQUIRE_MESSAGE(fired.ok(), fired.message());
  REQUIRE(fired->has_value());
  CHECK((*fired)->status == "failed");
  CHECK((*fired)->output.find("trainer broke") != std::string::npos);
  CHECK((*fired)->output.find("HTTP 200 queued") != std::string::npos);
  REQUIRE_FALSE(received.empty());
  CHECK(nlohmann::json::parse(received)["snapshot_hash"] == (*fired)->snapshot_hash);
  CHECK(list_retrain_events(db, 1).value()[0].status == "failed");
}

TEST_CASE("retrain.decontaminate: each snapshot leaves out what matches its benchmarks and has its card") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  int64_t cycle = start_cycle(db, 1, 0).value();
  std::vector<std::string> ids;
  for (const std::string& program : varied_programs()) ids.push_back(store_verified_pair(db, program));
  write_tree_file(dir.file("benchmarks/kernel.cu"), varied_programs()[2]);
  RetrainPolicy policy =
      retrain_policy_from_json(nlohmann::json{{"min_new_verified", 5}, {"min_tail_gain", 0}, {"accuracy_drop", 0},
                                              {"command", {"/bin/sh", "-c", "true"}}, {"timeout_seconds", 20},
                                              {"decontaminate", {dir.file("benchmarks/../benchmarks")}}},
                               load_default_synth_policy(TAILFORGE_SOURCE_DIR).value())
          .value();
  CHECK(policy.decontaminate == std::vector<std::string>{dir.file("benchmarks")});
  policy.snapshot_dir = dir.file("snapshots");
  policy.eval.enabled = false;  // no evaluation item is held back: every sample is the snapshot's to judge
  Result<std::optional<RetrainOutcome>> fired = maybe_trigger_retrain(db, policy, cycle);
  REQUIRE_MESSAGE(fired.ok(), fired.message());
  REQUIRE(fired->has_value());
  std::ifstream in((*fired)->manifest_path);
  nlohmann::json manifest = nlohmann::json::parse(in);
  REQUIRE(manifest["decontamination"]["left_out"].size() == 1);
  CHECK(manifest["decontamination"]["left_out"][0]["id"] == ids[2]);
  CHECK(manifest["decontamination"]["left_out"][0]["benchmark"] == dir.file("benchmarks/kernel.cu"));
  CHECK(manifest["counts"]["samples"] == varied_programs().size() - 1);
  CHECK(std::filesystem::exists((*fired)->snapshot_dir + "/README.md"));
  // The snapshot checked before the export is the one exported: the trigger does not fire again.
  Result<std::optional<RetrainOutcome>> again = maybe_trigger_retrain(db, policy, cycle);
  REQUIRE(again.ok());
  CHECK_FALSE(again->has_value());

  SynthPolicy synth;
  Result<RetrainPolicy> missing =
      retrain_policy_from_json(nlohmann::json{{"decontaminate", {dir.file("gone")}}}, synth);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.message() == "retrain.decontaminate: no file or folder '" + dir.file("gone") + "'");
  Result<RetrainPolicy> wrong = retrain_policy_from_json(nlohmann::json::parse(R"({"decontaminate": "bench"})"), synth);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.message().find("retrain.decontaminate") != std::string::npos);
}

TEST_CASE("unknown retrain keys and wrong types are errors naming the key") {
  SynthPolicy synth;
  Result<RetrainPolicy> unknown = retrain_policy_from_json(nlohmann::json::parse(R"({"min_new": 3})"), synth);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.message().find("retrain.min_new") != std::string::npos);
  Result<RetrainPolicy> wrong = retrain_policy_from_json(nlohmann::json::parse(R"({"command": "train.sh"})"), synth);
  REQUIRE_FALSE(wrong.ok());
  CHECK(wrong.message().find("retrain.command") != std::string::npos);
}

TEST_CASE("the shipped synth and retrain config sections load") {
  std::ifstream in(std::string(TAILFORGE_SOURCE_DIR) + "/config/default.json");
  nlohmann::json config = nlohmann::json::parse(in);
  Result<SynthPolicy> synth = synth_policy_from_config(config["synth"], TAILFORGE_SOURCE_DIR);
  REQUIRE_MESSAGE(synth.ok(), synth.message());
  CHECK(synth->synthesis.multiplier == 10);
  CHECK(synth->export_pairs.count("sass2rdna3") == 1);
  Result<RetrainPolicy> retrain = retrain_policy_from_json(config["retrain"], *synth);
  REQUIRE_MESSAGE(retrain.ok(), retrain.message());
  CHECK(retrain->min_new_verified == 500);
  CHECK(retrain->decontaminate.empty());
}
