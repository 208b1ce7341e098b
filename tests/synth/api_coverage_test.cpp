#include <doctest/doctest.h>

#include <chrono>
#include <fstream>

#include "agents/generator/generator.h"
#include "store/api_uses.h"
#include "store/bundles.h"
#include "store/corpus.h"
#include "store/cycles.h"
#include "store/evaluations.h"
#include "store/models.h"
#include "store/samples.h"
#include "synth/api_candidates.h"
#include "synth/api_coverage.h"
#include "synth/api_tails.h"
#include "synth/eval_set.h"
#include "synth/held_out.h"
#include "synth/lineage.h"
#include "synth/model_report.h"
#include "synth/synthesizer.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

// A prior written for the test: ten files of one tree use the API.
const char* kPrior = R"({"trees": ["written-for-the-test"], "api_files": 10, "header_api_files": 0, "names": {
  "cudaMalloc": {"files": 8, "uses": 40},
  "cudaEventElapsedTime": {"files": 4, "uses": 4},
  "cudaMemcpy2D": {"files": 3, "uses": 6},
  "cuLaunchKernel": {"files": 1, "uses": 1}}})";

struct Store {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  SynthPolicy policy = std::move(load_default_synth_policy(TAILFORGE_SOURCE_DIR).value());

  Store() {
    std::ofstream(dir.file("prior.json")) << kPrior;
    policy.api.prior_file = dir.file("prior.json");
  }

  std::string add(const std::string& text, const std::string& status, std::optional<int64_t> cycle = std::nullopt) {
    Sample sample;
    sample.track = "cuda2hip";
    sample.origin = "template";
    sample.language = "cuda";
    sample.text = text;
    sample.status = status;
    sample.cycle_id = cycle;
    Result<InsertOutcome> inserted = insert_sample_if_absent(db, sample);
    REQUIRE_MESSAGE(inserted.ok(), inserted.message());
    return inserted->id;
  }

  const ApiTable& table() { return *api_table_of(policy.api).value(); }
};

std::string program(const std::string& body) { return "#include <cuda_runtime.h>\nint main() {\n" + body + "\n}\n"; }

const NameCoverage* name_in(const ApiCoverage& coverage, const std::string& name) {
  for (const NameCoverage& n : coverage.names) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

const FamilyCoverage& family_in(const ApiCoverage& coverage, const std::string& name) {
  for (const FamilyCoverage& f : coverage.families) {
    if (f.name == name) return f;
  }
  FAIL("no family " << name);
  return coverage.families.front();
}

}  // namespace

TEST_CASE("each CUDA sample's API names are counted once, a bundle's headers with its program, all again for a new table") {
  Store s;
  std::string plain = s.add(program("float* p; cudaMalloc(&p, 4); cudaMalloc(&p, 8); // cudaFree(p)"), "verified");
  Bundle bundle;
  bundle.tree_name = "tree";
  bundle.program_path = "main.cu";
  bundle.program_text = "#include \"util.cuh\"\nint main() { check(cudaDeviceSynchronize()); }\n";
  bundle.include_dirs = {"."};
  bundle.headers = {{"util.cuh", "inline void check(cudaError_t e) { if (e != cudaSuccess) puts(cudaGetErrorString(e)); }\n"}};
  Sample sample;
  sample.track = "cuda2hip";
  sample.origin = "imported";
  sample.language = "cuda";
  Result<InsertOutcome> stored = store_bundle(s.db, bundle, sample);
  REQUIRE_MESSAGE(stored.ok(), stored.message());
  Sample c;
  c.track = "c2x86";
  c.origin = "template";
  c.language = "c";
  c.text = "int cudaMalloc(void) { return 0; }";
  REQUIRE(insert_sample_if_absent(s.db, c).ok());

  Result<int64_t> counted = count_sample_api(s.db, s.table());
  REQUIRE_MESSAGE(counted.ok(), counted.message());
  CHECK(*counted == 2);  // the C sample is no CUDA
  CHECK(count_sample_api(s.db, s.table()).value() == 0);
  std::vector<SampleApiUse> uses = sample_api_uses(s.db, plain).value();
  REQUIRE(uses.size() == 1);
  CHECK(uses[0].identifier == "cudaMalloc");
  CHECK(uses[0].family == "memory");
  CHECK(uses[0].uses == 2);
  std::set<std::string> names;
  std::vector<SampleApiUse> bundle_uses = sample_api_uses(s.db, stored->id).value();
  for (const SampleApiUse& use : bundle_uses) names.insert(use.identifier);
  CHECK(names == std::set<std::string>{"cudaDeviceSynchronize", "cudaError_t", "cudaGetErrorString", "cudaSuccess"});
  CHECK(sample_api_families(s.db, stored->id).value() == std::set<std::string>{"device_management", "error"});

  // Another table (its families moved) counts every sample again.
  std::vector<std::pair<std::string, std::string>> small = {{"cudaMalloc", "runtime_api"}};
  ApiTable other = build_api_table(small, R"({"unmatched_family": "all", "families": [{"name": "all"}], "rules": []})",
                                   "small.json")
                       .value();
  CHECK(count_sample_api(s.db, other).value() == 2);
  CHECK(sample_api_uses(s.db, plain).value().at(0).family == "all");
  CHECK(sample_api_uses(s.db, stored->id).value().empty());
}

TEST_CASE("the prior is the shipped file until a tree is imported, then the imported trees' files") {
  Store s;
  ApiPrior shipped = load_api_prior(s.db, s.policy.api).value();
  CHECK_FALSE(shipped.from_imported_trees);
  CHECK(shipped.api_files == 10);
  CHECK(shipped.names.at("cudaMalloc").files == 8);
  CHECK(shipped.min_files == 2);

  TempDir tree;
  write_tree_file(tree.file("a.cu"), program("cudaStream_t s; cudaStreamCreate(&s);"));
  write_tree_file(tree.file("b.cu"), program("cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);"));
  write_tree_file(tree.file("readme.md"), "cudaMalloc");
  Result<TreeApiCount> recorded = record_tree_api_uses(s.db, s.policy.api, "users-tree", tree.path(), {});
  REQUIRE_MESSAGE(recorded.ok(), recorded.message());
  ApiPrior imported = load_api_prior(s.db, s.policy.api).value();
  CHECK(imported.from_imported_trees);
  CHECK(imported.trees == std::vector<std::string>{"users-tree"});
  CHECK(imported.api_files == 2);
  CHECK(imported.min_files == 1);
  CHECK(imported.names.at("cudaStream_t").files == 2);
  CHECK(imported.names.at("cudaStreamCreateWithFlags").files == 1);
  CHECK(imported.names.count("cudaMalloc") == 0);
  // The same tree again replaces its counts; a second tree adds to them.
  write_tree_file(tree.file("c.cu"), program("cudaStream_t s;"));
  REQUIRE(record_tree_api_uses(s.db, s.policy.api, "users-tree", tree.path(), {}).ok());
  REQUIRE(record_tree_api_uses(s.db, s.policy.api, "second", tree.path(), {}).ok());
  ApiPrior both = load_api_prior(s.db, s.policy.api).value();
  CHECK(both.api_files == 6);
  CHECK(both.names.at("cudaStream_t").files == 6);
}

TEST_CASE("the shipped prior file is the output of api_prior_json: counts only, one name a line") {
  Store s;
  TreeApiCount tree;
  tree.files = 3;
  tree.api_files = 2;
  tree.names["cudaMalloc"] = {2, 5};
  TreeApiCount headers;
  headers.files = 10;
  headers.api_files = 4;
  headers.names["cudaStream_t"] = {3, 9};
  std::string text = api_prior_json({{"t", tree}}, std::make_pair(std::string("/usr/local/cuda/include"), headers));
  CHECK(text.find("\n  \"cudaMalloc\": {\"files\":2,\"uses\":5}") != std::string::npos);
  std::ofstream(s.dir.file("written.json")) << text;
  s.policy.api.prior_file = s.dir.file("written.json");
  ApiPrior prior = load_api_prior(s.db, s.policy.api).value();
  CHECK(prior.api_files == 2);
  CHECK(prior.header_api_files == 4);
  CHECK(prior.names.at("cudaStream_t").header_files == 3);
  CHECK(prior.names.at("cudaMalloc").uses == 5);
  // The shipped one parses and names the trees it came from.
  Store shipped;
  shipped.policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  ApiPrior real = load_api_prior(shipped.db, shipped.policy.api).value();
  CHECK(real.trees.size() >= 2);
  CHECK(real.api_files > 50);
  CHECK(real.names.at("cudaMalloc").files > 10);
}

TEST_CASE("coverage counts verified samples against the prior: shared names, uses, families with a floor") {
  Store s;
  int64_t first = start_cycle(s.db, 1, 0).value();
  s.add(program("float* p; cudaMalloc(&p, 4);"), "verified", first);
  int64_t second = start_cycle(s.db, 2, 0).value();
  s.add(program("float* q; cudaMalloc(&q, 8); cudaEvent_t a, b; float ms; cudaEventElapsedTime(&ms, a, b);"),
        "verified", second);
  s.add(program("cudaMemcpy2D(0, 0, 0, 0, 0, 0, cudaMemcpyDeviceToDevice);"), "failed", second);
  Result<ApiCoverage> coverage = measure_api_coverage(s.db, s.policy.api, "cuda2hip");
  REQUIRE_MESSAGE(coverage.ok(), coverage.message());
  MESSAGE(format_api_coverage(*coverage, "", true));
  CHECK(coverage->verified_total == 2);
  CHECK(coverage->shared_names == 3);  // cuLaunchKernel is in one file only
  CHECK(coverage->covered_shared == 2);
  CHECK(coverage->prior_uses == 51);
  CHECK(coverage->covered_uses == 44);
  CHECK(coverage->target_names == 3);
  const NameCoverage* malloc_name = name_in(*coverage, "cudaMalloc");
  REQUIRE(malloc_name);
  CHECK(malloc_name->verified == 2);
  CHECK(malloc_name->target_share == doctest::Approx(0.8));
  const NameCoverage* copy = name_in(*coverage, "cudaMemcpy2D");
  REQUIRE(copy);
  CHECK(copy->verified == 0);  // the failed sample does not cover it
  CHECK(copy->target_share == doctest::Approx(0.3));
  CHECK(name_in(*coverage, "cuLaunchKernel")->target_share == 0);

  CHECK_FALSE(family_in(*coverage, "memory").below_target);
  CHECK(family_in(*coverage, "memory").target_share == doctest::Approx(0.8));
  CHECK(family_in(*coverage, "event").share == doctest::Approx(0.5));
  CHECK_FALSE(family_in(*coverage, "event").below_target);
  CHECK(family_in(*coverage, "memcpy").below_target);
  // A family no tree uses is still a target: the floor.
  const FamilyCoverage& driver = family_in(*coverage, "driver_module_launch");
  CHECK(driver.target_share == doctest::Approx(s.policy.api.family_floor_share));
  CHECK(driver.below_target);

  // Coverage as it stood after the first cycle.
  ApiCoverage earlier = measure_api_coverage(s.db, s.policy.api, "cuda2hip", first).value();
  CHECK(earlier.verified_total == 1);
  CHECK(earlier.covered_shared == 1);
  std::string by_cycle = format_api_coverage_by_cycle(s.db, s.policy.api, "cuda2hip").value();
  CHECK(by_cycle.find("after cycle " + std::to_string(first) + ": 1 verified samples use 1 API names; 1 of 3 shared names") !=
        std::string::npos);
  CHECK(by_cycle.find("after cycle " + std::to_string(second) + ": 2 verified samples use 3 API names; 2 of 3 shared names") !=
        std::string::npos);
  nlohmann::json json = api_coverage_to_json(*coverage, true);
  CHECK(json["covered_shared"] == 2);
  CHECK(json["families"].size() == coverage->families.size());
  CHECK(json["names"].size() == coverage->names.size());
  CHECK(api_coverage_line(*coverage).find("API coverage: 2 of 3 shared names (66.7%), 86.3% of uses") == 0);
}

TEST_CASE("API tails: families and names below target, the largest deficits first, capped, steerable seeds") {
  Store s;
  s.policy.api.max_identifier_tails = 1;
  int64_t cycle = start_cycle(s.db, 1, 0).value();
  for (int i = 0; i < 4; ++i) s.add(program("float* p; cudaMalloc(&p, " + std::to_string(i + 1) + ");"), "verified", cycle);
  std::string failed = s.add(program("cudaMemcpy2D(0, 0, 0, 0, 0, 0, cudaMemcpyDeviceToDevice);"), "failed", cycle);
  std::vector<TailEntry> entries;
  REQUIRE(add_api_tails(s.db, s.policy, entries).ok());
  std::map<std::string, const TailEntry*> by_label;
  for (const TailEntry& e : entries) by_label[e.dimension + "/" + e.name] = &e;
  REQUIRE(by_label.count("api_family/event"));
  REQUIRE(by_label.count("api_family/memcpy"));
  CHECK(by_label.count("api_family/memory") == 0);
  // The name with the largest deficit (4 files of 10: 2 samples of 4) is the one listed.
  CHECK(by_label.count("api/cudaEventElapsedTime") == 1);
  CHECK(by_label.count("api/cudaMemcpy2D") == 0);
  const TailEntry& event = *by_label["api_family/event"];
  CHECK(event.signal == "corpus_share");
  CHECK(event.numbers["target_share"].get<double>() == doctest::Approx(0.4));
  CHECK(event.numbers["deficit"] == 2);
  CHECK(api_tail_names(event) == std::vector<std::string>{"cudaEventElapsedTime"});
  CHECK(api_tail_names(*by_label["api_family/memcpy"]) == std::vector<std::string>{"cudaMemcpy2D"});
  // A family only the floor makes a target weighs less than one the prior's files use.
  const TailEntry& floor_only = *by_label.at("api_family/driver_module_launch");
  CHECK(floor_only.numbers["weight"] == s.policy.api.floor_weight);
  CHECK(floor_only.score == doctest::Approx(s.policy.api.floor_weight * floor_only.numbers["severity"].get<double>()));
  CHECK(event.score == doctest::Approx(event.numbers["severity"].get<double>()));  // the shipped prior: weight 1
  // The whole tail list has them, and their seeds are the samples that use the name.
  std::vector<TailEntry> all = detect_tails(s.db, s.policy).value();
  CHECK(std::any_of(all.begin(), all.end(), [](const TailEntry& e) { return e.dimension == "api_family"; }));
  CHECK(tail_seed_ids(s.db, "cuda2hip", "api", "cudaMemcpy2D", 0, 10).value() == std::vector<std::string>{failed});
  CHECK(tail_seed_ids(s.db, "cuda2hip", "api_family", "memcpy", 0, 10).value() == std::vector<std::string>{failed});
  std::vector<TailSharePoint> series = tail_share_series(s.db, "cuda2hip", "api_family", "memory").value();
  REQUIRE(series.size() == 1);
  CHECK(series[0].matching == 4);
  // No api section: no API tail.
  s.policy.api.enabled = false;
  std::vector<TailEntry> none;
  REQUIRE(add_api_tails(s.db, s.policy, none).ok());
  CHECK(none.empty());
}

TEST_CASE("the generator's reach: which API names its programs write, and through which domain and knob") {
  Store s;
  GeneratorCatalog catalog = load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value();
  auto start = std::chrono::steady_clock::now();
  GeneratorApiReach reach = GeneratorApiReach::sweep(catalog, s.table());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("swept in " << seconds << " s: " << reach.names_reached() << " names");
  CHECK(reach.reaches("cudaMalloc"));
  CHECK(reach.reaches("cudaEventElapsedTime"));
  CHECK(reach.reaches("cudaMallocHost"));
  CHECK(reach.reaches("cudaCreateTextureObject"));  // the texture_sampling domain
  CHECK(reach.reaches("cuLaunchKernel"));           // runtime_compiled
  CHECK_FALSE(reach.reaches("cudaIpcGetMemHandle"));
  CHECK_FALSE(reach.reaches("cuGraphCreate"));
  REQUIRE_FALSE(reach.ways_to("cudaMallocHost").empty());
  for (const GeneratorApiReach::Way& way : reach.ways_to("cudaMallocHost")) {
    // Another seed through the same way writes the name: the way holds, not the seed.
    GenerationRequest request = way.request(1234567);
    Result<GeneratedProgram> generated = generate_program(catalog, request);
    REQUIRE(generated.ok());
    CHECK(count_api_uses(generated->source, s.table()).count("cudaMallocHost") == 1);
  }
}

TEST_CASE("synthesis for an API tail writes programs that use its name, the tail in their lineage; one no template writes is passed over") {
  Store s;
  GeneratorCatalog catalog = load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value();
  int64_t cycle = start_cycle(s.db, 1, 0).value();
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    GenerationRequest request;
    request.seed = seed;
    request.forbidden_features = {"pinned_host_memory"};
    Sample sample = sample_from_program(generate_program(catalog, request).value(), "template", cycle);
    sample.status = "verified";
    REQUIRE(insert_sample_if_absent(s.db, sample).ok());
  }
  s.policy.synthesis.top_k = 1;
  s.policy.synthesis.multiplier = 3;
  TailReport tails{cycle, {}};
  tails.entries.push_back({"api", "cuGraphCreate", "corpus_share", 0.9, {{"family", "driver_graph"}}});
  tails.entries.push_back({"api", "cudaMallocHost", "corpus_share", 0.5, {{"family", "memory"}}});
  Result<SynthesisSummary> summary =
      synthesize_tails(s.db, s.policy, tails, cycle, 11, builtin_candidate_source(catalog, &s.table()), "builtin");
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  REQUIRE(summary->per_tail.size() == 1);
  CHECK(summary->per_tail[0].entry.name == "cudaMallocHost");
  CHECK(summary->passed_over == std::vector<std::string>{"api/cuGraphCreate"});
  REQUIRE(summary->inserted >= 1);
  for (const std::string& id : summary->inserted_ids) {
    std::string text = find_sample(s.db, id).value()->text;
    CHECK(count_api_uses(text, s.table()).count("cudaMallocHost") == 1);
    Result<nlohmann::json> lineage = lineage_report(s.db, id);
    REQUIRE_MESSAGE(lineage.ok(), lineage.message());
    REQUIRE_FALSE((*lineage)["ancestors"].empty());
    const nlohmann::json& reason = (*lineage)["ancestors"][0]["reason"];
    CHECK(reason["dimension"] == "api");
    CHECK(reason["name"] == "cudaMallocHost");
    CHECK(format_lineage_report(*lineage).find("cudaMallocHost") != std::string::npos);
  }
}

TEST_CASE("the evaluation set spans the API families and imported trees, a family can be held out, models shows each family") {
  Store s;
  EvalPolicy eval;
  eval.fraction = 0;  // no draw: only what the families and trees lack
  eval.min_items_per_family = 1;
  eval.min_items_per_tree = 1;
  auto add_with_hip = [&s](const std::string& text) {
    std::string id = s.add(text, "verified");
    REQUIRE(insert_artifact(s.db, id, {"translate.hip", "hip:source.hip", "hip", text}).ok());
    return id;
  };
  std::vector<std::string> memory, event;
  for (int i = 0; i < 3; ++i) memory.push_back(add_with_hip(program("float* p; cudaMalloc(&p, " + std::to_string(i + 1) + ");")));
  for (int i = 0; i < 2; ++i) {
    event.push_back(add_with_hip(program("float ms; cudaEvent_t a, b; cudaEventElapsedTime(&ms, a, b); // " +
                                         std::to_string(i))));
  }
  std::vector<std::string> stream;
  for (int i = 0; i < 2; ++i) stream.push_back(add_with_hip(program("cudaStream_t s; cudaStreamCreate(&s); // " + std::to_string(i))));
  std::string lonely = add_with_hip(program("cudaGraph_t graph; cudaGraphCreate(&graph, 0);"));
  // Programs of the user's imported tree that use nothing rarer than cudaMalloc: the tree's own item.
  std::vector<std::string> tree_samples;
  for (int i = 0; i < 2; ++i) {
    Bundle bundle;
    bundle.tree_name = "users";
    bundle.program_path = "main" + std::to_string(i) + ".cu";
    bundle.program_text = program("float* q; cudaMalloc(&q, 64); // the user's " + std::to_string(i));
    Sample imported;
    imported.track = "cuda2hip";
    imported.origin = "imported";
    imported.language = "cuda";
    imported.status = "verified";
    tree_samples.push_back(store_bundle(s.db, bundle, imported).value().id);
    REQUIRE(insert_artifact(s.db, tree_samples.back(), {"translate.hip", "hip:source.hip", "hip", bundle.program_text}).ok());
  }
  Result<EvalSetRefresh> refresh = refresh_eval_set(s.db, eval, s.policy, "cuda2hip");
  REQUIRE_MESSAGE(refresh.ok(), refresh.message());
  CHECK(refresh->added == refresh->spanning_added);
  CHECK(refresh->added >= 3);  // memory (perhaps through a tree program), event, stream, the tree
  CHECK(refresh->added <= 4);
  std::vector<EvalItem> first_items = list_eval_items(s.db, "cuda2hip").value();
  std::map<std::string, int> per_group;
  std::map<std::string, std::set<std::string>> families = eval_item_api_families(s.db, "cuda2hip").value();
  for (const EvalItem& item : first_items) {
    for (const std::string& family : families[item.sample_id]) ++per_group[family];
    if (std::find(tree_samples.begin(), tree_samples.end(), item.sample_id) != tree_samples.end()) ++per_group["tree"];
  }
  CHECK(per_group["event"] == 1);
  CHECK(per_group["stream"] == 1);  // one of two: the other stays for training
  CHECK(per_group["tree"] == 1);
  CHECK(per_group["memory"] >= 1);
  CHECK(per_group["memory"] <= 2);  // at most half of the five memory candidates
  CHECK(per_group.count("graph") == 0);  // its only sample stays for training
  CHECK(std::none_of(first_items.begin(), first_items.end(), [&](const EvalItem& i) { return i.sample_id == lonely; }));
  // A second refresh adds nothing: every family has its item.
  CHECK(refresh_eval_set(s.db, eval, s.policy, "cuda2hip").value().added == 0);

  // Held out by family: the family's samples become items marked so, and no export trains on them.
  HeldOutSplit split;
  split.families = {"event"};
  CHECK(held_out_group(s.db, split, event[1], std::nullopt).value() == std::optional<std::string>("family:event"));
  CHECK_FALSE(held_out_group(s.db, split, memory[0], std::nullopt).value().has_value());
  eval.held_out = split;
  Result<EvalSetRefresh> held = refresh_eval_set(s.db, eval, s.policy, "cuda2hip");
  REQUIRE(held.ok());
  CHECK(held->held_out_added >= 1);
  CHECK(held_out_split_from_json({{"held_out_families", {"graph"}}}).value().families == std::vector<std::string>{"graph"});
  CHECK_FALSE(held_out_split_from_json({{"held_out_families", {1}}}).ok());
  CHECK_FALSE(eval_policy_from_json({{"min_items_per_family", -1}}).ok());
  CHECK(eval_policy_from_json({{"min_items_per_family", 5}, {"held_out_families", {"rtc"}}}).value().min_items_per_family == 5);

  // Accuracy per family: a model right on the memory items, wrong on the event ones.
  ModelRecord model;
  model.name = "learner-v1";
  int64_t model_id = insert_model(s.db, model).value();
  std::vector<EvalItem> items = list_eval_items(s.db, "cuda2hip").value();
  for (const EvalItem& item : items) {
    EvaluationRecord evaluation;
    evaluation.model_id = model_id;
    evaluation.sample_id = item.sample_id;
    evaluation.track = "cuda2hip";
    bool uses_event = std::find(event.begin(), event.end(), item.sample_id) != event.end();
    evaluation.ok = !uses_event;
    evaluation.status = uses_event ? "fail" : "ok";
    evaluation.checked = "compile";
    Result<bool> stored = insert_evaluation(s.db, evaluation);
    REQUIRE_MESSAGE(stored.ok(), stored.message());
    CHECK(*stored);
  }
  ModelsReport report = models_report(s.db, "cuda2hip").value();
  REQUIRE(report.models.size() == 1);
  const auto& per_family = report.models[0].families;
  REQUIRE(per_family.count("event"));
  CHECK(per_family.at("event").second == 0);
  CHECK(per_family.at("event").first >= 1);
  CHECK(per_family.at("memory").second == per_family.at("memory").first);
  std::string table = format_models_table(report);
  CHECK(table.find("accuracy per CUDA API family") != std::string::npos);
  CHECK(table.find("0.000 (0/") != std::string::npos);
  CHECK(models_report_to_json(report)["models"][0]["api_families"]["memory"]["accuracy"] == 1.0);
  // The model-failure signal works per family: its failures make the event family a tail.
  s.policy.tails.model_min_evaluated = 1;
  std::vector<TailEntry> tails = detect_tails(s.db, s.policy).value();
  CHECK(std::any_of(tails.begin(), tails.end(), [](const TailEntry& e) {
    return e.dimension == "api_family" && e.name == "event" && e.signal == "model_failure";
  }));

  // A model right on one item only: no family can fail 1.5 times as often as all items, yet the
  // families it never gets right stand out against the one it does, and that one does not.
  ModelRecord weak;
  weak.name = "learner-weak";
  int64_t weak_id = insert_model(s.db, weak).value();
  std::string right_one;
  families = eval_item_api_families(s.db, "cuda2hip").value();
  for (const EvalItem& item : items) {
    const std::set<std::string>& uses = families[item.sample_id];
    if (right_one.empty() && uses.count("memory") && !uses.count("event")) right_one = item.sample_id;
  }
  REQUIRE_FALSE(right_one.empty());
  for (const EvalItem& item : items) {
    EvaluationRecord evaluation;
    evaluation.model_id = weak_id;
    evaluation.sample_id = item.sample_id;
    evaluation.track = "cuda2hip";
    evaluation.ok = item.sample_id == right_one;
    evaluation.status = evaluation.ok ? "ok" : "fail";
    if (!evaluation.ok) evaluation.category = "amd.compile.undeclared_identifier";
    evaluation.checked = "compile";
    REQUIRE(insert_evaluation(s.db, evaluation).value());
  }
  s.policy.model_under_test = "learner-weak";
  std::set<std::string> weak_families;
  std::vector<TailEntry> weak_tails = detect_tails(s.db, s.policy).value();
  for (const TailEntry& e : weak_tails) {
    if (e.signal == "model_failure" && e.dimension == "api_family" && e.numbers["model_id"] == weak_id)
      weak_families.insert(e.name);
  }
  CAPTURE(items.size());
  CHECK(weak_families.count("event") == 1);
  CHECK(weak_families.count("memory") == 0);
}
