#include <doctest/doctest.h>

#include "store/cache.h"
#include "store/cycles.h"
#include "store/maintenance.h"
#include "store/queue.h"
#include "store/samples.h"
#include "store/status.h"

using namespace tailforge;

TEST_CASE("clearing the dataset keeps the compile cache and nothing else") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  Result<int64_t> cycle = start_cycle(*db, 1, 1);
  REQUIRE(cycle.ok());
  Sample sample{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = "// kept?\n", .cycle_id = *cycle};
  std::string id = insert_sample_if_absent(*db, sample)->id;
  REQUIRE(upsert_verification(*db, {.sample_id = id, .stage = "nvidia.ptx", .status = "ok"}).ok());
  REQUIRE(JobQueue(*db).enqueue({.kind = "verify", .idempotency_key = "verify:" + id}).ok());
  REQUIRE(cache_store(*db, "compile", "key", "value").ok());

  REQUIRE(clear_dataset_keep_cache(*db).ok());
  Result<StatusSummary> status = query_status(*db);
  REQUIRE(status.ok());
  CHECK(status->samples == 0);
  CHECK(status->cycles == 0);
  CHECK(status->jobs_by_state.empty());
  CHECK(cache_lookup(*db, "compile", "key") == std::optional<std::string>("value"));
}
