#include <doctest/doctest.h>

#include "base/sha256.h"
#include "store/queue.h"
#include "store/workers.h"
#include "test_support/query.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

TEST_CASE("waiting jobs name what each live worker lacks, and wait no more once a worker may take them") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("w.db"));
  REQUIRE(db.ok());
  JobQueue queue(*db);
  for (int i = 0; i < 3; ++i) REQUIRE(queue.enqueue({.kind = "verify"}).ok());
  REQUIRE(queue.enqueue({.kind = "generate"}).ok());

  Result<std::vector<WaitingJobs>> waiting = waiting_jobs(*db, 60000);
  REQUIRE(waiting.ok());
  REQUIRE(waiting->size() == 2);
  CHECK((*waiting)[1].kind == "verify");
  CHECK((*waiting)[1].count == 3);
  CHECK((*waiting)[1].reason == "no worker is connected");

  WorkerRecord local{.name = kLocalWorkerName, .host = "head", .kinds = {"generate"}};
  local.missing["verify"] = {};
  WorkerRecord cpu{.name = "cpu-node:1", .host = "cpu-node", .kinds = {}};
  cpu.missing["verify"] = {"nvidia.run", "nvidia.ptx"};
  REQUIRE(upsert_worker(*db, local).ok());
  REQUIRE(upsert_worker(*db, cpu).ok());
  waiting = waiting_jobs(*db, 60000);
  REQUIRE(waiting.ok());
  REQUIRE(waiting->size() == 1);
  CHECK((*waiting)[0].reason ==
        "no connected worker can run them: local does not take them; cpu-node:1 lacks nvidia.run, nvidia.ptx");

  // A worker seen long ago does not count, and is forgotten after a while.
  REQUIRE(db->exec("UPDATE worker SET last_seen_ms = 1 WHERE name = 'cpu-node:1'").ok());
  waiting = waiting_jobs(*db, 60000);
  CHECK((*waiting)[0].reason == "no connected worker can run them: local does not take them");
  REQUIRE(forget_workers(*db, 1000).ok());
  Result<std::vector<WorkerRecord>> workers = list_workers(*db);
  REQUIRE(workers->size() == 1);
  CHECK(workers->front().name == kLocalWorkerName);

  WorkerRecord gpu{.name = "gpu-node:7", .host = "gpu-node", .kinds = {"verify"}};
  REQUIRE(upsert_worker(*db, gpu).ok());
  REQUIRE(touch_worker(*db, "gpu-node:7", 2).ok());
  waiting = waiting_jobs(*db, 60000);
  CHECK(waiting->empty());
  REQUIRE(count_worker_job(*db, "gpu-node:7", true).ok());
  workers = list_workers(*db);
  CHECK(workers->at(1).jobs_done == 1);
  CHECK_FALSE(workers->at(1).job_id.has_value());
  CHECK(worker_host(*db, "gpu-node:7").value() == "gpu-node");
  CHECK(worker_host(*db, "cpu-node:1").value().empty());  // forgotten above
}

TEST_CASE("uploads are checked against their address, found like stored artifacts, and dropped") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("w.db"));
  REQUIRE(db.ok());
  std::string content = std::string("binary\0bytes", 12);
  std::string address = sha256_hex(content);
  Result<std::vector<std::string>> missing = missing_artifacts(*db, {address, address});
  CHECK(*missing == std::vector<std::string>{address});
  CHECK_FALSE(stage_upload(*db, address, "other bytes").ok());
  REQUIRE(stage_upload(*db, address, content).ok());
  REQUIRE(stage_upload(*db, address, content).ok());  // a repeat is harmless
  CHECK(missing_artifacts(*db, {address})->empty());
  CHECK(find_artifact_content(*db, address)->value() == content);
  REQUIRE(drop_uploads(*db, {address}, 0).ok());
  CHECK_FALSE(find_artifact_content(*db, address)->has_value());
  CHECK(query_int(*db, "SELECT count(*) FROM artifact_upload") == 0);
}
