// Artifact retention on a real SQLite file: over the cap, unreferenced artifacts go first, then
// those only failed samples link, oldest first, down to 90% of the cap; artifacts of verified
// and pending samples, the evaluation set's references and models' answers stay, and so do every
// sample and verdict.
#include <doctest/doctest.h>

#include "store/evaluations.h"
#include "store/models.h"
#include "store/retention.h"
#include "store/samples.h"
#include "test_support/query.h"
#include "test_support/temp_dir.h"

namespace tailforge {
namespace {

struct Store {
  TempDir dir;
  Database db = Database::open(dir.file("retention.db")).value();

  std::string sample(const std::string& text, const std::string& status) {
    Sample s{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = text};
    std::string id = insert_sample_if_absent(db, s).value().id;
    REQUIRE(set_sample_status(db, id, status).ok());
    return id;
  }
  // Links `bytes` bytes of `fill` to the sample; the artifact's id.
  std::string artifact(const std::string& sample_id, const std::string& name, char fill, int64_t bytes) {
    ArtifactRecord record{.stage = "nvidia.compile", .name = name, .kind = "ptx",
                          .content = std::string(static_cast<size_t>(bytes), fill)};
    std::string id = insert_artifact(db, sample_id, record).value();
    REQUIRE(db.exec("UPDATE artifact SET created_ms = " + std::to_string(static_cast<int>(fill)) + " WHERE id = '" + id + "'").ok());
    return id;
  }
  bool exists(const std::string& artifact_id) {
    return query_int(db, "SELECT count(*) FROM artifact WHERE id = '" + artifact_id + "'") == 1;
  }
};

}  // namespace

TEST_CASE("over the cap: unreferenced, then failed samples' artifacts oldest first; verified and evaluated ones stay") {
  Store s;
  std::string verified = s.sample("__global__ void v() {}", "verified");
  std::string pending = s.sample("__global__ void p() {}", "pending");
  std::string failed_old = s.sample("__global__ void f1() {}", "failed");
  std::string failed_new = s.sample("__global__ void f2() {}", "failed");
  std::string failed_answered = s.sample("__global__ void f3() {}", "failed");

  std::string of_verified = s.artifact(verified, "ptx", 'a', 1000);
  std::string of_pending = s.artifact(pending, "ptx", 'b', 1000);
  std::string old_failure = s.artifact(failed_old, "ptx", 'c', 2000);       // older than 'd'
  std::string new_failure = s.artifact(failed_new, "ptx", 'd', 2000);
  std::string shared = s.artifact(failed_old, "stdout", 'e', 500);          // also a verified sample's
  s.artifact(verified, "stdout", 'e', 500);
  std::string answer = s.artifact(failed_answered, "ptx", 'f', 700);        // a model's answer
  std::string loose = s.artifact(failed_answered, "loose", 'g', 300);
  REQUIRE(s.db.exec("DELETE FROM sample_artifact WHERE artifact_id = '" + loose + "'").ok());

  int64_t model = insert_model(s.db, ModelRecord{.name = "m", .kind = "builtin"}).value();
  EvaluationRecord evaluation{.model_id = model, .sample_id = failed_answered, .track = "cuda2hip", .checked = "answer",
                              .output_id = answer};
  REQUIRE(insert_evaluation(s.db, evaluation).value());

  // 7,500 bytes in all: without a cap (or under it) only the unreferenced artifact goes.
  ArtifactGcPlan uncapped = plan_artifact_gc(s.db, 0).value();
  CHECK(uncapped.total.bytes == 7500);
  CHECK(uncapped.total.count == 7);
  CHECK(uncapped.unreferenced.bytes == 300);
  CHECK(uncapped.failed_only.count == 2);
  CHECK(uncapped.failed_only.bytes == 4000);
  CHECK(uncapped.kept.bytes == 3200);
  CHECK(uncapped.to_free.bytes == 300);
  CHECK(plan_artifact_gc(s.db, 10000).value().to_free.bytes == 300);

  // Cap 6,000: goal 5,400; the unreferenced 300 and the older failure's 2,000 leave 5,200.
  ArtifactGcPlan planned = plan_artifact_gc(s.db, 6000).value();
  CHECK(planned.to_free.count == 2);
  CHECK(planned.bytes_after() == 5200);
  CHECK(s.exists(loose));  // planning deletes nothing
  ArtifactGcPlan done = collect_artifacts(s.db, 6000).value();
  CHECK(done.to_free.bytes == 2300);
  CHECK_FALSE(s.exists(loose));
  CHECK_FALSE(s.exists(old_failure));
  CHECK(s.exists(new_failure));
  for (const std::string& id : {of_verified, of_pending, shared, answer}) CHECK(s.exists(id));
  CHECK(artifact_bytes(s.db).value() == 5200);
  CHECK(query_int(s.db, "SELECT count(*) FROM sample") == 5);
  CHECK(query_int(s.db, "SELECT count(*) FROM sample_artifact WHERE sample_id = '" + failed_old + "'") == 1);

  // A cap below what must be kept frees every failed-only artifact and keeps the rest.
  ArtifactGcPlan tight = collect_artifacts(s.db, 100).value();
  CHECK(tight.to_free.bytes == 2000);
  CHECK(tight.bytes_after() == 3200);
  CHECK(plan_artifact_gc(s.db, 100).value().to_free.count == 0);
  for (const std::string& id : {of_verified, of_pending, shared, answer}) CHECK(s.exists(id));
}

}  // namespace tailforge
