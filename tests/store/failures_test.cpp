#include "store/failures.h"

#include <doctest/doctest.h>

#include <sqlite3.h>

#include "store/samples.h"
#include "store/schema.h"
#include "test_support/query.h"
#include "test_support/temp_dir.h"

namespace tailforge {
namespace {

constexpr int64_t kHour = 3600000;
constexpr int64_t kNow = 1'700'000'000'000;  // a fixed "now" keeps windows exact

struct FailureFixture {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("t.db")).value());

  std::string sample(const std::string& text, const std::string& track, const std::vector<std::string>& features = {}) {
    Sample s;
    s.track = track;
    s.origin = "template";
    s.language = "cuda";
    s.text = text;
    s.features = features;
    s.created_ms = kNow - 100 * kHour;
    Result<InsertOutcome> inserted = insert_sample_if_absent(db, s);
    REQUIRE_MESSAGE(inserted.ok(), inserted.message());
    return inserted->id;
  }

  void fail(const std::string& sample_id, const std::string& stage, const std::string& category, int64_t ago_hours,
            const std::string& track = "cuda2hip", const std::string& message = "error") {
    FailureRecord f;
    f.sample_id = sample_id;
    f.stage = stage;
    f.category = category;
    f.message = message;
    f.track = track;
    f.origin = "template";
    f.domain = "simulation";
    f.created_ms = kNow - ago_hours * kHour;
    Status s = insert_failure(db, f);
    REQUIRE_MESSAGE(s.ok(), s.message());
  }

  TaxonomyReport report(const std::map<std::string, std::string>& args) {
    Result<TaxonomyQuery> q = taxonomy_query_from_args(args, kNow);
    REQUIRE_MESSAGE(q.ok(), q.message());
    Result<TaxonomyReport> r = taxonomy_report(db, *q);
    REQUIRE_MESSAGE(r.ok(), r.message());
    return std::move(r.value());
  }
};

const CategoryNode* node(const TaxonomyReport& r, const std::string& path) {
  for (const CategoryNode& n : r.tree) {
    if (n.path == path) return &n;
  }
  return nullptr;
}

}  // namespace

TEST_CASE_FIXTURE(FailureFixture, "the tree rolls counts up to parents with shares of all and of the parent") {
  REQUIRE(upsert_categories(db, {{"amd", "AMD"}, {"amd.asm", "asm"}, {"amd.asm.vgpr_bank", "banks"}}).ok());
  std::string a = sample("a", "cuda2hip"), b = sample("b", "cuda2hip"), c = sample("c", "cuda2hip"), d = sample("d", "c2x86");
  fail(a, "amd.assemble.gfx1100", "amd.asm.vgpr_bank", 1);
  fail(b, "amd.assemble.gfx1100", "amd.asm.vgpr_bank", 1);
  fail(c, "amd.assemble.gfx1100", "amd.asm.literal_limit", 1);
  fail(d, "x86.run", "run.crash.sigsegv", 1, "c2x86");
  TaxonomyReport r = report({});
  CHECK(r.total == 4);
  REQUIRE(node(r, "amd") != nullptr);
  CHECK(node(r, "amd")->count == 3);
  CHECK(node(r, "amd")->share_of_all == doctest::Approx(0.75));
  CHECK(node(r, "amd")->description == "AMD");
  CHECK(node(r, "amd.asm.vgpr_bank")->count == 2);
  CHECK(node(r, "amd.asm.vgpr_bank")->depth == 2);
  CHECK(node(r, "amd.asm.vgpr_bank")->share_of_parent == doctest::Approx(2.0 / 3.0));
  CHECK(node(r, "run.crash")->share_of_parent == doctest::Approx(1.0));
  CHECK(r.tree.front().path == "amd");  // largest first, parents before children
  CHECK(r.tree[1].path == "amd.asm");

  std::string table = format_taxonomy_table(r);
  CHECK(table.find("failures: 4") != std::string::npos);
  CHECK(table.find("    vgpr_bank") != std::string::npos);
  CHECK(table.find("66.7%") != std::string::npos);
  nlohmann::json j = taxonomy_report_to_json(r);
  CHECK(j["total"] == 4);
  CHECK(j["categories"].size() == r.tree.size());
}

TEST_CASE_FIXTURE(FailureFixture, "a second failure of the same sample and stage replaces the first") {
  std::string a = sample("a", "cuda2hip");
  fail(a, "amd.assemble.gfx1100", "amd.assemble.gfx1100.uncategorized", 1);
  fail(a, "amd.assemble.gfx1100", "amd.asm.directive", 1);
  TaxonomyReport r = report({});
  CHECK(r.total == 1);
  CHECK(node(r, "amd.asm.directive") != nullptr);
  CHECK(node(r, "amd.assemble") == nullptr);
}

TEST_CASE_FIXTURE(FailureFixture, "filters by stage prefix, track, feature and the since window") {
  std::string a = sample("a", "cuda2hip", {"shared_memory"}), b = sample("b", "cuda2hip"), c = sample("c", "c2x86");
  fail(a, "amd.assemble.gfx1100", "amd.asm.vgpr_bank", 1);
  fail(a, "nvidia.ptx", "nvidia.compile.syntax", 30);
  fail(b, "amd.assemble.gfx1100", "amd.asm.vgpr_bank", 50);
  fail(c, "x86.run", "run.timeout", 2, "c2x86");
  CHECK(report({{"stage", "amd."}}).total == 2);
  CHECK(report({{"stage", "amd."}}).failed_samples == 2);
  CHECK(report({{"track", "c2x86"}}).total == 1);
  CHECK(report({{"feature", "shared_memory"}}).total == 2);
  CHECK(report({{"feature", "shared_memory"}}).failed_samples == 1);
  CHECK(report({{"since", "24h"}}).total == 2);
  CHECK(report({{"since", "48h"}}).total == 3);
  CHECK(report({{"since", "48h"}, {"until", "24h"}}).total == 1);
  CHECK(report({{"domain", "graphics and image"}}).total == 0);
  CHECK(report({{"origin", "template"}, {"since", "7d"}}).total == 4);
}

TEST_CASE_FIXTURE(FailureFixture, "the trend counts per hour and per day by top category") {
  std::string a = sample("a", "cuda2hip"), b = sample("b", "cuda2hip"), c = sample("c", "cuda2hip");
  fail(a, "amd.assemble.gfx1100", "amd.asm.vgpr_bank", 1);
  fail(b, "amd.assemble.gfx1100", "amd.asm.literal_limit", 1);
  fail(c, "nvidia.run", "run.timeout", 3);
  TaxonomyReport hourly = report({{"trend", "hour"}});
  REQUIRE(hourly.trend.size() == 2);
  CHECK(hourly.trend[0].top_category == "run");
  CHECK(hourly.trend[1].top_category == "amd");
  CHECK(hourly.trend[1].count == 2);
  CHECK(hourly.trend[1].bucket_ms - hourly.trend[0].bucket_ms == 2 * kHour);
  TaxonomyReport daily = report({{"trend", "day"}});
  int64_t sum = 0;
  for (const TrendPoint& p : daily.trend) sum += p.count;
  CHECK(sum == 3);
  CHECK(taxonomy_report_to_json(daily)["trend"]["bucket"] == "day");
}

TEST_CASE_FIXTURE(FailureFixture, "examples are the most recent failures of each category") {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(sample("s" + std::to_string(i), "cuda2hip"));
  for (int i = 0; i < 5; ++i) fail(ids[i], "amd.assemble.gfx1100", "amd.asm.undefined_label", i + 1, "cuda2hip", "msg " + std::to_string(i));
  TaxonomyReport r = report({{"examples", "2"}});
  REQUIRE(r.examples["amd.asm.undefined_label"].size() == 2);
  CHECK(r.examples["amd.asm.undefined_label"][0].sample_id == ids[0]);
  CHECK(r.examples["amd.asm.undefined_label"][1].message == "msg 1");
}

TEST_CASE_FIXTURE(FailureFixture, "comparing two windows shows what grew and what shrank") {
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(sample("s" + std::to_string(i), "cuda2hip"));
  fail(ids[0], "amd.assemble.gfx1100", "amd.asm.vgpr_bank", 50);  // old window
  fail(ids[1], "amd.assemble.gfx1100", "amd.asm.vgpr_bank", 50);
  fail(ids[2], "nvidia.run", "run.timeout", 50);
  fail(ids[3], "nvidia.run", "run.timeout", 2);  // new window
  fail(ids[4], "nvidia.run", "run.timeout", 2);
  fail(ids[5], "nvidia.run", "run.timeout", 2);
  fail(ids[5], "amd.run", "run.timeout", 2);  // the same failure at a second stage: not a second failure
  TaxonomyReport windows = report({{"since", "72h"}, {"until", "24h"}, {"compare_since", "24h"}});
  CHECK(windows.compare_total_a == 3);
  CHECK(windows.compare_total_b == 3);
  REQUIRE_FALSE(windows.comparison.empty());
  CHECK(windows.comparison.front().path == "run");  // grew the most
  CHECK(windows.comparison.front().delta == 2);
  CHECK(windows.comparison.back().delta == -2);  // amd / amd.asm / vgpr_bank shrank
  CHECK(taxonomy_report_to_json(windows)["comparison"]["rows"][0]["path"] == "run");
  CHECK(format_taxonomy_table(windows).find("comparison: A = main window (3)") != std::string::npos);
}

TEST_CASE_FIXTURE(FailureFixture, "uncategorized messages are clustered by their normalized text") {
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(sample("s" + std::to_string(i), "cuda2hip"));
  fail(ids[0], "amd.assemble.gfx1100", "amd.assemble.gfx1100.uncategorized", 1, "cuda2hip", "/tmp/a/k.s:3:1: error: weird 'x1'");
  fail(ids[1], "amd.assemble.gfx1100", "amd.assemble.gfx1100.uncategorized", 1, "cuda2hip", "/tmp/b/q.s:9:4: error: weird 'y'");
  fail(ids[2], "nvidia.ptx", "nvidia.ptx.uncategorized", 1, "cuda2hip", "other thing 42");
  fail(ids[3], "nvidia.ptx", "nvidia.compile.syntax", 1);
  TaxonomyReport r = report({});
  REQUIRE(r.uncategorized_clusters.size() == 2);
  CHECK(r.uncategorized_clusters[0].count == 2);
  CHECK(r.uncategorized_clusters[0].normalized == "<path>:<n>:<n>: error: weird '<id>'");
  CHECK(r.uncategorized_clusters[1].normalized == "other thing <n>");
}

TEST_CASE("query options parse durations and refuse bad values with the key named") {
  Result<TaxonomyQuery> q = taxonomy_query_from_args({{"since", "48h"}, {"until", "30m"}, {"compare_since", "7d"},
                                                      {"examples", "3"}, {"trend", "day"}, {"stage", "amd."}},
                                                     kNow);
  REQUIRE(q.ok());
  CHECK(*q->since_ms == kNow - 48 * kHour);
  CHECK(*q->until_ms == kNow - 30 * 60000);
  CHECK(*q->compare_since_ms == kNow - 7 * 24 * kHour);
  CHECK(q->examples == 3);
  CHECK(q->stage_prefix == "amd.");
  CHECK(*taxonomy_query_from_args({{"since", "1699999999000"}}, kNow)->since_ms == 1699999999000);
  Result<TaxonomyQuery> bad = taxonomy_query_from_args({{"since", "48x"}}, kNow);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message().find("since=48x") != std::string::npos);
  CHECK_FALSE(taxonomy_query_from_args({{"trend", "week"}}, kNow).ok());
  CHECK_FALSE(taxonomy_query_from_args({{"bogus", "1"}}, kNow).ok());
}

TEST_CASE_FIXTURE(FailureFixture, "a sample failing two stages with one category is one failure, with both stage rows as detail") {
  REQUIRE(upsert_categories(db, {{"amd.compile", "HIP compile"}}).ok());
  std::string a = sample("a", "cuda2hip"), b = sample("b", "cuda2hip");
  fail(a, "amd.compile.device", "amd.compile.undeclared_identifier", 3);  // device and host compile: one failure
  fail(a, "amd.compile.host", "amd.compile.undeclared_identifier", 3);
  fail(a, "amd.assemble.gfx1100", "amd.asm.vgpr_bank", 2);  // a second category of the same sample
  fail(b, "amd.compile.device", "amd.compile.undeclared_identifier", 1);
  TaxonomyReport r = report({});
  CHECK(r.total == 3);  // (a, undeclared_identifier), (a, vgpr_bank), (b, undeclared_identifier)
  CHECK(r.failed_samples == 2);
  REQUIRE(node(r, "amd.compile.undeclared_identifier") != nullptr);
  CHECK(node(r, "amd.compile.undeclared_identifier")->count == 2);
  CHECK(node(r, "amd.compile")->count == 2);
  CHECK(node(r, "amd.asm")->count == 1);
  CHECK(node(r, "amd")->count == 3);  // parents roll up their children's failures
  CHECK(node(r, "amd")->share_of_all == doctest::Approx(1.0));
  CHECK(node(r, "amd.compile")->share_of_parent == doctest::Approx(2.0 / 3.0));
  std::map<std::string, int64_t> stages = {{"amd.compile.device", 2}, {"amd.compile.host", 1}};
  CHECK(node(r, "amd.compile.undeclared_identifier")->stages == stages);
  CHECK(node(r, "amd.compile")->stages.empty());  // no failures of its own

  nlohmann::json j = taxonomy_report_to_json(r);
  CHECK(j["source"] == "corpus");
  CHECK(j["total"] == 3);
  CHECK(j["failed_samples"] == 2);
  for (const nlohmann::json& category : j["categories"]) {
    CHECK(category.contains("share_of_failures"));
    CHECK_FALSE(category.contains("share"));
    if (category["path"] == "amd.compile.undeclared_identifier") {
      CHECK(category["stages"]["amd.compile.host"] == 1);
      CHECK(category["count"] == 2);
    }
  }
  std::string table = format_taxonomy_table(r);
  CHECK(table.find("failures: 3 (distinct sample x category) in 2 failed samples") != std::string::npos);
  CHECK(table.find("% failures") != std::string::npos);

  TaxonomyReport examples = report({{"examples", "5"}});  // examples stay stage rows, with their stage
  CHECK(examples.examples["amd.compile.undeclared_identifier"].size() == 3);
  TaxonomyReport hourly = report({{"trend", "hour"}});
  int64_t trend_sum = 0;
  for (const TrendPoint& p : hourly.trend) trend_sum += p.count;
  CHECK(trend_sum == 3);  // the trend counts failures too, each at its first stage row
}

TEST_CASE_FIXTURE(FailureFixture, "filters select a failure by its first stage row; failed samples are distinct under them") {
  std::string a = sample("a", "cuda2hip"), b = sample("b", "cuda2hip");
  fail(a, "amd.compile.device", "amd.compile.undeclared_identifier", 30);
  fail(a, "amd.compile.host", "amd.compile.undeclared_identifier", 30);
  fail(a, "nvidia.run", "run.timeout", 2);  // a's second category, recorded later
  fail(b, "amd.compile.device", "amd.compile.undeclared_identifier", 2);
  fail(b, "nvidia.run", "run.timeout", 2);
  TaxonomyReport device = report({{"stage", "amd.compile.device"}});
  CHECK(device.total == 2);
  CHECK(device.failed_samples == 2);
  TaxonomyReport host = report({{"stage", "amd.compile.host"}});
  CHECK(host.total == 0);  // a's host row repeats the failure first seen at the device compile
  TaxonomyReport recent = report({{"since", "24h"}});
  CHECK(recent.total == 3);  // (a, run.timeout), (b, undeclared_identifier), (b, run.timeout)
  CHECK(recent.failed_samples == 2);
  TaxonomyReport older = report({{"until", "24h"}});
  CHECK(older.total == 1);
  CHECK(older.failed_samples == 1);
  CHECK(report({{"stage", "nvidia."}}).failed_samples == 2);
}

TEST_CASE_FIXTURE(FailureFixture, "re-categorizing a stage row moves which row counts the failure") {
  std::string a = sample("a", "cuda2hip");
  fail(a, "amd.compile.device", "amd.compile.undeclared_identifier", 2);
  fail(a, "amd.compile.host", "amd.compile.undeclared_identifier", 1);
  CHECK(report({}).total == 1);
  fail(a, "amd.compile.host", "amd.compile.no_matching_function", 1);
  TaxonomyReport two = report({});
  CHECK(two.total == 2);
  CHECK(two.failed_samples == 1);
  fail(a, "amd.compile.device", "amd.compile.no_matching_function", 2);
  TaxonomyReport one = report({});
  CHECK(one.total == 1);
  CHECK(node(one, "amd.compile.undeclared_identifier") == nullptr);
  CHECK(node(one, "amd.compile.no_matching_function")->stages.size() == 2);
  CHECK(report({{"stage", "amd.compile.device"}}).total == 1);
}

TEST_CASE("failures stored before schema version 5 are counted once per sample and category after the upgrade") {
  TempDir dir;
  std::string path = dir.file("v4.db");
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
  for (const Migration& migration : schema_migrations()) {
    if (migration.version > 4) break;
    REQUIRE(sqlite3_exec(raw, migration.sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  }
  const char* rows = R"sql(
    PRAGMA user_version = 4;
    INSERT INTO sample (id, track, origin, language, text, created_ms) VALUES
      ('a', 'cuda2hip', 'template', 'cuda', 'a', 1), ('b', 'cuda2hip', 'template', 'cuda', 'b', 1);
    INSERT INTO failure (sample_id, stage, category, top_category, track, origin, created_ms) VALUES
      ('a', 'amd.compile.device', 'amd.compile.undeclared_identifier', 'amd', 'cuda2hip', 'template', 10),
      ('a', 'amd.compile.host', 'amd.compile.undeclared_identifier', 'amd', 'cuda2hip', 'template', 11),
      ('a', 'nvidia.run', 'run.timeout', 'run', 'cuda2hip', 'template', 12),
      ('b', 'amd.compile.host', 'amd.compile.undeclared_identifier', 'amd', 'cuda2hip', 'template', 13);
  )sql";
  REQUIRE(sqlite3_exec(raw, rows, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
  Result<Database> db = Database::open(path);
  REQUIRE_MESSAGE(db.ok(), db.message());
  Result<TaxonomyReport> r = taxonomy_report(*db, TaxonomyQuery{});
  REQUIRE_MESSAGE(r.ok(), r.message());
  CHECK(r->total == 3);
  CHECK(r->failed_samples == 2);
  CHECK(query_int(*db, "SELECT novelty FROM failure WHERE sample_id = 'a' AND stage = 'amd.compile.host'") == 0);
  CHECK(query_int(*db, "SELECT novelty FROM failure WHERE sample_id = 'a' AND stage = 'nvidia.run'") == 1);
}

}  // namespace tailforge
