#include <doctest/doctest.h>

#include "store/evaluations.h"
#include "store/models.h"
#include "store/samples.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

std::string add_verified(Database& db, int index) {
  Sample sample;
  sample.track = "cuda2hip";
  sample.origin = "template";
  sample.language = "cuda";
  sample.text = "__global__ void k(int* p) { p[0] = " + std::to_string(index) + "; }\n";
  sample.status = "verified";
  sample.features = {index % 2 ? "atomics" : "switch"};
  sample.domain = index % 3 ? "histogram" : "reduction";
  return insert_sample_if_absent(db, sample).value().id;
}

int64_t add_model(Database& db, const std::string& name) {
  ModelRecord model;
  model.name = name;
  model.kind = "builtin";
  return insert_model(db, model).value();
}

EvaluationRecord verdict(int64_t model, const std::string& sample, bool ok) {
  EvaluationRecord e;
  e.model_id = model;
  e.sample_id = sample;
  e.track = "cuda2hip";
  e.ok = ok;
  e.status = ok ? "ok" : "fail";
  if (!ok) {
    e.stage = "amd.asm.gfx1100";
    e.category = "amd.compile.undeclared_identifier";
    e.message = "error: use of undeclared identifier 'cudaMemcpyToSymbol'";
  }
  e.checked = "compile";
  e.stages = {{"answer", "ok", std::nullopt, std::nullopt, 0.1, false},
              {"amd.asm.gfx1100", ok ? "ok" : "fail", e.category, e.message, 1.5, false}};
  return e;
}

}  // namespace

TEST_CASE("evaluation candidates are verified samples that are neither items nor ever trained on") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("t.db")).value());
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i) ids.push_back(add_verified(db, i));
  REQUIRE(add_eval_items(db, {{"cuda2hip", ids[0], 1, std::nullopt, std::nullopt, 0}}).ok());
  REQUIRE(record_trained_samples(db, "snapshot-a", {ids[1], ids[2]}).ok());
  REQUIRE(record_trained_samples(db, "snapshot-b", {ids[2]}).ok());  // the first export is kept
  std::vector<std::string> candidates = eval_candidate_ids(db, "cuda2hip").value();
  CHECK(candidates.size() == 3);
  for (const std::string& id : candidates) CHECK((id != ids[0] && id != ids[1] && id != ids[2]));
  int trained = 0;
  REQUIRE(for_each_trained_sample_text(db, "cuda2hip", [&](const std::string&, const std::string&) { ++trained; }).ok());
  CHECK(trained == 2);
  CHECK(eval_set_version(db, "cuda2hip").value() == 1);
  CHECK(eval_set_size(db, "cuda2hip").value() == 1);
  CHECK(eval_set_version(db, "c2x86").value() == 0);
}

TEST_CASE("a model has one evaluation per item: a second one is not stored, its stage rows stay detail") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("t.db")).value());
  std::string a = add_verified(db, 1), b = add_verified(db, 2), c = add_verified(db, 3);
  REQUIRE(add_eval_items(db, {{"cuda2hip", a, 1, std::nullopt, std::nullopt, 0},
                              {"cuda2hip", b, 1, std::nullopt, std::nullopt, 0},
                              {"cuda2hip", c, 2, std::nullopt, std::nullopt, 0}})
              .ok());
  int64_t v1 = add_model(db, "v1");
  CHECK(items_without_evaluation(db, v1, "cuda2hip").value() == std::vector<std::string>{std::min(a, b), std::max(a, b), c});
  CHECK(insert_evaluation(db, verdict(v1, a, false)).value());
  CHECK_FALSE(insert_evaluation(db, verdict(v1, a, true)).value());
  CHECK(insert_evaluation(db, verdict(v1, c, true)).value());
  CHECK(items_without_evaluation(db, v1, "cuda2hip").value() == std::vector<std::string>{b});

  Result<std::optional<EvaluationRecord>> found = find_evaluation(db, v1, a);
  REQUIRE_MESSAGE(found.ok(), found.message());
  std::optional<EvaluationRecord> stored = *found;
  REQUIRE(stored);
  CHECK_FALSE(stored->ok);
  CHECK(stored->category == "amd.compile.undeclared_identifier");
  CHECK(stored->stages.size() == 2);
  CHECK(stored->stages[1].status == "fail");

  std::vector<EvaluationOutcome> outcomes = evaluation_outcomes(db, v1).value();
  REQUIRE(outcomes.size() == 2);
  CHECK(outcomes[0].sample_id == a);
  CHECK(outcomes[0].version == 1);
  CHECK(outcomes[1].version == 2);
  CHECK(items_failed_with(db, v1, "amd.compile").value() == std::set<std::string>{a});
  CHECK(items_failed_with(db, v1, "amd.comp").value().empty());
  std::set<std::string> atomics = eval_items_with(db, "cuda2hip", "feature", "atomics").value();
  CHECK(atomics == std::set<std::string>{a, c});
  CHECK(eval_items_with(db, "cuda2hip", "domain", "reduction").value() == std::set<std::string>{c});
  CHECK_FALSE(eval_items_with(db, "cuda2hip", "colour", "red").ok());
}
