#include "agents/kernelopt/builtin_tasks.h"

#include <cctype>
#include <cstdio>

#include "agents/kernelopt/builtin_family.h"
#include "text/chars.h"

namespace tailforge {
namespace {

std::vector<KernelCatalogEntry> catalog() {
  std::vector<KernelCatalogEntry> entries;
  add_elementwise_tasks(entries);
  add_transpose_tasks(entries);
  add_row_reduction_tasks(entries);
  add_full_reduction_tasks(entries);
  add_softmax_tasks(entries);
  add_layernorm_tasks(entries);
  add_gemm_tasks(entries);
  add_matvec_tasks(entries);
  add_line_stencil_tasks(entries);
  add_grid_stencil_tasks(entries);
  add_pooling_tasks(entries);
  return entries;
}

using text::is_identifier_char;

}  // namespace

std::vector<KernelTask> builtin_kernel_tasks() {
  std::vector<KernelTask> tasks;
  for (KernelCatalogEntry& entry : catalog()) tasks.push_back(std::move(entry.task));
  return tasks;
}

std::vector<KernelCandidate> builtin_candidates(const KernelTask& task) {
  for (const KernelCatalogEntry& entry : catalog()) {
    if (entry.task.name == task.name) return entry.candidates(entry.task);
  }
  if (task.recipe.empty()) return {};
  Result<KernelCatalogEntry> rebuilt = entry_of_recipe(task.recipe, task.name);
  if (!rebuilt) return {};
  return rebuilt->candidates(rebuilt->task);
}

std::string fill_kernel_template(std::string_view text, const TemplateValues& values) {
  std::string filled;
  size_t position = 0;
  while (position < text.size()) {
    size_t open = text.find("$(", position);
    if (open == std::string_view::npos) break;
    size_t close = text.find(')', open);
    if (close == std::string_view::npos) break;
    std::string_view key = text.substr(open + 2, close - open - 2);
    filled.append(text.substr(position, open - position));
    const std::string* value = nullptr;
    for (const auto& [name, replacement] : values) {
      if (name == key) value = &replacement;
    }
    if (value) {
      filled += *value;
    } else {
      filled.append(text.substr(open, close + 1 - open));
    }
    position = close + 1;
  }
  filled.append(text.substr(position));
  return filled;
}

std::string kernel_prelude(const std::vector<std::pair<std::string, int>>& constants) {
  std::string text = "#include <cstdint>\n\n";
  for (const auto& [name, value] : constants) text += "constexpr int " + name + " = " + std::to_string(value) + ";\n";
  return text;
}

KernelCandidate make_builtin_candidate(const KernelTask& task, std::string strategy, std::string reasoning,
                                       std::string source) {
  KernelCandidate candidate;
  candidate.task = task.name;
  candidate.strategy = std::move(strategy);
  candidate.origin = "builtin";
  candidate.reasoning = std::move(reasoning);
  candidate.source = std::move(source);
  return candidate;
}

TemplateValues row_values(int rows, int cols, const TemplateValues& values) {
  TemplateValues all = {
      {"ROWS", std::to_string(rows)},
      {"COLS", std::to_string(cols)},
      {"ROW_BYTES", std::to_string(int64_t(cols) * 4)},
      {"ROW_KB", ratio_text(static_cast<double>(cols) * 4 / 1024)},
      {"PER_LANE", std::to_string((cols + 31) / 32)},
      {"REF_WARPS", std::to_string((rows + 31) / 32)},
  };
  all.insert(all.end(), values.begin(), values.end());
  return all;
}

std::string megabytes_text(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

std::string hbm_time_text(int64_t bytes) {
  double microseconds = static_cast<double>(bytes) / 3.0e12 * 1e6;
  char text[32];
  std::snprintf(text, sizeof text, "%.0f us", microseconds < 1 ? 1.0 : microseconds);
  return text;
}

std::string count_text(int64_t count, const std::string& singular, const std::string& plural) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural);
}

std::string ratio_text(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", ratio);
  return text;
}

bool mentions_identifier(const std::string& expression, const std::string& name) {
  for (size_t at = expression.find(name); at != std::string::npos; at = expression.find(name, at + 1)) {
    bool starts = at == 0 || !is_identifier_char(expression[at - 1]);
    size_t end = at + name.size();
    bool ends = end == expression.size() || !is_identifier_char(expression[end]);
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace tailforge
