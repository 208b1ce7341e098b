// eval.held_out_templates / eval.held_out_trees (synth/held_out.h): the samples of a reserved
// template or imported tree become evaluation items marked with their group, never training rows
// (snapshot, `tailforge export`), and `tailforge models` scores them apart from the drawn items.
#include <doctest/doctest.h>

#include <fstream>
#include <set>

#include "agents/generator/generator.h"
#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "store/bundles.h"
#include "store/evaluations.h"
#include "store/samples.h"
#include "synth/eval_set.h"
#include "synth/export.h"
#include "synth/held_out.h"
#include "synth/model_registry.h"
#include "synth/model_report.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

struct Store {
  TempDir dir;
  std::string db_path = dir.file("tailforge.db");
  Database db = std::move(Database::open(db_path).value());
  GeneratorCatalog catalog = std::move(load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value());
  HipifyRules rules = std::move(load_hipify_rules(std::string(TAILFORGE_SOURCE_DIR) + "/policies/hipify_rules.json").value());
  SynthPolicy synth = std::move(load_default_synth_policy(TAILFORGE_SOURCE_DIR).value());
  std::map<std::string, std::vector<std::string>> ids_by_template;

  // A verified cuda2hip sample with its HIP, as the verify job stores it.
  std::optional<std::string> add(const std::string& cuda, const std::optional<std::string>& template_id) {
    TranslationResult hip = translate_cuda_to_hip(rules, cuda);
    if (!hip.ok) return std::nullopt;
    Sample sample{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = cuda,
                  .template_id = template_id, .status = "verified"};
    Result<InsertOutcome> inserted = insert_sample_if_absent(db, sample);
    REQUIRE(inserted.ok());
    REQUIRE(insert_artifact(db, inserted->id, {"translate.hip", "hip:source.hip", "hip", hip.hip_source}).ok());
    return inserted->id;
  }

  // Generated programs from `count` seeds, stored with their templates.
  void add_generated(uint64_t seed, int count) {
    for (uint64_t s = seed; s < seed + static_cast<uint64_t>(count); ++s) {
      GenerationRequest request;
      request.seed = s;
      Result<GeneratedProgram> program = generate_program(catalog, request);
      REQUIRE(program.ok());
      if (std::optional<std::string> id = add(program->source, program->template_id)) {
        ids_by_template[program->template_id].push_back(*id);
      }
    }
  }

  // The template with the most stored samples.
  std::string biggest_template() const {
    std::string best;
    for (const auto& [name, ids] : ids_by_template) {
      if (best.empty() || ids.size() > ids_by_template.at(best).size()) best = name;
    }
    return best;
  }
};

std::set<std::string> manifest_sample_ids(const std::string& out_dir) {
  std::ifstream in(out_dir + "/manifest.json");
  json manifest = json::parse(in);
  std::set<std::string> ids;
  for (const json& sample : manifest["samples"]) ids.insert(sample["id"].get<std::string>());
  return ids;
}

}  // namespace

TEST_CASE("the held-out lists are read from the eval section and refused when malformed") {
  Result<EvalPolicy> policy = eval_policy_from_json(json{{"held_out_templates", {"reduction_tree"}},
                                                         {"held_out_trees", {"vendor-kernels", "cuda-samples"}}});
  REQUIRE(policy.ok());
  CHECK(policy->held_out.templates == std::vector<std::string>{"reduction_tree"});
  CHECK(policy->held_out.trees == std::vector<std::string>{"vendor-kernels", "cuda-samples"});
  CHECK(eval_policy_from_json(json::object())->held_out.empty());
  Result<EvalPolicy> not_array = eval_policy_from_json(json{{"held_out_templates", "reduction_tree"}});
  REQUIRE_FALSE(not_array.ok());
  CHECK(not_array.message().find("eval.held_out_templates") != std::string::npos);
  CHECK_FALSE(eval_policy_from_json(json{{"held_out_trees", {""}}}).ok());
  CHECK_FALSE(eval_policy_from_json(json{{"held_out_trees", {3}}}).ok());
}

TEST_CASE("a reserved template's samples are all evaluation items, never training rows, and scored apart") {
  Store store;
  store.add_generated(500, 40);
  const std::string reserved = store.biggest_template();
  const std::vector<std::string>& reserved_ids = store.ids_by_template[reserved];
  REQUIRE(reserved_ids.size() >= 3);
  INFO("reserved template " << reserved << " with " << reserved_ids.size() << " samples");

  // With fraction 0 only the reserved samples are drawn, each marked with its template; the cap
  // still holds, so the last reserved sample stays out of the set.
  EvalPolicy eval;
  eval.fraction = 0;
  eval.max_items = static_cast<int64_t>(reserved_ids.size()) - 1;
  eval.held_out.templates = {reserved};
  EvalSetRefresh refresh = refresh_eval_set(store.db, eval, store.synth, "cuda2hip").value();
  CHECK(refresh.added == eval.max_items);
  CHECK(refresh.held_out_added == eval.max_items);
  std::vector<EvalItem> items = list_eval_items(store.db, "cuda2hip").value();
  REQUIRE(static_cast<int64_t>(items.size()) == eval.max_items);
  for (const EvalItem& item : items) {
    CHECK(item.held_out == "template:" + reserved);
    CHECK(std::count(reserved_ids.begin(), reserved_ids.end(), item.sample_id) == 1);
  }
  // Then some drawn items, unmarked.
  eval.fraction = 0.5;
  eval.max_items = 400;
  refresh_eval_set(store.db, eval, store.synth, "cuda2hip").value();
  items = list_eval_items(store.db, "cuda2hip").value();
  int64_t drawn = std::count_if(items.begin(), items.end(), [](const EvalItem& i) { return !i.held_out; });
  CHECK(drawn > 0);
  CHECK(static_cast<int64_t>(items.size()) - drawn == static_cast<int64_t>(reserved_ids.size()));

  // An export that knows the split writes none of the template's samples, and the training split
  // it records holds none. (Here every one is an item already; the next case exports a store
  // without items.)
  TempDir out;
  ExportOptions options{"cuda2hip", "alpaca", out.file("snapshot"), store.synth, {}, {}, eval.held_out};
  ExportSummary summary = export_dataset(store.db, options).value();
  std::set<std::string> exported = manifest_sample_ids(options.out_dir);
  CHECK(summary.samples > 0);
  for (const std::string& id : reserved_ids) CHECK_FALSE(exported.count(id));
  CHECK(trained_samples_by_template(store.db, "cuda2hip").value().count(reserved) == 0);

  // A model right on every drawn item and wrong on every held-out one: the report splits them.
  ModelRecord model = register_model(store.db, {{"name", "memorizer"}, {"kind", "builtin"}}).value();
  int64_t held_out_items = 0;
  items = list_eval_items(store.db, "cuda2hip").value();
  for (const EvalItem& item : items) {
    bool ok = !item.held_out;
    held_out_items += item.held_out.has_value();
    EvaluationRecord evaluation{.model_id = model.id, .sample_id = item.sample_id, .track = "cuda2hip", .ok = ok,
                                .status = ok ? "ok" : "fail", .checked = "compile"};
    Result<bool> stored = insert_evaluation(store.db, evaluation);
    REQUIRE_MESSAGE(stored.ok(), stored.message());
  }
  ModelsReport report = models_report(store.db, "cuda2hip").value();
  REQUIRE(report.models.size() == 1);
  const ModelSummary& m = report.models.front();
  CHECK(m.held_out_items == held_out_items);
  CHECK(m.held_out_ok == 0);
  CHECK(m.drawn_items == drawn);
  CHECK(m.drawn_ok == drawn);
  CHECK(report.held_out_groups.at("template:" + reserved) == held_out_items);
  CHECK(report.held_out_trained.at(reserved) == 0);
  json j = models_report_to_json(report);
  CHECK(j["models"][0]["evaluation"]["drawn"]["accuracy"].get<double>() == doctest::Approx(1.0));
  CHECK(j["models"][0]["evaluation"]["held_out"]["accuracy"].get<double>() == doctest::Approx(0.0));
  std::string table = format_models_table(report);
  CHECK(table.find("template:" + reserved) != std::string::npos);
  CHECK(table.find("held-out templates and trees 0/" + std::to_string(held_out_items)) != std::string::npos);
}

TEST_CASE("an export leaves out a reserved template's samples that are not evaluation items") {
  Store store;
  store.add_generated(700, 30);
  const std::string reserved = store.biggest_template();
  const std::vector<std::string>& reserved_ids = store.ids_by_template[reserved];
  REQUIRE(reserved_ids.size() >= 2);
  TempDir out;
  ExportOptions options{"cuda2hip", "alpaca", out.file("snapshot"), store.synth, {}, {}, HeldOutSplit{{reserved}, {}}};
  ExportSummary summary = export_dataset(store.db, options).value();
  CHECK(summary.held_out_left_out == static_cast<int64_t>(reserved_ids.size()));
  CHECK(summary.held_back_for_evaluation == 0);
  std::set<std::string> exported = manifest_sample_ids(options.out_dir);
  CHECK(exported.size() > 0);
  for (const std::string& id : reserved_ids) CHECK_FALSE(exported.count(id));
  for (const std::string& id : summary.train_ids) CHECK(std::count(reserved_ids.begin(), reserved_ids.end(), id) == 0);
  std::ifstream in(options.out_dir + "/manifest.json");
  json manifest = json::parse(in);
  CHECK(manifest["filters"]["held_out"]["templates"] == json{reserved});
  CHECK(manifest["filters"]["held_out"]["samples_left_out"].get<size_t>() == reserved_ids.size());
  CHECK(trained_samples_by_template(store.db, "cuda2hip").value().count(reserved) == 0);

  // The same export without the split holds them: the rule is what left them out.
  ExportOptions plain{"cuda2hip", "alpaca", out.file("plain"), store.synth, {}, {}, {}};
  ExportSummary all = export_dataset(store.db, plain).value();
  CHECK(all.samples == summary.samples + static_cast<int64_t>(reserved_ids.size()));
}

TEST_CASE("a reserved tree holds back its programs and the pairs derived from them") {
  Store store;
  Bundle bundle{.tree_name = "vendor-kernels", .program_path = "src/scale.cu",
                .program_text = "__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\nint main() { return 0; }\n"};
  Sample program{.track = "cuda2hip", .origin = "imported", .language = "cuda", .status = "verified"};
  InsertOutcome stored = store_bundle(store.db, bundle, program).value();
  Sample derived{.track = "ptx2cuda", .origin = "imported", .language = "ptx", .text = ".entry scale()\n{\n}\n",
                 .status = "verified"};
  InsertOutcome derived_stored = insert_sample_if_absent(store.db, derived).value();
  REQUIRE(insert_lineage_edge(store.db, {stored.id, derived_stored.id, "compiled_to", "nvcc", std::nullopt,
                                         std::nullopt, std::nullopt, 0})
              .ok());
  std::optional<std::string> other = store.add("__global__ void other(int* y) { y[0] = 1; }\nint main() { return 0; }\n",
                                               std::nullopt);
  REQUIRE(other);

  HeldOutSplit split{.trees = {"vendor-kernels"}};
  CHECK(held_out_group(store.db, split, stored.id, std::nullopt).value() == "tree:vendor-kernels");
  CHECK(held_out_group(store.db, split, derived_stored.id, std::nullopt).value() == "tree:vendor-kernels");
  CHECK_FALSE(held_out_group(store.db, split, *other, std::nullopt).value().has_value());
  HeldOutSplit elsewhere{.trees = {"cuda-samples"}};
  CHECK_FALSE(held_out_group(store.db, elsewhere, stored.id, std::nullopt).value().has_value());
  HeldOutSplit by_template{.templates = {"saxpy"}};
  CHECK(held_out_group(store.db, by_template, *other, std::string("saxpy")).value() == "template:saxpy");
}

TEST_CASE("tailforge eval and export read the held-out lists from the configuration") {
  Store store;
  store.add_generated(900, 24);
  const std::string reserved = store.biggest_template();
  const size_t reserved_count = store.ids_by_template[reserved].size();
  REQUIRE(reserved_count >= 2);
  std::string config = store.dir.file("held_out.json");
  // Only the reserved template's items: no draw, and no minimum per API family or tree.
  std::ofstream(config) << json{{"eval", {{"fraction", 0.0}, {"held_out_templates", {reserved}}, {"min_items_per_family", 0},
                                          {"min_items_per_tree", 0}}}}
                               .dump();
  REQUIRE(register_model(store.db, {{"name", "rules"}, {"kind", "builtin"}}).ok());

  // --limit 1: the set is refreshed, one item judged.
  ProcessResult refreshed =
      run_tailforge({"eval", "--model", "rules", "--limit", "1", "--config", config, "--db", store.db_path});
  REQUIRE_MESSAGE(refreshed.exit_code == 0, refreshed.stderr_text);
  ProcessResult models = run_tailforge({"models", "--json", "--track", "cuda2hip", "--db", store.db_path});
  REQUIRE_MESSAGE(models.exit_code == 0, models.stderr_text);
  json report = json::parse(models.stdout_text);
  CHECK(report["evaluation_set"]["items"].get<size_t>() == reserved_count);
  CHECK(report["evaluation_set"]["held_out"]["groups"]["template:" + reserved].get<size_t>() == reserved_count);

  std::string out = store.dir.file("export");
  ProcessResult exported =
      run_tailforge({"export", "--track", "cuda2hip", "--out", out, "--config", config, "--db", store.db_path});
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.stderr_text);
  CHECK(exported.stdout_text.find("held out for evaluation") != std::string::npos);
  std::set<std::string> ids = manifest_sample_ids(out);
  CHECK_FALSE(ids.empty());
  for (const std::string& id : store.ids_by_template[reserved]) CHECK_FALSE(ids.count(id));
}
