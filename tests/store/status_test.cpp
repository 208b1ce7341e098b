// `tailforge status` shows the jobs that died, each with the error of its last attempt, in the
// table and the JSON, so a weekend's lost work is visible and explained.
#include <doctest/doctest.h>

#include "store/queue.h"
#include "store/samples.h"
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


TEST_CASE("status has the growth series: verified samples per time bucket by track and origin, and the retrain events") {
  Database db = Database::open(":memory:").value();
  const int64_t start = 1'699'999'200'000;  // a whole hour (UTC)
  // Verified samples over 90 minutes, one failed.
  auto add = [&](int n, const std::string& track, const std::string& origin, const std::string& status, int64_t at) {
    Sample s{.track = track, .origin = origin, .language = "cuda", .text = "// growth " + std::to_string(n) + "\n"};
    s.status = status;
    s.created_ms = at;
    REQUIRE(insert_sample_if_absent(db, s).ok());
  };
  add(1, "cuda2hip", "template", "verified", start);
  add(2, "cuda2hip", "template", "verified", start + 30'000);
  add(3, "cuda2hip", "synthesized", "verified", start + 45 * 60'000);
  add(4, "ptx2cuda", "template", "verified", start + 90 * 60'000);
  add(5, "cuda2hip", "template", "failed", start + 60'000);
  REQUIRE(db.exec("INSERT INTO retrain_event (reason, snapshot_hash, status, created_ms) VALUES"
                  " ('{}', 'a', 'ok', " + std::to_string(start + 3'600'000) + ")").ok());

  StatusSummary status = query_status(db).value();
  CHECK(status.growth_bucket_ms == 60'000);  // 90 minutes in 1-minute buckets: 91 < 200
  REQUIRE(status.growth.size() == 3);
  CHECK(status.growth[0].start_ms == start);
  CHECK(status.growth[0].verified == 2);  // the two template samples of the first minute
  CHECK(status.growth[1].origin == "synthesized");
  CHECK(status.growth[2].track == "ptx2cuda");
  // In the hour up to the newest sample (start + 90 min): the ones at 45 and 90 minutes.
  CHECK(status.verified_per_min == doctest::Approx(2.0 / 60));
  REQUIRE(status.retrains.size() == 1);
  CHECK(status.retrains[0].created_ms == start + 3'600'000);
  nlohmann::json json = status_to_json(status);
  CHECK(json["growth"]["bucket_ms"] == 60'000);
  CHECK(json["growth"]["buckets"].size() == 3);
  CHECK(json["retrains"][0]["status"] == "ok");
  CHECK(format_status_table(status).find("verified/min: 0.0") != std::string::npos);

  // A longer span takes wider buckets: 3 days in hours (72 < 200), 100 days in days.
  add(6, "cuda2hip", "template", "verified", start + 3 * 86'400'000LL);
  CHECK(query_status(db).value().growth_bucket_ms == 3'600'000);
  add(7, "cuda2hip", "template", "verified", start + 100 * 86'400'000LL);
  CHECK(query_status(db).value().growth_bucket_ms == 86'400'000);
}


TEST_CASE("status shows where the verifier's seconds go: per stage, per verified sample, cached runs counted, CPU beside wall") {
  Database db = Database::open(":memory:").value();
  std::vector<std::string> ids;
  for (int n = 0; n < 3; ++n) {
    Sample s{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = "// stage seconds " + std::to_string(n) + "\n"};
    s.status = n < 2 ? "verified" : "failed";  // the failed sample's stages cost time too
    ids.push_back(insert_sample_if_absent(db, s).value().id);
  }
  auto stage = [&](int n, const std::string& name, double seconds, bool cached = false) {
    // A stage whose processes kept two cores busy: twice its wall seconds in CPU.
    double cpu = name == "nvidia.exe" ? 2 * seconds : seconds / 2;
    REQUIRE(upsert_verification(db, {.sample_id = ids[n], .stage = name, .status = "ok", .seconds = seconds,
                                     .cpu_seconds = cpu, .cached = cached}).ok());
  };
  stage(0, "hip_on_nvidia.exe", 6.0);
  stage(1, "hip_on_nvidia.exe", 5.0);
  stage(2, "hip_on_nvidia.exe", 1.0);
  stage(0, "nvidia.exe", 3.0);
  stage(1, "nvidia.exe", 0.0, true);
  stage(0, "nvidia.ptx", 0.5);

  StatusSummary status = query_status(db).value();
  CHECK(status.verified == 2);
  CHECK(status.stage_seconds == doctest::Approx(15.5));
  REQUIRE(status.stage_seconds_by_stage.size() == 3);
  CHECK(status.stage_seconds_by_stage[0].stage == "hip_on_nvidia.exe");  // most seconds first
  CHECK(status.stage_seconds_by_stage[0].seconds == doctest::Approx(12.0));
  CHECK(status.stage_seconds_by_stage[0].runs == 3);
  CHECK(status.stage_seconds_by_stage[1].stage == "nvidia.exe");
  CHECK(status.stage_seconds_by_stage[1].cached == 1);
  CHECK(status.stage_seconds_by_stage[1].cpu_seconds == doctest::Approx(6.0));
  CHECK(status.stage_seconds_by_stage[0].cpu_seconds == doctest::Approx(6.0));
  CHECK(status.stage_cpu_seconds == doctest::Approx(12.25));
  CHECK(verifications_of(db, ids[0]).value()[1].cpu_seconds == doctest::Approx(6.0));
  CHECK(status.stage_seconds_by_stage[2].stage == "nvidia.ptx");

  nlohmann::json json = status_to_json(status);
  CHECK(json["stage_seconds"]["total"].get<double>() == doctest::Approx(15.5));
  CHECK(json["stage_seconds"]["per_verified_sample"].get<double>() == doctest::Approx(7.75));
  CHECK(json["stage_seconds"]["stages"][0]["stage"] == "hip_on_nvidia.exe");
  CHECK(json["stage_seconds"]["stages"][0]["per_verified_sample"].get<double>() == doctest::Approx(6.0));
  CHECK(json["stage_seconds"]["stages"][1]["runs"] == 2);
  CHECK(json["stage_seconds"]["stages"][1]["cached"] == 1);
  CHECK(json["stage_seconds"]["stages"][1]["cpu_seconds"].get<double>() == doctest::Approx(6.0));
  CHECK(json["stage_seconds"]["cpu_total"].get<double>() == doctest::Approx(12.25));
  CHECK(format_status_table(status).find("stage seconds per verified sample: 7.75 s (hip_on_nvidia.exe 6.00 s, "
                                         "nvidia.exe 1.50 s, nvidia.ptx 0.25 s)\n") != std::string::npos);

  Database empty = Database::open(":memory:").value();
  StatusSummary none = query_status(empty).value();
  CHECK(status_to_json(none)["stage_seconds"]["per_verified_sample"].is_null());
  CHECK(format_status_table(none).find("stage seconds") == std::string::npos);
}

}  // namespace tailforge
