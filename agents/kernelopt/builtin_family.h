// Private to the built-in kernelopt catalog (builtin_*.cpp): the entry each task family adds
// (the task and the generator of its candidates), template filling for the CUDA text, and the
// figures the reasoning quotes. builtin_tasks.h is the public face.
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
