#include <doctest/doctest.h>

#include <fstream>

#include "agents/generator/generator.h"
#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "store/evaluations.h"
#include "store/samples.h"
#include "synth/eval_set.h"
#include "synth/export.h"
#include "synth/minhash.h"
#include "synth/model_registry.h"
#include "synth/model_report.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

struct Corpus {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  GeneratorCatalog catalog = std::move(load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value());
  HipifyRules rules = std::move(load_hipify_rules(std::string(TAILFORGE_SOURCE_DIR) + "/policies/hipify_rules.json").value());
  SynthPolicy synth = std::move(load_default_synth_policy(TAILFORGE_SOURCE_DIR).value());
  // These tests follow the hash draw and the exact near-duplicate rule; the minimums per API
  // family and tree have their own test (api_coverage_test.cpp).
  EvalPolicy eval = [] {
    EvalPolicy policy;
    policy.min_items_per_family = 0;
    policy.min_items_per_tree = 0;
    return policy;
  }();

  // A verified cuda2hip sample with its HIP, as the verify job stores it; false when the rule
  // translator refuses the program.
  bool add(const std::string& cuda, std::string* id = nullptr) {
    TranslationResult hip = translate_cuda_to_hip(rules, cuda);
    if (!hip.ok) return false;
    Sample sample;
    sample.track = "cuda2hip";
    sample.origin = "template";
    sample.language = "cuda";
    sample.text = cuda;
    sample.status = "verified";
    Result<InsertOutcome> inserted = insert_sample_if_absent(db, sample);
    REQUIRE(inserted.ok());
    REQUIRE(insert_artifact(db, inserted->id, {"translate.hip", "hip:source.hip", "hip", hip.hip_source}).ok());
    if (id) *id = inserted->id;
    return true;
  }

  // Generated programs seeded seed, seed+1, ...; returns their sources.
  std::vector<std::string> add_generated(uint64_t seed, int count) {
    std::vector<std::string> sources;
    for (uint64_t s = seed; sources.size() < static_cast<size_t>(count); ++s) {
      GenerationRequest request;
      request.seed = s;
      Result<GeneratedProgram> program = generate_program(catalog, request);
      REQUIRE(program.ok());
      if (add(program->source)) sources.push_back(program->source);
    }
    return sources;
  }

  std::string text_of(const std::string& id) { return find_sample(db, id).value()->text; }
};

// A near-duplicate of a program: one comment line more.
std::string variant_of(const std::string& source) { return "// a variant of a stored program\n" + source; }

std::vector<std::string> snapshot_sources(const std::string& dir) {
  std::ifstream in(dir + "/train.json");
  nlohmann::json rows = nlohmann::json::parse(in);
  std::vector<std::string> sources;
  for (const nlohmann::json& row : rows) sources.push_back(row["input"].get<std::string>());
  return sources;
}

// Every training row of every snapshot against every evaluation item: no exact and no MinHash
// near-duplicate.
void check_disjoint(Corpus& corpus, const std::vector<std::string>& snapshot_dirs) {
  NearDuplicateIndex items(corpus.synth.dedup);
  std::set<std::string> item_texts;
  std::vector<EvalItem> all = list_eval_items(corpus.db, "cuda2hip").value();
  for (const EvalItem& item : all) {
    item_texts.insert(normalize_program_text(corpus.text_of(item.sample_id)));
    items.add(corpus.text_of(item.sample_id));
  }
  REQUIRE_FALSE(item_texts.empty());
  int rows = 0;
  for (const std::string& dir : snapshot_dirs) {
    for (const std::string& source : snapshot_sources(dir)) {
      ++rows;
      CHECK_FALSE(item_texts.count(normalize_program_text(source)));
      CHECK_FALSE(items.find_near_duplicate(source).has_value());
    }
  }
  CHECK(rows > 0);
}

}  // namespace

TEST_CASE("the evaluation set and every training snapshot share no exact or near-duplicate sample") {
  Corpus corpus;
  std::vector<std::string> first = corpus.add_generated(100, 30);
  EvalSetRefresh refresh = refresh_eval_set(corpus.db, corpus.eval, corpus.synth, "cuda2hip").value();
  CHECK(refresh.version == 1);
  CHECK(refresh.added > 3);
  CHECK(refresh.added < 20);
  // Near-duplicates of items arrive later (a synthesized sibling, say): exports hold them back.
  int variants = 0;
  std::vector<EvalItem> first_items = list_eval_items(corpus.db, "cuda2hip").value();
  for (const EvalItem& item : first_items) {
    variants += corpus.add(variant_of(corpus.text_of(item.sample_id)));
  }
  REQUIRE(variants > 0);

  ExportOptions options{"cuda2hip", "alpaca", corpus.dir.file("snapshot-1"), corpus.synth};
  ExportSummary one = export_dataset(corpus.db, options).value();
  CHECK(one.held_back_for_evaluation >= refresh.added + variants);
  CHECK(one.train_samples > 0);

  // More data: the set grows at version 2, never taking a trained sample or a near-duplicate of one.
  corpus.add_generated(500, 20);
  int trained_variants = 0;
  for (const std::string& id : one.train_ids) {
    if (trained_variants < 8) trained_variants += corpus.add(variant_of(corpus.text_of(id)));
  }
  EvalSetRefresh second = refresh_eval_set(corpus.db, corpus.eval, corpus.synth, "cuda2hip").value();
  CHECK(second.version == 2);
  CHECK(second.added > 0);
  std::set<std::string> trained(one.train_ids.begin(), one.train_ids.end());
  std::vector<EvalItem> second_items = list_eval_items(corpus.db, "cuda2hip").value();
  for (const EvalItem& item : second_items) CHECK_FALSE(trained.count(item.sample_id));

  options.out_dir = corpus.dir.file("snapshot-2");
  export_dataset(corpus.db, options).value();
  check_disjoint(corpus, {corpus.dir.file("snapshot-1"), corpus.dir.file("snapshot-2")});
}

TEST_CASE("the evaluation set is chosen the same way every time, grows only, and stops at its cap") {
  Corpus a, b;
  a.add_generated(7, 20);
  b.add_generated(7, 20);
  refresh_eval_set(a.db, a.eval, a.synth, "cuda2hip").value();
  refresh_eval_set(b.db, b.eval, b.synth, "cuda2hip").value();
  std::vector<EvalItem> items_a = list_eval_items(a.db, "cuda2hip").value();
  std::vector<EvalItem> items_b = list_eval_items(b.db, "cuda2hip").value();
  REQUIRE(items_a.size() == items_b.size());
  for (size_t i = 0; i < items_a.size(); ++i) {
    CHECK(items_a[i].sample_id == items_b[i].sample_id);
    CHECK(items_a[i].reference_target_id.has_value());  // the oracle's HIP is the reference answer
    CHECK(selected_for_evaluation(items_a[i].sample_id, a.eval.fraction));
  }
  // Nothing new: no new version.
  EvalSetRefresh again = refresh_eval_set(a.db, a.eval, a.synth, "cuda2hip").value();
  CHECK(again.added == 0);
  CHECK(again.version == 1);

  a.eval.max_items = static_cast<int64_t>(items_a.size()) + 1;
  a.add_generated(1000, 30);
  EvalSetRefresh capped = refresh_eval_set(a.db, a.eval, a.synth, "cuda2hip").value();
  CHECK(capped.added == 1);
  CHECK(capped.size == a.eval.max_items);
}

TEST_CASE("eval section keys are checked") {
  CHECK(eval_policy_from_json(nlohmann::json::parse(R"({"fraction": 0.2, "max_items": 10})")).value().fraction == 0.2);
  Result<EvalPolicy> unknown = eval_policy_from_json(nlohmann::json::parse(R"({"fractions": 0.2})"));
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.message().find("eval.fractions") != std::string::npos);
  CHECK_FALSE(eval_policy_from_json(nlohmann::json::parse(R"({"fraction": 1.5})")).ok());
  CHECK_FALSE(eval_policy_from_json(nlohmann::json::parse(R"({"max_items": "many"})")).ok());
}

TEST_CASE("re-judging retires the items with a near-duplicate among trained samples, keeps their results uncounted") {
  Corpus corpus;
  std::vector<std::string> sources = corpus.add_generated(300, 24);
  corpus.eval.fraction = 1.0;
  corpus.eval.max_items = 6;
  EvalSetRefresh drawn = refresh_eval_set(corpus.db, corpus.eval, corpus.synth, "cuda2hip").value();
  REQUIRE(drawn.added == 6);
  std::vector<EvalItem> items = list_eval_items(corpus.db, "cuda2hip").value();
  // A store from before the exact rule: a snapshot trained on a near-copy of two items (a comment
  // line more), recorded as an export records it.
  std::vector<std::string> trained_ids;
  for (size_t i = 0; i < 2; ++i) {
    std::string id;
    REQUIRE(corpus.add(variant_of(corpus.text_of(items[i].sample_id)), &id));
    REQUIRE(shingle_jaccard(corpus.text_of(id), corpus.text_of(items[i].sample_id), corpus.synth.dedup) >=
            corpus.synth.dedup.threshold);
    trained_ids.push_back(id);
  }
  REQUIRE(record_trained_samples(corpus.db, "old-snapshot", trained_ids).ok());
  // A model answered all six.
  ModelRecord model = register_model(corpus.db, {{"name", "m"}, {"kind", "builtin"}}).value();
  for (const EvalItem& item : items) {
    EvaluationRecord record;
    record.model_id = model.id;
    record.sample_id = item.sample_id;
    record.track = "cuda2hip";
    record.ok = true;
    record.status = "ok";
    record.checked = "answer";
    REQUIRE(insert_evaluation(corpus.db, record).ok());
  }
  REQUIRE(evaluation_outcomes(corpus.db, model.id).value().size() == 6);

  EvalSetRejudge judged = rejudge_eval_set(corpus.db, corpus.synth, "cuda2hip").value();
  CHECK(judged.judged == 6);
  CHECK(judged.retired == 2);
  CHECK(judged.retired_before == 0);
  std::vector<RetiredItem> retired = retired_eval_items(corpus.db, "cuda2hip").value();
  REQUIRE(retired.size() == 2);
  for (const RetiredItem& item : retired) {
    CHECK((item.sample_id == items[0].sample_id || item.sample_id == items[1].sample_id));
    CHECK(item.reason.find("near-duplicate of trained sample") != std::string::npos);
    CHECK(item.reason.find("(exact Jaccard 1.000, threshold 0.80)") != std::string::npos);  // comments do not count
  }
  // Not asked, not counted, never drawn again; the results stay in the store.
  CHECK(list_eval_items(corpus.db, "cuda2hip").value().size() == 4);
  CHECK(eval_set_size(corpus.db, "cuda2hip").value() == 4);
  CHECK(evaluation_outcomes(corpus.db, model.id).value().size() == 4);
  CHECK(eval_item_ids(corpus.db, "cuda2hip").value().size() == 6);  // still held back from training
  CHECK(find_evaluation(corpus.db, model.id, items[0].sample_id).value().has_value());
  ModelsReport report = models_report(corpus.db, "cuda2hip").value();
  CHECK(report.eval_items == 4);
  CHECK(report.retired_items == 2);
  CHECK(models_report_to_json(report)["evaluation_set"]["retired"] == 2);
  CHECK(format_models_table(report).find("(4 items, 2 retired)") != std::string::npos);
  // A second judgement retires nothing more.
  EvalSetRejudge again = rejudge_eval_set(corpus.db, corpus.synth, "cuda2hip").value();
  CHECK(again.judged == 4);
  CHECK(again.retired == 0);
  CHECK(again.retired_before == 2);
}
