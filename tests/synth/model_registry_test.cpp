#include <doctest/doctest.h>

#include "store/corpus.h"
#include "store/models.h"
#include "synth/model_registry.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

TEST_CASE("a model is registered once per name; another definition under that name is refused") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  json cass = {{"name", "cass-7b-r1"}, {"kind", "openai"}, {"endpoint", "http://127.0.0.1:8000"}, {"model_id", "cass"}};
  Result<ModelRecord> first = register_model(db, cass);
  REQUIRE_MESSAGE(first.ok(), first.message());
  CHECK(first->kind == "openai");
  CHECK(first->track == "cuda2hip");
  CHECK(first->active);
  CHECK(register_model(db, cass).value().id == first->id);
  json moved = cass;
  moved["endpoint"] = "http://127.0.0.1:9000";
  Result<ModelRecord> conflict = register_model(db, moved);
  REQUIRE_FALSE(conflict.ok());
  CHECK(conflict.message().find("cass-7b-r1") != std::string::npos);
  CHECK(list_models(db).value().size() == 1);
}

TEST_CASE("model definitions are checked field by field") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  auto refused = [&](json definition, const std::string& expected) {
    Result<ModelRecord> model = register_model(db, definition);
    REQUIRE_FALSE(model.ok());
    CHECK_MESSAGE(model.message().find(expected) != std::string::npos, model.message());
  };
  refused({{"name", ""}, {"kind", "builtin"}}, "needs a name");
  refused({{"name", "a"}, {"kind", "magic"}}, "kind 'magic'");
  refused({{"name", "a"}, {"kind", "openai"}}, "--endpoint");
  refused({{"name", "a"}, {"kind", "openai"}, {"endpoint", "ftp://x"}}, "--endpoint");
  refused({{"name", "a"}, {"kind", "command"}}, "--command");
  refused({{"name", "a"}, {"kind", "command"}, {"command", json::array()}}, "--command");
  refused({{"name", "a"}, {"kind", "builtin"}, {"track", "nonesuch"}}, "no evaluator");
  refused({{"name", "a"}, {"kind", "builtin"}, {"parent", "nobody"}}, "parent 'nobody'");
  refused({{"name", "a"}, {"kind", "builtin"}, {"retrain_event", 42}}, "retrain event 42");
  refused({{"name", "a"}, {"kind", "builtin"}, {"timeout_seconds", "slow"}}, "timeout_seconds");
  refused({{"name", "a"}, {"kind", "builtin"}, {"colour", "red"}}, "'colour'");
  CHECK(list_models(db).value().empty());
}

TEST_CASE("a version registered for a retrain event becomes that event's result, with its parent") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  REQUIRE(register_model(db, {{"name", "v1"}, {"kind", "builtin"}}).ok());
  RetrainEventRecord event;
  event.reason = "{}";
  event.snapshot_hash = "abc";
  event.status = "running";
  int64_t event_id = insert_retrain_event_if_new(db, event).value().value();
  json v2 = {{"name", "v2"},
             {"kind", "command"},
             {"command", {"/bin/cat"}},
             {"parent", "v1"},
             {"retrain_event", event_id}};
  Result<ModelRecord> model = register_model(db, v2);
  REQUIRE_MESSAGE(model.ok(), model.message());
  CHECK(model->parent_id == find_model(db, "v1").value()->id);
  CHECK(find_retrain_event(db, event_id).value()->model_id == model->id);
  CHECK(model_of_retrain_event(db, event_id).value()->name == "v2");
  // The event already produced v2: another name for it is refused, the same one is idempotent.
  json other = v2;
  other["name"] = "v2b";
  CHECK_FALSE(register_model(db, other).ok());
  CHECK(register_model(db, v2).value().id == model->id);
}
