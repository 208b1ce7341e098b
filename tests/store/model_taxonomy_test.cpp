// The taxonomy of a model under test (`taxonomy --model A`) and the comparison of two models on
// the items both evaluated (`--compare-model B`), from the evaluation table.
#include <doctest/doctest.h>

#include "store/evaluations.h"
#include "store/failures.h"
#include "store/models.h"
#include "store/samples.h"
#include "test_support/temp_dir.h"

namespace tailforge {
namespace {

constexpr int64_t kHour = 3600000;
constexpr int64_t kNow = 1'700'000'000'000;

struct ModelFixture {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("t.db")).value());
  std::vector<std::string> items;
  int64_t a = add_model("model-a"), b = add_model("model-b");

  ModelFixture() {
    for (int i = 0; i < 12; ++i) {
      Sample s;
      s.track = "cuda2hip";
      s.origin = "template";
      s.language = "cuda";
      s.text = "__global__ void k" + std::to_string(i) + "() {}";
      s.domain = i < 6 ? "simulation" : "machine learning";
      if (i % 2 == 0) s.features = {"shared_memory"};
      s.created_ms = kNow - 100 * kHour;
      Result<InsertOutcome> inserted = insert_sample_if_absent(db, s);
      REQUIRE_MESSAGE(inserted.ok(), inserted.message());
      items.push_back(inserted->id);
    }
  }

  int64_t add_model(const std::string& name) {
    ModelRecord model;
    model.name = name;
    model.kind = "builtin";
    model.created_ms = kNow - 200 * kHour;
    Result<int64_t> id = insert_model(db, model);
    REQUIRE_MESSAGE(id.ok(), id.message());
    return *id;
  }

  void evaluate(int64_t model, int item, const std::string& category = "", const std::string& stage = "",
                int64_t ago_hours = 1) {
    EvaluationRecord e;
    e.model_id = model;
    e.sample_id = items.at(static_cast<size_t>(item));
    e.track = "cuda2hip";
    e.ok = category.empty();
    e.status = e.ok ? "ok" : "fail";
    if (!e.ok) {
      e.category = category;
      e.stage = stage;
      e.message = "error: " + category;
    }
    e.checked = "compare";
    e.created_ms = kNow - ago_hours * kHour;
    Result<bool> stored = insert_evaluation(db, e);
    REQUIRE_MESSAGE(stored.ok(), stored.message());
    REQUIRE(*stored);
  }

  // A: items 0-5 pass, 6 and 7 fail to compile, 8 to assemble, 9 times out; 11 only A evaluated.
  void evaluate_a() {
    for (int i = 0; i < 6; ++i) evaluate(a, i);
    evaluate(a, 6, "amd.compile.undeclared_identifier", "amd.compile.device");
    evaluate(a, 7, "amd.compile.undeclared_identifier", "amd.compile.device", 30);
    evaluate(a, 8, "amd.asm.vgpr_bank", "amd.assemble.gfx1100");
    evaluate(a, 9, "run.timeout", "nvidia.run");
    evaluate(a, 11);
  }

  // B: items 0-4 pass, 5, 6 and 9 time out, 7 fails to compile, 8 to assemble; 10 only B evaluated.
  void evaluate_b() {
    for (int i = 0; i < 5; ++i) evaluate(b, i);
    evaluate(b, 5, "run.timeout", "nvidia.run");
    evaluate(b, 6, "run.timeout", "nvidia.run");
    evaluate(b, 7, "amd.compile.undeclared_identifier", "amd.compile.device");
    evaluate(b, 8, "amd.asm.vgpr_bank", "amd.assemble.gfx1100");
    evaluate(b, 9, "run.timeout", "nvidia.run");
    evaluate(b, 10, "run.timeout", "nvidia.run");
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

const ModelComparisonRow* row(const ModelComparison& c, const std::string& path) {
  for (const ModelComparisonRow& r : c.rows) {
    if (r.path == path) return &r;
  }
  return nullptr;
}

}  // namespace

TEST_CASE_FIXTURE(ModelFixture, "a model's taxonomy counts its failed evaluations with rates of all it evaluated") {
  evaluate_a();
  FailureRecord corpus;  // a corpus failure is not the model's
  corpus.sample_id = items[0];
  corpus.stage = "nvidia.ptx";
  corpus.category = "nvidia.compile.syntax";
  corpus.track = "cuda2hip";
  corpus.origin = "template";
  REQUIRE(insert_failure(db, corpus).ok());

  TaxonomyReport r = report({{"model", "model-a"}});
  CHECK(r.total == 4);
  CHECK(r.evaluated == 11);
  CHECK(r.passed == 7);
  CHECK(r.failed_samples == 4);
  CHECK(node(r, "nvidia") == nullptr);
  REQUIRE(node(r, "amd") != nullptr);
  CHECK(node(r, "amd")->count == 3);
  CHECK(node(r, "amd")->rate == doctest::Approx(3.0 / 11.0));
  CHECK(node(r, "amd")->share_of_all == doctest::Approx(0.75));
  CHECK(node(r, "amd.compile.undeclared_identifier")->count == 2);
  CHECK(node(r, "amd.compile.undeclared_identifier")->share_of_parent == doctest::Approx(1.0));
  CHECK(node(r, "amd.compile.undeclared_identifier")->stages ==
        std::map<std::string, int64_t>{{"amd.compile.device", 2}});
  CHECK(node(r, "run.timeout")->rate == doctest::Approx(1.0 / 11.0));

  nlohmann::json j = taxonomy_report_to_json(r);
  CHECK(j["source"] == "model");
  CHECK(j["model"] == "model-a");
  CHECK(j["total"] == 4);
  CHECK(j["evaluated"] == 11);
  CHECK(j["accuracy"].get<double>() == doctest::Approx(7.0 / 11.0));
  CHECK(j["categories"][0]["path"] == "amd");
  CHECK(j["categories"][0]["rate"].get<double>() == doctest::Approx(3.0 / 11.0));
  CHECK(j["categories"][0]["share_of_failed_evaluations"].get<double>() == doctest::Approx(0.75));
  CHECK_FALSE(j["categories"][0].contains("share_of_failures"));
  std::string table = format_taxonomy_table(r);
  CHECK(table.find("model model-a: 4 failed of 11 evaluated (rate 36.4%), accuracy 63.6%") != std::string::npos);
  CHECK(table.find("  compile") != std::string::npos);
}

TEST_CASE_FIXTURE(ModelFixture, "a model's taxonomy filters by first failing stage, time and the item's sample") {
  evaluate_a();
  TaxonomyReport amd = report({{"model", "model-a"}, {"stage", "amd."}});
  CHECK(amd.total == 3);
  CHECK(amd.evaluated == 11);  // the stage selects failures, not what was evaluated
  CHECK(report({{"model", "model-a"}, {"since", "24h"}}).total == 3);
  CHECK(report({{"model", "model-a"}, {"since", "24h"}}).evaluated == 10);
  CHECK(report({{"model", "model-a"}, {"feature", "shared_memory"}}).total == 2);  // items 6 and 8
  TaxonomyReport simulation = report({{"model", "model-a"}, {"domain", "simulation"}});
  CHECK(simulation.total == 0);
  CHECK(simulation.evaluated == 6);
  CHECK(report({{"model", "model-a"}, {"origin", "template"}}).total == 4);
  CHECK(report({{"model", "model-a"}, {"track", "c2x86"}}).evaluated == 0);

  TaxonomyReport detail = report({{"model", "model-a"}, {"trend", "hour"}, {"examples", "1"}});
  int64_t trend_sum = 0;
  for (const TrendPoint& p : detail.trend) trend_sum += p.count;
  CHECK(trend_sum == 4);
  REQUIRE(detail.examples["amd.compile.undeclared_identifier"].size() == 1);
  CHECK(detail.examples["amd.compile.undeclared_identifier"][0].sample_id == items[6]);  // the most recent
  CHECK(detail.examples["amd.compile.undeclared_identifier"][0].stage == "amd.compile.device");
}

TEST_CASE_FIXTURE(ModelFixture, "comparing two models counts only the items both evaluated") {
  evaluate_a();
  evaluate_b();
  TaxonomyReport r = report({{"model", "model-a"}, {"compare_model", "model-b"}});
  CHECK(r.total == 4);  // the main tree is still A's
  REQUIRE(r.model_comparison.has_value());
  const ModelComparison& c = *r.model_comparison;
  CHECK(c.model_a == "model-a");
  CHECK(c.model_b == "model-b");
  CHECK(c.common_items == 10);  // not A's item 11, not B's item 10
  CHECK(c.passed_a == 6);
  CHECK(c.passed_b == 5);
  CHECK(c.failed_a == 4);
  CHECK(c.failed_b == 5);
  CHECK(c.accuracy_a == doctest::Approx(0.6));
  CHECK(c.accuracy_b == doctest::Approx(0.5));
  REQUIRE(row(c, "run.timeout") != nullptr);
  CHECK(row(c, "run.timeout")->count_a == 1);
  CHECK(row(c, "run.timeout")->count_b == 3);  // B's timeout on item 10 is not compared
  CHECK(row(c, "run.timeout")->rate_b == doctest::Approx(0.3));
  CHECK(row(c, "amd")->count_a == 3);
  CHECK(row(c, "amd")->count_b == 2);
  CHECK(row(c, "amd.asm.vgpr_bank")->delta == 0);
  CHECK(c.rows.front().path == "run");  // largest growth first
  CHECK(c.rows.front().delta == 2);
  CHECK(c.rows.back().path == "amd.compile.undeclared_identifier");
  CHECK(c.rows.back().delta == -1);

  nlohmann::json j = taxonomy_report_to_json(r);
  CHECK(j["model_comparison"]["common_items"] == 10);
  CHECK(j["model_comparison"]["model_b"] == "model-b");
  CHECK(j["model_comparison"]["rows"][0]["path"] == "run");
  CHECK(j["model_comparison"]["rows"][0]["rate_b"].get<double>() == doctest::Approx(0.3));
  CHECK(j["filters"]["compare_model"] == "model-b");
  std::string table = format_taxonomy_table(r);
  CHECK(table.find("model comparison on 10 items both evaluated: A = model-a (accuracy 60.0%), B = model-b "
                   "(accuracy 50.0%)") != std::string::npos);

  TaxonomyReport amd = report({{"model", "model-a"}, {"compare_model", "model-b"}, {"stage", "amd."}});
  CHECK(amd.model_comparison->common_items == 10);
  CHECK(row(*amd.model_comparison, "run") == nullptr);
  CHECK(amd.model_comparison->failed_b == 2);
  TaxonomyReport recent = report({{"model", "model-a"}, {"compare_model", "model-b"}, {"since", "24h"}});
  CHECK(recent.model_comparison->common_items == 9);  // A evaluated item 7 30 hours ago
}

TEST_CASE_FIXTURE(ModelFixture, "an unknown model, or compare_model without model, is an error naming it") {
  evaluate_a();
  Result<TaxonomyQuery> unknown = taxonomy_query_from_args({{"model", "nobody-v9"}}, kNow);
  REQUIRE(unknown.ok());
  Result<TaxonomyReport> r = taxonomy_report(db, *unknown);
  REQUIRE_FALSE(r.ok());
  CHECK(r.message().find("'nobody-v9'") != std::string::npos);
  Result<TaxonomyQuery> unknown_b = taxonomy_query_from_args({{"model", "model-a"}, {"compare_model", "ghost"}}, kNow);
  REQUIRE(unknown_b.ok());
  Result<TaxonomyReport> r_b = taxonomy_report(db, *unknown_b);
  REQUIRE_FALSE(r_b.ok());
  CHECK(r_b.message().find("'ghost'") != std::string::npos);

  Result<TaxonomyQuery> alone = taxonomy_query_from_args({{"compare_model", "model-b"}}, kNow);
  REQUIRE_FALSE(alone.ok());
  CHECK(alone.message().find("compare_model=model-b needs model") != std::string::npos);
  TaxonomyQuery built;
  built.compare_model = "model-b";
  Result<TaxonomyReport> r_built = taxonomy_report(db, built);
  REQUIRE_FALSE(r_built.ok());
  CHECK(r_built.message().find("compare_model") != std::string::npos);
}

TEST_CASE("compare_model is the key CLI flags and HTTP parameters share; compare_models is gone") {
  // `tailforge taxonomy --model A --compare-model B` and GET /v1/taxonomy?model=A&compare_model=B.
  Result<TaxonomyQuery> q = taxonomy_query_from_args({{"model", "v1"}, {"compare_model", "v2"}}, kNow);
  REQUIRE(q.ok());
  CHECK(q->model == "v1");
  CHECK(q->compare_model == "v2");
  Result<TaxonomyQuery> old = taxonomy_query_from_args({{"compare_models", "v1,v2"}}, kNow);
  REQUIRE_FALSE(old.ok());
  CHECK(old.message().find("unknown taxonomy option 'compare_models'") != std::string::npos);
  CHECK_FALSE(
      taxonomy_query_from_args({{"model", "v1"}, {"compare_model", "v2"}, {"compare_since", "24h"}}, kNow).ok());
  CHECK_FALSE(taxonomy_query_from_args({{"model", ""}}, kNow).ok());
}

}  // namespace tailforge
