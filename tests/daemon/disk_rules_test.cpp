// The disk rules (daemon/disk_rules.h): `tailforge gc` reports every place's cap or retention
// rule and applies them with --collect (snapshots past retrain.keep_snapshots, stale scratch
// folders); `tailforge doctor` projects the disk use per day from what the store recorded; and a
// daemon run under small caps ends with every place within its cap.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "store/cache.h"
#include "store/corpus.h"
#include "store/samples.h"
#include "synth/model_registry.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void write_file(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

void age(const fs::path& path, std::chrono::minutes minutes) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - minutes);
}

// A whole snapshot (manifest, training rows, a dictionary) whose manifest is `minutes` old.
std::string make_snapshot(const fs::path& root, const std::string& name, int minutes) {
  fs::path folder = root / name;
  write_file(folder / "train.jsonl", std::string(4096, 'x'));
  write_file(folder / "baseline-dictionary.json", "{}");
  write_file(folder / "manifest.json", "{}");
  age(folder / "manifest.json", std::chrono::minutes(minutes));
  return folder.string();
}

void record_event(Database& db, const std::string& folder, const std::string& status) {
  RetrainEventRecord event;
  event.snapshot_hash = fs::path(folder).filename().string();
  event.snapshot_dir = folder;
  event.status = status;
  Result<std::optional<int64_t>> id = insert_retrain_event_if_new(db, event);
  REQUIRE(id.ok());
  REQUIRE(id->has_value());
}

void register_command_model(Database& db, const std::string& name, const std::string& file,
                            const std::string& parent = "") {
  json definition = {{"name", name}, {"kind", "command"}, {"command", {"/bin/cat", file}}};
  if (!parent.empty()) definition["parent"] = parent;
  Result<ModelRecord> model = register_model(db, definition);
  REQUIRE_MESSAGE(model.ok(), model.message());
}

bool whole(const std::string& folder) { return fs::exists(fs::path(folder) / "manifest.json"); }

json place(const json& report, const std::string& name) {
  for (const json& item : report["places"])
    if (item["name"] == name) return item;
  FAIL("no place " << name);
  return {};
}

json gc_json(const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"gc", "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  ProcessResult run = run_tailforge(args);
  INFO(run.stderr_text);
  REQUIRE(run.exit_code == 0);
  return json::parse(run.stdout_text);
}

}  // namespace

TEST_CASE("gc reports the snapshot and scratch rules and --collect applies them, never touching what is in use") {
  TempDir dir;
  std::string db_path = dir.file("gc.db");
  fs::path snapshots = dir.file("snapshots"), scratch = dir.file("scratch"), work = dir.file("work");
  std::string s0 = make_snapshot(snapshots, "s0", 300), s1 = make_snapshot(snapshots, "s1", 240),
              s2 = make_snapshot(snapshots, "s2", 180), s3 = make_snapshot(snapshots, "s3", 120),
              s4 = make_snapshot(snapshots, "s4", 60);
  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    record_event(*db, s1, "ok");       // nothing uses it: removed
    record_event(*db, s3, "running");  // a retrain in progress reads it: kept
    register_command_model(*db, "other-v1", s0 + "/baseline-dictionary.json");  // evaluated: kept
    register_command_model(*db, "m-v1", s2 + "/baseline-dictionary.json");      // superseded: thinned
    register_command_model(*db, "m-v2", s4 + "/baseline-dictionary.json", "m-v1");
  }
  write_file(scratch / "tailforge-verify-AAAAAA" / "program.cu", "x");
  age(scratch / "tailforge-verify-AAAAAA", std::chrono::minutes(120));
  write_file(scratch / "tailforge-ptx2cuda-CCCCCC" / "unit0" / "candidate.cu", "x");  // a ptx2cuda pairing's
  age(scratch / "tailforge-ptx2cuda-CCCCCC", std::chrono::minutes(120));
  write_file(scratch / "tailforge-verify-BBBBBB" / "program.cu", "x");  // fresh: a running chain's
  write_file(scratch / "someone-else" / "file", "x");
  age(scratch / "someone-else", std::chrono::minutes(120));  // not a verifier's name: never ours
  write_file(work / "0123456789abcdef" / "program.cu", "x");
  age(work / "0123456789abcdef", std::chrono::minutes(120));
  std::string config = dir.file("gc.json");
  std::ofstream(config) << json{{"daemon", {{"work_dir", work.string()}, {"scratch_max_age_minutes", 60}}},
                                {"verifier", {{"scratch_root", scratch.string()}}},
                                {"eval", {{"keep_versions", 1}}},
                                {"retrain", {{"snapshot_dir", snapshots.string()}, {"keep_snapshots", 1}}}}
                               .dump();

  json report = gc_json({"--db", db_path, "--config", config});
  CHECK(place(report, "snapshots")["count"] == 5);
  CHECK(place(report, "snapshots")["would_free"]["count"] == 2);
  CHECK(place(report, "stale scratch")["would_free"]["count"] == 3);
  CHECK(place(report, "compile cache")["rule"].get<std::string>().find("verifier.cache_max_mb") == 0);
  CHECK(place(report, "LLM cache")["rule"].get<std::string>().find("store.llm_cache_max_mb") == 0);
  CHECK(whole(s1));  // a report changes nothing
  CHECK(fs::exists(scratch / "tailforge-verify-AAAAAA"));

  ProcessResult text = run_tailforge({"gc", "--db", db_path, "--config", config});
  REQUIRE(text.exit_code == 0);
  CHECK(text.stdout_text.find("retrain.keep_snapshots 1") != std::string::npos);
  CHECK(text.stdout_text.find("daemon.scratch_max_age_minutes 60") != std::string::npos);
  CHECK(text.stdout_text.find("run with --collect") != std::string::npos);

  json collected = gc_json({"--db", db_path, "--config", config, "--collect"});
  CHECK(place(collected, "snapshots")["freed"]["count"] == 2);
  CHECK(whole(s4));
  CHECK(whole(s3));
  CHECK(whole(s0));
  CHECK_FALSE(fs::exists(s1));
  CHECK_FALSE(whole(s2));
  CHECK(fs::exists(fs::path(s2) / "baseline-dictionary.json"));  // m-v1 still answers when activated again
  CHECK_FALSE(fs::exists(fs::path(s2) / "train.jsonl"));
  CHECK_FALSE(fs::exists(scratch / "tailforge-verify-AAAAAA"));
  CHECK_FALSE(fs::exists(scratch / "tailforge-ptx2cuda-CCCCCC"));
  CHECK(fs::exists(scratch / "tailforge-verify-BBBBBB"));
  CHECK(fs::exists(scratch / "someone-else"));
  CHECK_FALSE(fs::exists(work / "0123456789abcdef"));

  json again = gc_json({"--db", db_path, "--config", config});
  CHECK(place(again, "snapshots")["would_free"]["count"] == 0);
  CHECK(place(again, "stale scratch")["count"] == 0);
}

TEST_CASE("a negative retrain.keep_snapshots or a zero scratch age is an error naming the file, key and value") {
  TempDir dir;
  std::string config = dir.file("bad.json");
  std::ofstream(config) << R"({"retrain": {"keep_snapshots": -1}})";
  ProcessResult run = run_tailforge({"gc", "--db", dir.file("x.db"), "--config", config});
  CHECK(run.exit_code != 0);
  CHECK(run.stderr_text.find(config + ": key /retrain/keep_snapshots has value -1, expected an integer >= 0") !=
        std::string::npos);
  std::ofstream(config) << R"({"daemon": {"scratch_max_age_minutes": 0}, "store": {"llm_cache_max_mb": 1}})";
  run = run_tailforge({"gc", "--db", dir.file("x.db"), "--config", config});
  CHECK(run.stderr_text.find("key /daemon/scratch_max_age_minutes has value 0, expected an integer >= 1") !=
        std::string::npos);
}

TEST_CASE("gc --collect holds the LLM cache under store.llm_cache_max_mb") {
  TempDir dir;
  std::string db_path = dir.file("llm.db");
  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    for (int i = 0; i < 3; ++i) REQUIRE(cache_store(*db, "llm", "key" + std::to_string(i), std::string(700000, 'a')).ok());
  }
  std::string config = dir.file("llm.json");
  std::ofstream(config) << R"({"store": {"llm_cache_max_mb": 1}})";
  json collected = gc_json({"--db", db_path, "--config", config, "--collect"});
  CHECK(place(collected, "LLM cache")["freed"]["count"] == 2);
  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  CHECK(cache_bytes(*db, "llm").value() <= 1048576);
}

TEST_CASE("doctor prints the projected disk use per day and how it was computed") {
  TempDir dir;
  std::string db_path = dir.file("doctor.db");
  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    Sample sample{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = std::string(10000, 'k'),
                  .status = "verified"};
    REQUIRE(insert_sample_if_absent(*db, sample).ok());
  }
  ProcessResult run = run_tailforge({"doctor", "--db", db_path}, 120);
  INFO(run.stdout_text);
  size_t at = run.stdout_text.find("disk growth: projected disk use: ");
  REQUIRE(at != std::string::npos);
  std::string rest = run.stdout_text.substr(at + std::string("disk growth: projected disk use: ").size());
  size_t number = rest.find_first_not_of("0123456789.");
  REQUIRE(number > 0);
  CHECK(rest.substr(number, 7) == " MB/day");
  CHECK(std::stod(rest.substr(0, number)) > 0);
  CHECK(rest.find("1 samples") != std::string::npos);
  CHECK(rest.find("by their created_ms") != std::string::npos);
}
