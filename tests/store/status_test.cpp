// `tailforge status` shows the jobs that died, each with the error of its last attempt, in the
// table and the JSON, so a weekend's lost work is visible and explained.
#include <doctest/doctest.h>

#include "store/queue.h"
#include "store/status.h"

namespace tailforge {

TEST_CASE("status lists dead jobs with the reason they died; live and finished jobs are not listed") {
  Database db = Database::open(":memory:").value();
  QueuePolicy policy;
  policy.backoff_base_ms = 0;
  JobQueue queue(db, policy);
  int64_t doomed = queue.enqueue({.kind = "verify", .payload = R"({"sample_id": "abc"})", .max_attempts = 2})->id;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    REQUIRE(queue.lease("w", 10000)->has_value());
    REQUIRE(queue.fail(doomed, "w", "c2x86 sample abc not run: the sandbox could not start\nsecond line").ok());
  }
  int64_t done = queue.enqueue({.kind = "generate"})->id;
  REQUIRE(queue.lease("w", 10000)->has_value());
  REQUIRE(queue.complete(done, "w").ok());
  REQUIRE(queue.enqueue({.kind = "synthesize"}).ok());

  StatusSummary status = query_status(db).value();
  REQUIRE(status.dead_jobs.size() == 1);
  CHECK(status.dead_jobs[0].id == doomed);
  CHECK(status.jobs_by_state["dead"] == 1);
  std::string table = format_status_table(status);
  CHECK(table.find("dead jobs:\n  #" + std::to_string(doomed) +
                   " verify after 2 attempt(s): c2x86 sample abc not run: the sandbox could not start\n") !=
        std::string::npos);
  CHECK(table.find("second line") == std::string::npos);
  nlohmann::json json = status_to_json(status);
  REQUIRE(json["dead_jobs"].size() == 1);
  CHECK(json["dead_jobs"][0]["payload"]["sample_id"] == "abc");
  CHECK(json["dead_jobs"][0]["attempts"] == 2);
  CHECK(json["dead_jobs"][0]["last_error"].get<std::string>().find("second line") != std::string::npos);

  Database empty = Database::open(":memory:").value();
  StatusSummary none = query_status(empty).value();
  CHECK(none.dead_jobs.empty());
  CHECK(format_status_table(none).find("dead jobs") == std::string::npos);
  CHECK(status_to_json(none)["dead_jobs"].empty());
}

}  // namespace tailforge
