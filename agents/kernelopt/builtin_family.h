// Private to the built-in kernelopt catalog (builtin_*.cpp): the entry each task family adds
// (the task and the generator of its candidates), the family template that builds those entries
// from a family's data, the shape space that lets the task generator write, read, check, draw and
// vary a family's shapes (generated_tasks.h), template filling for the CUDA text, and the figures
// the reasoning quotes. builtin_tasks.h and generated_tasks.h are the public face.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "verifier/kernelopt/kernel_task.h"

namespace tailforge {

struct KernelCatalogEntry {
  KernelTask task;
  std::function<std::vector<KernelCandidate>(const KernelTask&)> candidates;
};

using TemplateValues = std::vector<std::pair<std::string, std::string>>;

// `text` with every "$(key)" of `values` replaced by its value; other text is left alone.
std::string fill_kernel_template(std::string_view text, const TemplateValues& values);

KernelCandidate make_builtin_candidate(const KernelTask& task, std::string strategy, std::string reasoning,
                                       std::string source);

// One hand-written candidate of a family: its strategy, the generator of its kernel unit, and its
// reasoning, a template ($(KEY)) over the family's reasoning values.
template <typename Shape>
struct CandidateRecipe {
  std::string strategy;
  std::string (*source)(const Shape&);
  const char* reasoning;
};

// A task family as data: its shapes in catalog order, the task of a shape, the values its
// reasoning texts quote, and the candidates a shape gets.
template <typename Shape>
struct TaskFamily {
  std::vector<Shape> shapes;
  KernelTask (*task)(const Shape&);
  TemplateValues (*reasoning_values)(const Shape&);
  std::vector<CandidateRecipe<Shape>> (*recipes)(const Shape&);
};

// The entry of one shape of `family`, whose candidates follow the shape's recipes in order.
template <typename Shape>
KernelCatalogEntry family_entry(const TaskFamily<Shape>& family, const Shape& shape) {
  auto candidates = [shape, values_of = family.reasoning_values, recipes = family.recipes](const KernelTask& task) {
    TemplateValues values = values_of(shape);
    std::vector<KernelCandidate> built;
    for (const CandidateRecipe<Shape>& recipe : recipes(shape)) {
      built.push_back(make_builtin_candidate(task, recipe.strategy, fill_kernel_template(recipe.reasoning, values),
                                             recipe.source(shape)));
    }
    return built;
  };
  return {family.task(shape), candidates};
}

// Appends an entry per shape of `family`, whose candidates follow the shape's recipes in order.
template <typename Shape>
void add_family_tasks(std::vector<KernelCatalogEntry>& entries, const TaskFamily<Shape>& family) {
  for (const Shape& shape : family.shapes) entries.push_back(family_entry(family, shape));
}

// The generator's draws: the same sequence for the same seed on every platform (splitmix64; no
// <random> distribution, whose results the standard leaves to the library).
class ShapeRandom {
 public:
  explicit ShapeRandom(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [low, high]; low when high < low.
  int64_t between(int64_t low, int64_t high);
  // Log-uniform in [low, high] (low >= 1): small and large sizes equally likely per octave.
  int64_t log_between(int64_t low, int64_t high);
  // True with probability 1 / n.
  bool one_in(int n) { return between(1, n) == 1; }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(between(0, static_cast<int64_t>(items.size()) - 1))];
  }
  // `items` in an order drawn from this sequence (Fisher-Yates).
  template <typename T>
  void shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[static_cast<size_t>(between(0, i - 1))]);
  }

 private:
  uint64_t state_;
};

// How the task generator (generated_tasks.h) handles a family's shapes: a task's recipe is
// {"family": family, "shape": write(shape)} and read() gives the shape back (its name is not in
// the recipe: a catalog task keeps its own, a generated one gets name(shape)).
template <typename Shape>
struct ShapeSpace {
  const char* family;
  nlohmann::json (*write)(const Shape&);
  Shape (*read)(const nlohmann::json&);  // may throw nlohmann::json::exception on a malformed shape
  // Why the family's candidates (or the tolerance, or the time budget) rule the shape out; "" when
  // they take it.
  std::string (*problem)(const Shape&);
  std::string (*name)(const Shape&);  // the generated name: readable, encodes the shape, no catalog name's form
  // One drawer per kind of task the family makes (an operator type or a variant of the operator);
  // the generator cycles through every family's drawers by index.
  std::vector<Shape (*)(ShapeRandom&)> draws;
  // Shapes near `shape`, one group per kind of change (size, aspect, edges, operator); the caller
  // checks them, drops duplicates and takes from each group in turn.
  std::vector<std::vector<Shape>> (*neighbours)(const Shape&, ShapeRandom&);
  std::vector<std::string> (*features)(const Shape&);  // the family's own tags: "shape/ragged", "op/relu", ...
};

// The recipe text of a shape: {"family":..,"shape":{..}}, keys sorted, no spaces.
std::string recipe_text(const std::string& family, const nlohmann::json& shape);

// Appends an entry per shape of `family` whose task carries its family and recipe.
template <typename Shape>
void add_family_tasks(std::vector<KernelCatalogEntry>& entries, const TaskFamily<Shape>& family,
                      const ShapeSpace<Shape>& space) {
  for (const Shape& shape : family.shapes) {
    KernelCatalogEntry entry = family_entry(family, shape);
    entry.task.family = space.family;
    entry.task.recipe = recipe_text(space.family, space.write(shape));
    entries.push_back(std::move(entry));
  }
}

// A family's shape space with the shape type erased: shapes travel as the JSON of a recipe.
struct FamilyGenerator {
  std::string family;
  size_t draws = 0;  // the number of drawers
  // The entry of `shape` named `name` (empty: the family's generated name), with family and recipe
  // set; an error when the shape cannot be read or the family rules it out.
  std::function<Result<KernelCatalogEntry>(const nlohmann::json& shape, const std::string& name)> entry;
  std::function<nlohmann::json(size_t draw, ShapeRandom&)> draw;
  // The neighbour groups of `shape` (none when it cannot be read), unchecked.
  std::function<std::vector<std::vector<nlohmann::json>>(const nlohmann::json& shape, ShapeRandom&)> neighbours;
  std::function<std::vector<std::string>(const nlohmann::json& shape)> features;  // none when unreadable
};

template <typename Shape>
FamilyGenerator family_generator(const TaskFamily<Shape>& family, const ShapeSpace<Shape>& space) {
  auto read = [space](const nlohmann::json& json) -> std::optional<Shape> {
    try {
      return space.read(json);
    } catch (const nlohmann::json::exception&) {
      return std::nullopt;
    }
  };
  FamilyGenerator generator;
  generator.family = space.family;
  generator.draws = space.draws.size();
  generator.entry = [family, space, read](const nlohmann::json& json,
                                          const std::string& name) -> Result<KernelCatalogEntry> {
    std::optional<Shape> shape = read(json);
    if (!shape) return make_error(std::string(space.family) + " recipe: unreadable shape " + json.dump());
    std::string problem = space.problem(*shape);
    if (!problem.empty()) return make_error(std::string(space.family) + " recipe " + json.dump() + ": " + problem);
    shape->name = name.empty() ? space.name(*shape) : name;
    KernelCatalogEntry entry = family_entry(family, *shape);
    entry.task.family = space.family;
    entry.task.recipe = recipe_text(space.family, space.write(*shape));
    return entry;
  };
  generator.draw = [space](size_t draw, ShapeRandom& random) { return space.write(space.draws[draw](random)); };
  generator.neighbours = [space, read](const nlohmann::json& json, ShapeRandom& random) {
    std::vector<std::vector<nlohmann::json>> groups;
    std::optional<Shape> shape = read(json);
    if (!shape) return groups;
    for (const std::vector<Shape>& group : space.neighbours(*shape, random)) {
      std::vector<nlohmann::json>& written = groups.emplace_back();
      for (const Shape& near : group) written.push_back(space.write(near));
    }
    return groups;
  };
  generator.features = [space, read](const nlohmann::json& json) {
    std::optional<Shape> shape = read(json);
    return shape ? space.features(*shape) : std::vector<std::string>{};
  };
  return generator;
}

// The task and candidates a recipe rebuilds (generated_tasks.cpp), named `name`; an error when the
// recipe is not JSON, names no known family or holds a shape the family rules out.
Result<KernelCatalogEntry> entry_of_recipe(const std::string& recipe, const std::string& name);

// The opening of a kernel unit: "#include <cstdint>", a blank line, then "constexpr int NAME = VALUE;"
// for each of `constants` (the task's shape), in order.
std::string kernel_prelude(const std::vector<std::pair<std::string, int>>& constants);

// The figures of a row-major matrix that is processed row by row: ROWS, COLS, ROW_BYTES and ROW_KB
// (one row), PER_LANE (columns per lane when a warp takes a row) and REF_WARPS (the warps of a
// reference that gives each row one thread), followed by a family's own `values`.
TemplateValues row_values(int rows, int cols, const TemplateValues& values);

// "48.0 MB" (10^6 bytes).
std::string megabytes_text(int64_t bytes);
// The time to stream `bytes` once at ~3 TB/s (the H100's achievable HBM3 bandwidth): "16 us".
std::string hbm_time_text(int64_t bytes);
// "1 element", "3 elements".
std::string count_text(int64_t count, const std::string& singular, const std::string& plural);
// A ratio with one decimal: "2.5".
std::string ratio_text(double ratio);
// Whether `expression` uses the identifier `name` (not as part of a longer identifier).
bool mentions_identifier(const std::string& expression, const std::string& name);

// The families; each appends its tasks in a fixed order.
void add_elementwise_tasks(std::vector<KernelCatalogEntry>& entries);
void add_transpose_tasks(std::vector<KernelCatalogEntry>& entries);
void add_row_reduction_tasks(std::vector<KernelCatalogEntry>& entries);
void add_full_reduction_tasks(std::vector<KernelCatalogEntry>& entries);
void add_softmax_tasks(std::vector<KernelCatalogEntry>& entries);
void add_layernorm_tasks(std::vector<KernelCatalogEntry>& entries);
void add_gemm_tasks(std::vector<KernelCatalogEntry>& entries);
void add_matvec_tasks(std::vector<KernelCatalogEntry>& entries);
void add_line_stencil_tasks(std::vector<KernelCatalogEntry>& entries);
void add_grid_stencil_tasks(std::vector<KernelCatalogEntry>& entries);
void add_pooling_tasks(std::vector<KernelCatalogEntry>& entries);

// The families' generators, one per family, for generated_tasks.cpp.
FamilyGenerator elementwise_generator();
FamilyGenerator transpose_generator();
FamilyGenerator row_reduction_generator();
FamilyGenerator full_reduction_generator();
FamilyGenerator softmax_generator();
FamilyGenerator layernorm_generator();
FamilyGenerator gemm_generator();
FamilyGenerator matvec_generator();
FamilyGenerator line_stencil_generator();
FamilyGenerator grid_stencil_generator();
FamilyGenerator pooling_generator();

// Helpers of the families' shape spaces: "shape/ragged" or "shape/aligned".
inline std::string raggedness_tag(bool ragged) { return ragged ? "shape/ragged" : "shape/aligned"; }
// `value` moved to the nearest multiple of `step` (at least `step`).
inline int64_t round_to_multiple(int64_t value, int64_t step) {
  int64_t rounded = (value + step / 2) / step * step;
  return rounded < step ? step : rounded;
}
// An odd value near `value`: value plus or minus a drawn offset up to value / 16, made odd.
int64_t ragged_near(int64_t value, ShapeRandom& random);

}  // namespace tailforge
