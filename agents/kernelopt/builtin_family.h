// Private to the built-in kernelopt catalog (builtin_*.cpp): the entry each task family adds
// (the task and the generator of its candidates), the family template that builds those entries
// from a family's data, template filling for the CUDA text, and the figures the reasoning quotes.
// builtin_tasks.h is the public face.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// Appends an entry per shape of `family`, whose candidates follow the shape's recipes in order.
template <typename Shape>
void add_family_tasks(std::vector<KernelCatalogEntry>& entries, const TaskFamily<Shape>& family) {
  for (const Shape& shape : family.shapes) {
    auto candidates = [shape, values_of = family.reasoning_values, recipes = family.recipes](const KernelTask& task) {
      TemplateValues values = values_of(shape);
      std::vector<KernelCandidate> built;
      for (const CandidateRecipe<Shape>& recipe : recipes(shape)) {
        built.push_back(make_builtin_candidate(task, recipe.strategy, fill_kernel_template(recipe.reasoning, values),
                                               recipe.source(shape)));
      }
      return built;
    };
    entries.push_back({family.task(shape), candidates});
  }
}

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

}  // namespace tailforge
