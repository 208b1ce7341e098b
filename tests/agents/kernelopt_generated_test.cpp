// The kernelopt task generator (agents/kernelopt/generated_tasks.h): generated tasks are
// deterministic, uniquely named and cover every family; variants stay in their family and differ
// from their seed task and from each other; recipes rebuild the hand-written candidates; features
// are sorted tags; and a generated task's reference and candidates build through the harness with
// nvcc (compile only) where nvcc is present.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "agents/kernelopt/builtin_tasks.h"
#include "agents/kernelopt/generated_tasks.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/kernelopt/measure.h"

namespace tailforge {
namespace {

const char* const kLaunchSignature = "void tf_launch(const float* const* inputs, float* output, cudaStream_t stream)";

const std::set<std::string> kFamilies = {"elementwise", "transpose",  "row_reduction", "full_reduction",
                                         "softmax",     "layernorm",  "gemm",          "matvec",
                                         "stencil_1d",  "stencil_2d", "pooling"};

// Every field of a task, one line each, for equality checks that name the field that differs.
std::string task_text(const KernelTask& task) {
  std::string text = task.name + "\n" + task.operator_type + "\n" + task.domain + "\n" + task.description + "\n";
  for (const KernelBuffer& input : task.inputs) text += input.name + " " + std::to_string(input.elements) + "\n";
  text += task.output.name + " " + std::to_string(task.output.elements) + "\n";
  text += std::to_string(task.input_low) + " " + std::to_string(task.input_high) + " " +
          std::to_string(task.tolerance) + " " + std::to_string(task.flops) + " " + std::to_string(task.read_bytes);
  return text + "\n" + task.origin + "\n" + task.family + "\n" + task.recipe + "\n" + task.reference_source;
}

// What the candidates of a task must satisfy: three or more, distinct strategies, the ABI.
void check_candidates(const KernelTask& task) {
  CAPTURE(task.name);
  std::vector<KernelCandidate> candidates = builtin_candidates(task);
  CHECK(candidates.size() >= 3);
  std::set<std::string> strategies;
  for (const KernelCandidate& candidate : candidates) {
    CAPTURE(candidate.strategy);
    CHECK(candidate.task == task.name);
    CHECK(strategies.insert(candidate.strategy).second);
    CHECK(candidate.source.find(kLaunchSignature) != std::string::npos);
    CHECK(candidate.source != task.reference_source);
    CHECK(candidate.reasoning.find("$(") == std::string::npos);
    CHECK(candidate.source.find("$(") == std::string::npos);
  }
}

bool has_tag(const std::vector<std::string>& tags, const std::string& tag) {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

}  // namespace

TEST_CASE("kernelopt generated: the same seed and index give byte-identical tasks, another seed another shape") {
  for (uint64_t index = 0; index < 30; ++index) {
    KernelTask once = generated_kernel_task(7, index), again = generated_kernel_task(7, index);
    CHECK(task_text(once) == task_text(again));
    CHECK(once.family == generated_kernel_task(8, index).family);  // the family follows the index
  }
  int differ = 0;
  for (uint64_t index = 0; index < 30; ++index)
    differ += generated_kernel_task(7, index).name != generated_kernel_task(8, index).name;
  CHECK(differ >= 25);
}

TEST_CASE("kernelopt generated: 200 tasks have unique names, cover every family and operator type, and are valid") {
  std::set<std::string> names, references, families, operator_types;
  std::set<std::string> catalog_names, catalog_references;
  for (const KernelTask& task : builtin_kernel_tasks()) {
    catalog_names.insert(task.name);
    catalog_references.insert(task.reference_source);
  }
  for (uint64_t index = 0; index < 200; ++index) {
    KernelTask task = generated_kernel_task(2024, index);
    CAPTURE(task.name);
    CHECK(names.insert(task.name).second);
    CHECK(references.insert(task.reference_source).second);
    CHECK(catalog_names.count(task.name) == 0);
    CHECK(catalog_references.count(task.reference_source) == 0);
    CHECK(task.origin == "generated");
    CHECK(kFamilies.count(task.family) == 1);
    CHECK(task.recipe.find("\"family\":\"" + task.family + "\"") != std::string::npos);
    CHECK_FALSE(task.description.empty());
    CHECK(task.reference_source.find(kLaunchSignature) != std::string::npos);
    CHECK(task.reference_source.find("$(") == std::string::npos);
    int64_t bytes = task.output.elements * 4;
    for (const KernelBuffer& input : task.inputs) bytes += input.elements * 4;
    CHECK(bytes < 400'000'000);
    if (task.family == "gemm") {
      CHECK(task.flops >= 1e8);  // compute bound: sized by its flops
    } else {
      CHECK(task.must_read_bytes() >= 1'000'000);
    }
    if (task.family == "matvec") CHECK(task.flops > 0);
    families.insert(task.family);
    operator_types.insert(task.operator_type);
  }
  CHECK(families == kFamilies);
  CHECK(operator_types.size() == 5);
  // Consecutive indexes are different families.
  for (uint64_t index = 0; index + 1 < 40; ++index) {
    CHECK(generated_kernel_task(1, index).family != generated_kernel_task(1, index + 1).family);
  }
}

TEST_CASE("kernelopt generated: a generated elementwise chain names its ops and its count") {
  bool fusion_seen = false;
  for (uint64_t index = 0; index < 60 && !fusion_seen; ++index) {
    KernelTask task = generated_kernel_task(3, index);
    if (task.family != "elementwise" || task.operator_type != kFusionOperator) continue;
    fusion_seen = true;
    std::string count = std::to_string(task.output.elements);
    CHECK(task.name.size() > count.size());
    CHECK(task.name.substr(task.name.size() - count.size() - 2) == "_n" + count);
    CHECK(task.description.find(count) != std::string::npos);
    CHECK(task.description.find("the reference runs") != std::string::npos);
    CHECK(task.reference_source.find("stage1") != std::string::npos);
  }
  CHECK(fusion_seen);
}

TEST_CASE("kernelopt generated: builtin_candidates rebuilds three or more distinct candidates from a recipe") {
  for (uint64_t index = 0; index < 28; ++index) check_candidates(generated_kernel_task(11, index));
  KernelTask broken = generated_kernel_task(11, 0);
  broken.recipe = "{\"family\":\"elementwise\",\"shape\":{\"count\":-5,\"ops\":[\"relu\"]}}";
  CHECK(builtin_candidates(broken).empty());
  broken.recipe = "{not json";
  CHECK(builtin_candidates(broken).empty());
  broken.recipe = "{\"family\":\"no_such_family\",\"shape\":{}}";
  CHECK(builtin_candidates(broken).empty());
}

TEST_CASE("kernelopt generated: a catalog task's recipe rebuilds its reference and its candidates") {
  for (const KernelTask& task : builtin_kernel_tasks()) {
    CAPTURE(task.name);
    REQUIRE(kFamilies.count(task.family) == 1);
    KernelTask renamed = task;  // not matched by name: rebuilt from the recipe
    renamed.name = "renamed_" + task.name;
    std::vector<KernelCandidate> catalog = builtin_candidates(task), rebuilt = builtin_candidates(renamed);
    REQUIRE(catalog.size() == rebuilt.size());
    for (size_t i = 0; i < catalog.size(); ++i) {
      CHECK(catalog[i].strategy == rebuilt[i].strategy);
      CHECK(catalog[i].source == rebuilt[i].source);
      CHECK(catalog[i].reasoning == rebuilt[i].reasoning);
    }
    // Its variants are rebuilt from the same recipe, so the catalog task is never among them.
    for (const KernelTask& variant : kernel_task_variants(task, 1, 4))
      CHECK(variant.reference_source != task.reference_source);
  }
}

TEST_CASE("kernelopt generated: variants are distinct, of the task's family, deterministic, and have candidates") {
  std::vector<KernelTask> seeds;
  for (uint64_t index = 0; index < 14; ++index) seeds.push_back(generated_kernel_task(5, index));
  for (const KernelTask& task : builtin_kernel_tasks()) {
    if (task.name == "gemm_1000x1500x700" || task.name == "relu_12m_tail") seeds.push_back(task);
  }
  for (const KernelTask& task : seeds) {
    CAPTURE(task.name);
    std::vector<KernelTask> variants = kernel_task_variants(task, 9, 6);
    CHECK(variants.size() >= 3);
    CHECK(variants.size() <= 6);
    std::set<std::string> names = {task.name}, references = {task.reference_source};
    for (const KernelTask& variant : variants) {
      CAPTURE(variant.name);
      CHECK(names.insert(variant.name).second);
      CHECK(references.insert(variant.reference_source).second);
      CHECK(variant.family == task.family);
      CHECK(variant.origin == "generated");
    }
    std::vector<KernelTask> again = kernel_task_variants(task, 9, 6);
    REQUIRE(again.size() == variants.size());
    for (size_t i = 0; i < again.size(); ++i) CHECK(task_text(again[i]) == task_text(variants[i]));
    if (!variants.empty()) check_candidates(variants.back());
  }
  CHECK(kernel_task_variants(seeds[0], 9, 0).empty());
  KernelTask imported = seeds[0];
  imported.recipe.clear();
  imported.family.clear();
  CHECK(kernel_task_variants(imported, 9, 5).empty());
}

TEST_CASE("kernelopt generated: an elementwise fusion's variants include a fused neighbour") {
  KernelTask fusion;
  for (const KernelTask& task : builtin_kernel_tasks()) {
    if (task.name == "scale_add_gelu_6m") fusion = task;
  }
  REQUIRE(fusion.family == "elementwise");
  std::vector<KernelTask> variants = kernel_task_variants(fusion, 4, 4);
  REQUIRE_FALSE(variants.empty());
  bool neighbour = false, resized = false;
  for (const KernelTask& variant : variants) {
    CAPTURE(variant.name);
    bool same_count = variant.output.elements == fusion.output.elements;
    bool other_ops = variant.recipe.find("[\"scale\",\"add\",\"gelu\"]") == std::string::npos;
    neighbour = neighbour || (same_count && other_ops);
    resized = resized || (!same_count && !other_ops);
  }
  CHECK(neighbour);
  CHECK(resized);
  // The first variant is the fused neighbour: one op more, one fewer or one replaced.
  size_t stages = 0;
  for (size_t at = variants[0].reference_source.find("__global__"); at != std::string::npos;
       at = variants[0].reference_source.find("__global__", at + 1)) {
    ++stages;
  }
  CHECK(stages >= 2);
  CHECK(stages <= 4);
}

TEST_CASE("kernelopt generated: features are sorted unique tags of operator, family, size, shape and fusion") {
  for (const KernelTask& task : builtin_kernel_tasks()) {
    std::vector<std::string> tags = kernel_task_features(task);
    CAPTURE(task.name);
    CHECK(std::is_sorted(tags.begin(), tags.end()));
    CHECK(std::adjacent_find(tags.begin(), tags.end()) == tags.end());
    CHECK(has_tag(tags, "operator/" + task.operator_type));
    CHECK(has_tag(tags, "family/" + task.family));
    CHECK(has_tag(tags, "shape/ragged") != has_tag(tags, "shape/aligned"));
    CHECK(int(has_tag(tags, "size/small")) + has_tag(tags, "size/medium") + has_tag(tags, "size/large") == 1);
    CHECK(tags == kernel_task_features(task));
  }
  std::map<std::string, KernelTask> by_name;
  for (const KernelTask& task : builtin_kernel_tasks()) by_name[task.name] = task;
  std::vector<std::string> chain = kernel_task_features(by_name["mul_bias_sigmoid_affine_4m"]);
  CHECK(has_tag(chain, "fused/4_ops"));
  CHECK(has_tag(chain, "op/sigmoid"));
  CHECK(has_tag(chain, "shape/ragged"));  // 4194311 is not a multiple of 4
  CHECK(has_tag(kernel_task_features(by_name["relu_16m"]), "shape/aligned"));
  CHECK(has_tag(kernel_task_features(by_name["relu_16m"]), "size/large"));  // 64 MiB
  CHECK_FALSE(has_tag(kernel_task_features(by_name["relu_16m"]), "fused/1_ops"));
  CHECK(has_tag(kernel_task_features(by_name["softmax_rows_4096x1000"]), "fused/4_ops"));
  CHECK(has_tag(kernel_task_features(by_name["gemm_512x512x512"]), "size/small"));
  CHECK(has_tag(kernel_task_features(by_name["gemm_1000x1500x700"]), "shape/ragged"));

  KernelTask imported;
  imported.operator_type = kSingleOperator;
  imported.origin = "imported";
  imported.inputs = {{"x", 1000}};
  CHECK(kernel_task_features(imported) == std::vector<std::string>{"operator/single", "size/small"});
}

TEST_CASE("kernelopt generated: generated tasks' references and candidates build through the harness with nvcc") {
  if (!testing::nvcc_here("kernelopt generated tasks")) return;
  TempDir dir;
  VerifierOptions options;
  options.cache_dir = dir.file("cache");
  options.sm_targets = {"sm_80"};
  StageContext context{options, detected_toolchains(), nullptr, nullptr, dir.path(), {}};
  context.compile_only = true;
  // An elementwise chain (one kernel and one __device__ buffer per stage) and a fused GEMM, the
  // families with the most generated text. Each task takes six nvcc runs (the harness builds each
  // candidate and a program around it), so every family at two shapes is left to a one-off check.
  auto first_fusion_of = [](const std::string& family) {
    for (uint64_t index = 0;; ++index) {
      KernelTask task = generated_kernel_task(1, index);
      if (task.family == family && task.operator_type == kFusionOperator) return task;
    }
  };
  std::vector<KernelTask> tasks = {first_fusion_of("elementwise"), first_fusion_of("gemm")};
  for (const KernelTask& task : tasks) {
    for (const KernelCandidate& candidate : builtin_candidates(task)) {
      CAPTURE(task.name);
      CAPTURE(candidate.strategy);
      KernelMeasurement measured = measure_candidate(context, task, candidate.source);
      CHECK_MESSAGE(measured.status == "skipped", measured.category << ": " << measured.detail);
      REQUIRE_FALSE(measured.stages.empty());
      CHECK(measured.stages.back().name == "kernelopt.run");
      for (const StageResult& stage : measured.stages) {
        if (stage.name == "kernelopt.candidate" || stage.name == "kernelopt.exe")
          CHECK_MESSAGE(stage.ok(), stage.name << ": " << stage.diagnostics);
      }
    }
  }
}

}  // namespace tailforge
