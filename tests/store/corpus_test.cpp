#include <doctest/doctest.h>

#include "store/corpus.h"
#include "store/cycles.h"
#include "store/samples.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

std::string add(Database& db, const std::string& text, const std::string& status, const std::string& domain,
                std::vector<std::string> features) {
  Sample sample{"", "cuda2hip", "template", "cuda", text};
  sample.domain = domain;
  sample.features = std::move(features);
  sample.status = status;
  return insert_sample_if_absent(db, sample).value().id;
}

}  // namespace

TEST_CASE("corpus counts, yields and seeds come from verified and failed samples of the track") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("t.db")).value());
  add(db, "a", "verified", "stencil", {"switch", "atomics"});
  add(db, "b", "verified", "stencil", {"atomics"});
  std::string failed = add(db, "c", "failed", "sorting", {"switch"});
  add(db, "d", "pending", "sorting", {"switch"});
  REQUIRE(db.exec("INSERT INTO failure (sample_id, stage, category, top_category, track, origin, created_ms)"
                  " VALUES ('" + failed + "', 'translate.hip', 'translate.unsupported.x', 'translate', 'cuda2hip',"
                  " 'template', 1)").ok());
  CHECK(verified_count(db, "cuda2hip").value() == 2);
  CHECK(verified_count_by_feature(db, "cuda2hip").value() == std::map<std::string, int64_t>{{"atomics", 2}, {"switch", 1}});
  CHECK(verified_count_by_domain(db, "cuda2hip").value().at("stencil") == 2);
  CHECK(features_seen(db, "cuda2hip").value().size() == 2);
  auto yields = yield_by_feature(db, "cuda2hip").value();
  CHECK(yields["switch"].finished == 2);
  CHECK(yields["switch"].failed == 1);
  CHECK(yields["switch"].failed_by_stage["translate"] == 1);
  CHECK(overall_yield(db, "cuda2hip").value().failed == 1);
  // A failure in an excluded category takes its sample out of the yields.
  const std::vector<std::string> excluded = {"translate.unsupported."};
  CHECK(overall_yield(db, "cuda2hip", excluded).value().failed == 0);
  CHECK(overall_yield(db, "cuda2hip", excluded).value().finished == 2);
  CHECK(yield_by_feature(db, "cuda2hip", excluded).value()["switch"].finished == 1);
  CHECK(yield_by_domain(db, "cuda2hip", excluded).value()["sorting"].finished == 0);  // d is pending
  CHECK(yield_by_domain(db, "cuda2hip", {"amd."}).value()["sorting"].failed == 1);
  auto coverage = failure_category_coverage(db, "cuda2hip").value();
  REQUIRE(coverage.size() == 1);
  CHECK(coverage[0].failed_samples == 1);
  std::vector<std::string> seeds = tail_seed_ids(db, "cuda2hip", "feature", "switch", 0, 10).value();
  REQUIRE(seeds.size() == 2);
  CHECK(seeds[0] == failed);  // failing samples first; pending ones never
  CHECK(tail_seed_ids(db, "cuda2hip", "category", "translate.unsupported.x", 0, 10).value() == std::vector{failed});
}

TEST_CASE("a tail report is replaced per cycle and a retrain snapshot is recorded once") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("t.db")).value());
  int64_t cycle = start_cycle(db, 1, 0).value();
  REQUIRE(replace_tail_report(db, cycle, {{1, "feature", "switch", "corpus_share", 0.5, "{}"}}).ok());
  REQUIRE(replace_tail_report(db, cycle, {{1, "domain", "sorting", "pipeline_yield", 0.4, "{\"x\":1}"}}).ok());
  auto rows = tail_report_rows(db, cycle).value();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].name == "sorting");
  RetrainEventRecord event;
  event.cycle_id = cycle;
  event.snapshot_hash = "abc";
  CHECK(insert_retrain_event_if_new(db, event).value().has_value());
  CHECK_FALSE(insert_retrain_event_if_new(db, event).value().has_value());
  CHECK(retrain_snapshot_recorded(db, "abc").value());
}
