#include "agents/kernelopt/generated_tasks.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "agents/kernelopt/builtin_family.h"
#include "agents/kernelopt/builtin_tasks.h"

namespace tailforge {
namespace {

// splitmix64's finalizer: a well-mixed 64-bit value of `value`.
uint64_t mix64(uint64_t value) {
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ull;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebull;
  return value ^ (value >> 31);
}

// FNV-1a of `text`: a seed part that depends on a task's recipe.
uint64_t text_hash(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

const std::vector<FamilyGenerator>& generators() {
  static const std::vector<FamilyGenerator> all = {
      elementwise_generator(),  transpose_generator(),    row_reduction_generator(), full_reduction_generator(),
      softmax_generator(),      layernorm_generator(),    gemm_generator(),          matvec_generator(),
      line_stencil_generator(), grid_stencil_generator(), pooling_generator(),
  };
  return all;
}

const FamilyGenerator* find_generator(const std::string& family) {
  for (const FamilyGenerator& generator : generators()) {
    if (generator.family == family) return &generator;
  }
  return nullptr;
}

// A kind of generated task: a family and one of its drawers.
struct TaskKind {
  const FamilyGenerator* generator;
  size_t draw;
};

// Every family's first drawer, then every second drawer, ...: consecutive kinds are different
// families.
const std::vector<TaskKind>& task_kinds() {
  static const std::vector<TaskKind> kinds = [] {
    std::vector<TaskKind> all;
    size_t most = 0;
    for (const FamilyGenerator& generator : generators()) most = std::max(most, generator.draws);
    for (size_t draw = 0; draw < most; ++draw) {
      for (const FamilyGenerator& generator : generators()) {
        if (draw < generator.draws) all.push_back({&generator, draw});
      }
    }
    return all;
  }();
  return kinds;
}

// The catalog's names and reference texts, which generated tasks must not repeat.
struct CatalogMarks {
  std::set<std::string> names, references;
};

const CatalogMarks& catalog_marks() {
  static const CatalogMarks marks = [] {
    CatalogMarks all;
    for (const KernelTask& task : builtin_kernel_tasks()) {
      all.names.insert(task.name);
      all.references.insert(task.reference_source);
    }
    return all;
  }();
  return marks;
}

bool repeats_catalog(const KernelTask& task) {
  return catalog_marks().names.count(task.name) > 0 || catalog_marks().references.count(task.reference_source) > 0;
}

// A recipe's family and shape; false when the text is not such a recipe.
bool read_recipe(const std::string& recipe, std::string& family, nlohmann::json& shape) {
  nlohmann::json parsed = nlohmann::json::parse(recipe, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return false;
  auto found_family = parsed.find("family");
  auto found_shape = parsed.find("shape");
  if (found_family == parsed.end() || !found_family->is_string()) return false;
  if (found_shape == parsed.end() || !found_shape->is_object()) return false;
  family = found_family->get<std::string>();
  shape = *found_shape;
  return true;
}

std::string size_tag(int64_t bytes) {
  if (bytes < (int64_t(16) << 20)) return "size/small";
  if (bytes < (int64_t(64) << 20)) return "size/medium";
  return "size/large";
}

}  // namespace

uint64_t ShapeRandom::next() {
  state_ += 0x9e3779b97f4a7c15ull;
  return mix64(state_);
}

int64_t ShapeRandom::between(int64_t low, int64_t high) {
  if (high <= low) return low;
  uint64_t span = static_cast<uint64_t>(high - low) + 1;
  return low + static_cast<int64_t>(next() % span);
}

int64_t ShapeRandom::log_between(int64_t low, int64_t high) {
  if (high <= low) return low;
  // 2^-53 steps in [0, 1), from the top 53 bits: the same double on every IEEE platform.
  double unit = static_cast<double>(next() >> 11) / 9007199254740992.0;
  double value = std::exp(std::log(static_cast<double>(low)) + unit * std::log(static_cast<double>(high) / low));
  return std::clamp(static_cast<int64_t>(value), low, high);
}

int64_t ragged_near(int64_t value, ShapeRandom& random) {
  int64_t moved = value + random.between(-value / 16, value / 16);
  return std::max<int64_t>(1, moved | 1);
}

std::string recipe_text(const std::string& family, const nlohmann::json& shape) {
  return nlohmann::json{{"family", family}, {"shape", shape}}.dump();
}

Result<KernelCatalogEntry> entry_of_recipe(const std::string& recipe, const std::string& name) {
  std::string family;
  nlohmann::json shape;
  if (!read_recipe(recipe, family, shape)) return make_error("not a kernelopt recipe: " + recipe);
  const FamilyGenerator* generator = find_generator(family);
  if (!generator) return make_error("kernelopt recipe of an unknown family: " + family);
  return generator->entry(shape, name);
}

KernelTask generated_kernel_task(uint64_t seed, uint64_t index) {
  const TaskKind& kind = task_kinds()[index % task_kinds().size()];
  for (uint64_t attempt = 0;; ++attempt) {
    ShapeRandom random(mix64(mix64(seed) ^ mix64(index + 1) * 3 ^ attempt));
    Result<KernelCatalogEntry> entry = kind.generator->entry(kind.generator->draw(kind.draw, random), "");
    if (!entry || repeats_catalog(entry->task)) continue;  // drawers only give shapes their family takes
    KernelTask task = std::move(entry->task);
    task.origin = "generated";
    return task;
  }
}

std::vector<KernelTask> kernel_task_variants(const KernelTask& task, uint64_t seed, int count) {
  std::vector<KernelTask> variants;
  std::string family;
  nlohmann::json shape;
  if (count <= 0 || !read_recipe(task.recipe, family, shape)) return variants;
  const FamilyGenerator* generator = find_generator(family);
  if (!generator) return variants;
  ShapeRandom random(mix64(seed) ^ text_hash(task.recipe));
  std::vector<std::vector<nlohmann::json>> groups = generator->neighbours(shape, random);
  for (std::vector<nlohmann::json>& group : groups) random.shuffle(group);
  std::set<std::string> names = {task.name}, references = {task.reference_source};
  // One from each group in turn, so that every kind of change is represented early.
  for (size_t round = 0; static_cast<int>(variants.size()) < count; ++round) {
    bool any_left = false;
    for (const std::vector<nlohmann::json>& group : groups) {
      if (round >= group.size() || static_cast<int>(variants.size()) >= count) continue;
      any_left = true;
      Result<KernelCatalogEntry> entry = generator->entry(group[round], "");
      if (!entry || repeats_catalog(entry->task)) continue;
      if (!names.insert(entry->task.name).second || !references.insert(entry->task.reference_source).second) continue;
      entry->task.origin = "generated";
      variants.push_back(std::move(entry->task));
    }
    if (!any_left) break;
  }
  return variants;
}

std::vector<std::string> kernel_task_features(const KernelTask& task) {
  std::vector<std::string> tags = {"operator/" + task.operator_type, size_tag(task.must_read_bytes())};
  if (!task.family.empty()) tags.push_back("family/" + task.family);
  std::string family;
  nlohmann::json shape;
  if (read_recipe(task.recipe, family, shape)) {
    if (const FamilyGenerator* generator = find_generator(family)) {
      for (std::string& tag : generator->features(shape)) tags.push_back(std::move(tag));
    }
  }
  std::sort(tags.begin(), tags.end());
  tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
  return tags;
}

}  // namespace tailforge
