// The kernelopt track inside the loop, piece by piece on a real store: a task as a sample and as
// the question a model reads; the built-in strategies learning from curated rows and answering;
// candidates never becoming evaluation items; a model's answer judged by the harness (built with
// nvcc, the run and timing skipped here with the reason, never a speedup); and the retrain
// snapshot holding back the evaluation set's tasks.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "agents/kernelopt/builtin_tasks.h"
#include "agents/kernelopt/generated_tasks.h"
#include "agents/kernelopt/model_candidates.h"
#include "agents/kernelopt/strategy_model.h"
#include "store/evaluations.h"
#include "synth/evaluate.h"
#include "synth/eval_set.h"
#include "synth/kernelopt/judge.h"
#include "synth/kernelopt/snapshot.h"
#include "synth/kernelopt/task_samples.h"
#include "synth/kernelopt/version_speed.h"
#include "synth/model_registry.h"
#include "test_support/query.h"
#include "test_support/temp_dir.h"
#include "test_support/timed_measurement.h"
#include "test_support/tools_here.h"

namespace tailforge {
namespace {

KernelTask catalog_task(const std::string& operator_type) {
  for (const KernelTask& task : builtin_kernel_tasks()) {
    if (task.operator_type == operator_type) return task;
  }
  FAIL("no catalog task of type " << operator_type);
  return {};
}

std::string insert_task(Database& db, const KernelTask& task, const std::string& status = "verified") {
  Sample sample = kernel_task_sample(task, "template", std::nullopt, {"operator/" + task.operator_type});
  sample.status = status;
  Result<InsertOutcome> inserted = insert_sample_if_absent(db, sample);
  REQUIRE(inserted.ok());
  return inserted->id;
}

// A timed, right measurement at `speedup`, as a GPU host stores it.
KernelMeasurement timed(double speedup) { return timed_measurement(1.0, 1.0 / speedup); }

}  // namespace

TEST_CASE("a kernel task is a sample of its own, read back whole, and its question ends with the task line") {
  TempDir dir;
  Database db = Database::open(dir.file("t.db")).value();
  KernelTask task = catalog_task(kMatmulOperator);
  task.flops = 123456;
  task.read_bytes = 4096;
  std::string id = insert_task(db, task);
  Sample stored = find_sample(db, id).value().value();
  Result<KernelTask> back = kernel_task_of(stored);
  REQUIRE_MESSAGE(back.ok(), back.message());
  CHECK(back->name == task.name);
  CHECK(back->operator_type == task.operator_type);
  CHECK(back->reference_source == task.reference_source);
  CHECK(back->inputs.size() == task.inputs.size());
  CHECK(back->output.elements == task.output.elements);
  CHECK(back->flops == 123456);
  CHECK(back->read_bytes == 4096);
  CHECK(back->family == task.family);

  std::string question = kernelopt_question(db, stored).value();
  CHECK(question.find(task.reference_source) != std::string::npos);
  Result<KernelTask> asked = task_in_question(question);
  REQUIRE_MESSAGE(asked.ok(), asked.message());
  CHECK(asked->name == task.name);
  CHECK(asked->flops == 123456);
  // A question without the line, or with a line that holds no task, is an error, not a crash.
  CHECK_FALSE(task_in_question("Task x: nothing else").ok());
  CHECK_FALSE(task_in_question(std::string("q\n") + kKernelTaskLinePrefix + "{\"name\": 3}").ok());
  CHECK_FALSE(task_in_question(std::string("q\n") + kKernelTaskLinePrefix + std::string(1 << 20, '[')).ok());

  // A candidate of the task is a sample of the track too, but no task.
  KernelCandidate candidate = builtin_candidates(task).front();
  REQUIRE(store_kernelopt_task(db, task).ok());
  Result<StoredCandidate> kept = store_kernelopt_candidate(db, task, candidate);
  REQUIRE_MESSAGE(kept.ok(), kept.message());
  CHECK_FALSE(kernel_task_of(find_sample(db, kept->sample_id).value().value()).ok());
}

TEST_CASE("candidates are answers, never evaluation items; the tasks are") {
  TempDir dir;
  Database db = Database::open(dir.file("t.db")).value();
  KernelTask task = catalog_task(kSingleOperator);
  std::string task_id = insert_task(db, task);
  REQUIRE(store_kernelopt_task(db, task).ok());
  StoredCandidate candidate = store_kernelopt_candidate(db, task, builtin_candidates(task).front()).value();
  REQUIRE(store_kernelopt_measurement(db, candidate, task, timed(2.0), "host").ok());
  CHECK(query_int(db, "SELECT count(*) FROM sample WHERE track = 'kernelopt' AND status = 'verified'") == 2);
  std::vector<std::string> candidates = eval_candidate_ids(db, "kernelopt").value();
  CHECK(candidates == std::vector<std::string>{task_id});
}

TEST_CASE("the built-in strategies learn the strategy curated most per family, ties to the faster, and answer with it") {
  std::vector<StrategyExample> examples = {
      {"a", "gemm", kMatmulOperator, "register_blocking", 3.0}, {"b", "gemm", kMatmulOperator, "shared_tiling", 2.0},
      {"c", "gemm", kMatmulOperator, "register_blocking", 2.5}, {"d", "softmax", kReductionOperator, "x", 1.5},
      {"e", "softmax", kReductionOperator, "y", 4.0}};
  StrategyTable table = learn_strategies(examples);
  CHECK(table.by_family.at("gemm") == "register_blocking");  // two tasks against one
  CHECK(table.by_family.at("softmax") == "y");               // one each: the faster
  CHECK(table.examples == 5);
  StrategyTable back = strategy_table_from_json(strategy_table_json(table));
  CHECK(back.by_family == table.by_family);
  CHECK(back.by_operator_type == table.by_operator_type);
  CHECK(strategy_table_from_json(nlohmann::json::array()).by_family.empty());
  // A task votes once, with its fastest curated row: s2's second row is task x's slower one.
  StrategyTable voted = learn_strategies({{"x", "f", kSingleOperator, "s1", 9.0}, {"x", "f", kSingleOperator, "s2", 8.0},
                                          {"y", "f", kSingleOperator, "s2", 2.0}});
  CHECK(voted.by_family.at("f") == "s1");

  KernelTask task = catalog_task(kMatmulOperator);
  std::vector<KernelCandidate> candidates = builtin_candidates(task);
  REQUIRE(candidates.size() >= 3);
  // Untrained: the family's first recipe. Trained on its last strategy: that one.
  CHECK(answer_with_strategy({}, task).value().strategy == candidates.front().strategy);
  StrategyTable learned;
  learned.by_family[task.family] = candidates.back().strategy;
  Result<KernelCandidate> answer = answer_with_strategy(learned, task);
  REQUIRE(answer.ok());
  CHECK(answer->strategy == candidates.back().strategy);
  CHECK(answer->source == candidates.back().source);
  // A task the catalog does not build has no built-in answer.
  KernelTask imported = task;
  imported.name = "mine";
  imported.family.clear();
  imported.recipe.clear();
  CHECK_FALSE(answer_with_strategy(learned, imported).ok());
}

TEST_CASE("the built-in strategies prefer what won at the task's size class over the family's majority") {
  KernelTask task = catalog_task(kMatmulOperator);
  std::string size;
  for (const std::string& feature : kernel_task_features(task)) {
    if (feature.rfind("size/", 0) == 0) size = feature;
  }
  REQUIRE(!size.empty());
  std::vector<KernelCandidate> candidates = builtin_candidates(task);
  std::string other_size = size == "size/large" ? "size/small" : "size/large";
  std::vector<StrategyExample> examples = {
      {"a", task.family, kMatmulOperator, candidates[0].strategy, 3.0, other_size},
      {"b", task.family, kMatmulOperator, candidates[0].strategy, 3.0, other_size},
      {"c", task.family, kMatmulOperator, candidates[1].strategy, 2.0, size}};
  StrategyTable table = learn_strategies(examples);
  CHECK(table.by_family.at(task.family) == candidates[0].strategy);
  CHECK(answer_with_strategy(table, task).value().strategy == candidates[1].strategy);
  CHECK(strategy_table_from_json(strategy_table_json(table)).by_family_size == table.by_family_size);
}

TEST_CASE("kernel_unit_in_answer takes the first fenced block, else the whole answer") {
  CHECK(kernel_unit_in_answer("plain") == "plain");
  CHECK(kernel_unit_in_answer("why\n```cuda\nint x;\n```\nmore\n```\nother\n```") == "int x;\n");
  CHECK(kernel_unit_in_answer("```\nunterminated") == "unterminated");
  CHECK(kernel_unit_in_answer(std::string(1 << 20, '`')).size() <= (1u << 20));
}

TEST_CASE("a model's answer is built and inspected by the harness; without a GPU the speed stage says why, and no speedup is stored") {
  if (!testing::nvcc_here()) return;
  TempDir dir;
  Database db = Database::open(dir.file("t.db")).value();
  Taxonomy taxonomy = load_taxonomy(std::string(TAILFORGE_SOURCE_DIR) + "/policies/taxonomy.json").value();
  KernelTask task = catalog_task(kSingleOperator);
  EvalItem item{"kernelopt", insert_task(db, task), 1, std::nullopt, std::nullopt, 0};
  REQUIRE(add_eval_items(db, {item}).ok());
  // A model that answers with the reference it was shown, and one that answers with prose.
  ModelRecord copier = register_model(db, {{"name", "copier"}, {"kind", "command"}, {"track", "kernelopt"},
                                           {"command", {"sed", "-n", "/^```cuda$/,/^```$/p"}}}).value();
  ModelRecord talker = register_model(db, {{"name", "talker"}, {"kind", "command"}, {"track", "kernelopt"},
                                           {"command", {"sh", "-c", "cat >/dev/null; echo 'a faster kernel, surely'"}}})
                           .value();
  ModelRuntime runtime{.command_timeout_seconds = 30};
  EvaluationSetup setup{.taxonomy = &taxonomy, .work_dir = dir.path()};
  setup.verifier.scratch_root = dir.path();
  setup.verifier.cache_dir = dir.file("cache");
  auto judge = [&](const ModelRecord& record) {
    std::unique_ptr<ModelUnderTest> caller = std::move(make_model_under_test(record, runtime).value());
    Result<JudgedAnswer> judged = evaluate_item(db, *caller, record, item, setup);
    REQUIRE_MESSAGE(judged.ok(), judged.message());
    return judged->evaluation;
  };
  bool gpu = detected_toolchains().has_gpu("nvidia");
  EvaluationRecord copied = judge(copier);
  CHECK_MESSAGE(copied.ok, copied.message.value_or(""));
  EvaluationRecord talked = judge(talker);
  CHECK_FALSE(talked.ok);
  REQUIRE(talked.category.has_value());
  CHECK(talked.category->rfind("kernelopt.compile", 0) == 0);
  if (!gpu) {
    bool said = false;
    for (const EvaluationStageRecord& stage : copied.stages) {
      if (stage.stage == "kernelopt.speed") {
        CHECK(stage.status == "skipped");
        said = stage.message.value_or("").find("timing needs an NVIDIA GPU") != std::string::npos;
      }
    }
    CHECK(said);
    CHECK(query_int(db, "SELECT count(*) FROM kernelopt_measurement WHERE speedup IS NOT NULL") == 0);
    // Each model's candidate is stored with its measurement; fast_p waits for a GPU.
    std::map<std::string, KernelFigures> figures = kernel_figures_by_version(db).value();
    CHECK(figures.at("copier").candidates == 1);
    CHECK(figures.at("copier").rejected.empty());
    CHECK(figures.at("copier").timed_tasks == 0);
    CHECK(figures.at("talker").rejected.size() == 1);
    CHECK(describe_kernel_figures(figures.at("copier")).find("timing needs an NVIDIA GPU") != std::string::npos);
  }
}

TEST_CASE("the retrain snapshot curates the measured candidates, holds back the evaluation tasks and trains the strategies") {
  TempDir dir;
  Database db = Database::open(dir.file("t.db")).value();
  std::vector<KernelTask> tasks;
  for (const KernelTask& task : builtin_kernel_tasks()) {
    if (task.operator_type == kSingleOperator && tasks.size() < 3) tasks.push_back(task);
  }
  REQUIRE(tasks.size() == 3);
  std::vector<std::string> ids;
  for (const KernelTask& task : tasks) {
    ids.push_back(insert_task(db, task));
    REQUIRE(store_kernelopt_task(db, task).ok());
    double speedup = 1.5;
    for (const KernelCandidate& candidate : builtin_candidates(task)) {
      StoredCandidate stored = store_kernelopt_candidate(db, task, candidate).value();
      REQUIRE(store_kernelopt_measurement(db, stored, task, timed(speedup), "gpu-host").ok());
      speedup += 1.0;  // the last recipe is the fastest
    }
  }
  // The first task is an evaluation item: none of its candidates may train.
  REQUIRE(add_eval_items(db, {{"kernelopt", ids[0], 1, std::nullopt, std::nullopt, 0}}).ok());
  ExportOptions options;
  options.track = "kernelopt";
  options.out_dir = dir.file("snapshot");
  options.policy.dedup.threshold = 0.95;
  std::string hash = kernelopt_snapshot_hash(db, options).value();
  Result<ExportSummary> written = export_kernelopt_snapshot(db, options);
  REQUIRE_MESSAGE(written.ok(), written.message());
  CHECK(written->snapshot_hash == hash);
  CHECK(written->samples > 0);
  CHECK(written->held_back_for_evaluation > 0);
  CHECK(written->items_with_near_duplicate == 0);
  nlohmann::json manifest = nlohmann::json::parse(std::ifstream(written->manifest_path));
  // The tasks it trains on never become items.
  std::vector<std::string> candidates = eval_candidate_ids(db, "kernelopt").value();
  for (const nlohmann::json& sample : manifest["samples"]) {
    CHECK(sample["task"] != tasks[0].name);
    CHECK(sample["family"] == tasks[1].family);
    std::string task_id = sample["task"] == tasks[1].name ? ids[1] : ids[2];
    CHECK(std::find(candidates.begin(), candidates.end(), task_id) == candidates.end());
  }
  std::vector<StrategyExample> examples = read_strategy_examples(written->manifest_path).value();
  StrategyTable table = learn_strategies(examples);
  if (!examples.empty()) CHECK(table.by_family.at(tasks[1].family) == builtin_candidates(tasks[1]).back().strategy);
  CHECK_FALSE(read_strategy_examples(dir.file("nothing.json")).ok());
}

}  // namespace tailforge
