// The built-in kernelopt catalog's family template (builtin_family.h): a family given as data
// (shapes, the task of a shape, reasoning values, candidate recipes) becomes one catalog entry per
// shape, in order, whose candidates follow the shape's recipes with their reasoning filled in.
#include <doctest/doctest.h>

#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

struct ToyShape {
  std::string name;
  int size = 0;
};

KernelTask toy_task(const ToyShape& shape) {
  return {.name = shape.name,
          .operator_type = kSingleOperator,
          .domain = "tensor",
          .description = "toy of " + std::to_string(shape.size),
          .inputs = {{"in", shape.size}},
          .output = {"out", shape.size},
          .reference_source = "reference " + std::to_string(shape.size)};
}

TemplateValues toy_values(const ToyShape& shape) {
  return {{"SIZE", std::to_string(shape.size)}, {"HALF", std::to_string(shape.size / 2)}};
}

std::string toy_plain_source(const ToyShape& shape) { return "plain " + std::to_string(shape.size); }
std::string toy_wide_source(const ToyShape& shape) { return "wide " + std::to_string(shape.size); }

// Large shapes get one more candidate, as families pick their recipes by shape.
std::vector<CandidateRecipe<ToyShape>> toy_recipes(const ToyShape& shape) {
  std::vector<CandidateRecipe<ToyShape>> recipes = {{"plain", toy_plain_source, "$(SIZE) elements"}};
  if (shape.size > 10) recipes.push_back({"wide", toy_wide_source, "$(HALF) pairs of $(SIZE); $(UNKNOWN) stays"});
  return recipes;
}

}  // namespace

TEST_CASE("kernelopt family: one entry per shape in order, candidates per recipe with filled reasoning") {
  std::vector<KernelCatalogEntry> entries;
  add_family_tasks(entries,
                   TaskFamily<ToyShape>{{{"toy_small", 4}, {"toy_large", 64}}, toy_task, toy_values, toy_recipes});
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].task.name == "toy_small");
  CHECK(entries[0].task.description == "toy of 4");
  CHECK(entries[1].task.name == "toy_large");
  CHECK(entries[1].task.reference_source == "reference 64");

  std::vector<std::vector<KernelCandidate>> candidates;
  for (const KernelCatalogEntry& entry : entries) candidates.push_back(entry.candidates(entry.task));
  // task / strategy / reasoning / source of every candidate, in order.
  std::vector<std::string> seen;
  for (const std::vector<KernelCandidate>& of_task : candidates) {
    for (const KernelCandidate& candidate : of_task) {
      CHECK(candidate.origin == "builtin");
      seen.push_back(candidate.task + " / " + candidate.strategy + " / " + candidate.reasoning + " / " +
                     candidate.source);
    }
  }
  CHECK(seen == std::vector<std::string>{
                    "toy_small / plain / 4 elements / plain 4",
                    "toy_large / plain / 64 elements / plain 64",
                    "toy_large / wide / 32 pairs of 64; $(UNKNOWN) stays / wide 64",
                });
}

TEST_CASE("kernelopt family: entries already there stay first") {
  std::vector<KernelCatalogEntry> entries;
  entries.push_back({toy_task({"earlier", 1}), [](const KernelTask&) { return std::vector<KernelCandidate>{}; }});
  add_family_tasks(entries, TaskFamily<ToyShape>{{{"toy", 2}}, toy_task, toy_values, toy_recipes});
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].task.name == "earlier");
  CHECK(entries[1].task.name == "toy");
}

TEST_CASE("kernelopt family: a unit's prelude declares the shape's constants in order") {
  CHECK(kernel_prelude({{"kRows", 4096}, {"kCols", 1001}}) ==
        "#include <cstdint>\n\nconstexpr int kRows = 4096;\nconstexpr int kCols = 1001;\n");
  CHECK(kernel_prelude({}) == "#include <cstdint>\n\n");
}

TEST_CASE("kernelopt family: row values, then the family's own") {
  TemplateValues values = row_values(100, 1000, {{"EXTRA", "x"}});
  CHECK(fill_kernel_template("$(ROWS) $(COLS) $(ROW_BYTES) $(ROW_KB) $(PER_LANE) $(REF_WARPS) $(EXTRA)", values) ==
        "100 1000 4000 3.9 32 4 x");
  CHECK(values.back().first == "EXTRA");
}

}  // namespace tailforge
