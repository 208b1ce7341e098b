// Row reduction tasks of the built-in kernelopt catalog: sum, max, mean and L2 norm of each row of
// a row-major matrix. The reference gives each row to one thread that loops over it; candidates
// spread a row over a warp or a block. Tolerance stays at 1e-3: rows are at most a few thousand
// floats in [-1, 1), so a different summation order changes a row sum by ~1e-5 absolute, far
// inside 1e-3 * (1 + |ref|); the max is exact.
#include <algorithm>

#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

struct RowReduction {
  std::string name;
  std::string description;
  std::string domain;
  int rows = 0, cols = 0;
  bool is_max = false;    // else a sum
  std::string transform;  // of `value`, before combining
  std::string finish;     // of `acc`, the combined row
  std::string what;       // "sum", "max", ... for the reasoning
  std::string op;         // "sum", "max", "mean" or "l2norm": the recipe's name of the reduction
};

const std::vector<std::string>& row_reduction_ops() {
  static const std::vector<std::string> ops = {"sum", "max", "mean", "l2norm"};
  return ops;
}

// The reduction `op` of each row of a rows x cols matrix, named `name`.
RowReduction row_reduction_of(const std::string& name, const std::string& op, int rows, int cols) {
  std::string matrix = " of each row of a " + std::to_string(rows) + "x" + std::to_string(cols) + " matrix";
  RowReduction reduction{name, op + matrix, "tensor", rows, cols, false, "value", "acc", op, op};
  if (op == "max") reduction.is_max = true;
  if (op == "mean") reduction.finish = "acc / float(kCols)";
  if (op == "l2norm") {
    reduction.description = "L2 norm sqrt(sum x^2)" + matrix;
    reduction.domain = "linalg";
    reduction.transform = "value * value";
    reduction.finish = "sqrtf(acc)";
    reduction.what = "L2 norm";
  }
  return reduction;
}

std::vector<RowReduction> row_reductions() {
  RowReduction short_rows = row_reduction_of("row_sum_131072x257", "sum", 131072, 257);
  short_rows.description += " (short, odd-length rows)";
  return {
      row_reduction_of("row_sum_4096x1024", "sum", 4096, 1024),
      short_rows,
      row_reduction_of("row_max_16384x1001", "max", 16384, 1001),
      row_reduction_of("row_mean_4096x2048", "mean", 4096, 2048),
      row_reduction_of("row_l2norm_2048x3001", "l2norm", 2048, 3001),
  };
}

// Constants and the three device functions every unit of the task shares.
std::string prelude(const RowReduction& reduction) {
  return kernel_prelude({{"kRows", reduction.rows}, {"kCols", reduction.cols}}) +
         fill_kernel_template(R"(constexpr float kIdentity = $(IDENTITY);

__device__ __forceinline__ float combine(float a, float b) { return $(COMBINE); }
__device__ __forceinline__ float transform(float value) { return $(TRANSFORM); }
__device__ __forceinline__ float finish(float acc) { return $(FINISH); }

)",
                              {{"IDENTITY", reduction.is_max ? "-3.402823466e+38f" : "0.0f"},
                               {"COMBINE", reduction.is_max ? "fmaxf(a, b)" : "a + b"},
                               {"TRANSFORM", reduction.transform},
                               {"FINISH", reduction.finish}});
}

std::string reference_source(const RowReduction& reduction) {
  return prelude(reduction) +
         R"(// One thread per row, walking the row in order: neighbouring threads read addresses a row apart.
__global__ void row_reduce_naive(const float* in, float* out) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= kRows) return;
  float acc = kIdentity;
  for (int c = 0; c < kCols; ++c) acc = combine(acc, transform(in[int64_t(row) * kCols + c]));
  out[row] = finish(acc);
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  row_reduce_naive<<<(kRows + 127) / 128, 128, 0, stream>>>(inputs[0], output);
}
)";
}

std::string warp_source(const RowReduction& reduction) {
  return prelude(reduction) + R"(constexpr int kWarpsPerBlock = 8;

// One warp per row: lanes read the row 32 consecutive floats at a time, then a shuffle tree.
__global__ void row_reduce_warp(const float* __restrict__ in, float* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= kRows) return;  // the whole warp leaves together
  const float* line = in + int64_t(row) * kCols;
  float acc = kIdentity;
  for (int c = lane; c < kCols; c += 32) acc = combine(acc, transform(line[c]));
  for (int offset = 16; offset > 0; offset >>= 1) acc = combine(acc, __shfl_down_sync(0xffffffffu, acc, offset));
  if (lane == 0) out[row] = finish(acc);
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  row_reduce_warp<<<(kRows + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * 32, 0, stream>>>(inputs[0],
                                                                                                      output);
}
)";
}

std::string block_source(const RowReduction& reduction) {
  return prelude(reduction) + R"(constexpr int kThreads = 256;

// One block per row: strided partials, then a shared-memory tree halving the active threads.
__global__ void row_reduce_block(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float partial[kThreads];
  const int tid = threadIdx.x;
  const float* line = in + int64_t(blockIdx.x) * kCols;
  float acc = kIdentity;
  for (int c = tid; c < kCols; c += kThreads) acc = combine(acc, transform(line[c]));
  partial[tid] = acc;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width >>= 1) {
    if (tid < width) partial[tid] = combine(partial[tid], partial[tid + width]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = finish(partial[0]);
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  row_reduce_block<<<kRows, kThreads, 0, stream>>>(inputs[0], output);
}
)";
}

std::string warp_unroll4_source(const RowReduction& reduction) {
  return prelude(reduction) + R"(constexpr int kWarpsPerBlock = 8;

// One warp per row with four independent accumulators (four loads in flight per lane), then a
// butterfly of shuffles.
__global__ void row_reduce_warp_unroll4(const float* __restrict__ in, float* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= kRows) return;  // the whole warp leaves together
  const float* line = in + int64_t(row) * kCols;
  float acc0 = kIdentity, acc1 = kIdentity, acc2 = kIdentity, acc3 = kIdentity;
  int c = lane;
  for (; c + 96 < kCols; c += 128) {
    const float v0 = line[c];
    const float v1 = line[c + 32];
    const float v2 = line[c + 64];
    const float v3 = line[c + 96];
    acc0 = combine(acc0, transform(v0));
    acc1 = combine(acc1, transform(v1));
    acc2 = combine(acc2, transform(v2));
    acc3 = combine(acc3, transform(v3));
  }
  for (; c < kCols; c += 32) acc0 = combine(acc0, transform(line[c]));
  float acc = combine(combine(acc0, acc1), combine(acc2, acc3));
  for (int offset = 16; offset > 0; offset >>= 1) acc = combine(acc, __shfl_xor_sync(0xffffffffu, acc, offset));
  if (lane == 0) out[row] = finish(acc);
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  row_reduce_warp_unroll4<<<(kRows + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * 32, 0, stream>>>(
      inputs[0], output);
}
)";
}

TemplateValues reasoning_values(const RowReduction& reduction) {
  int64_t bytes = int64_t(reduction.rows) * reduction.cols * 4;
  int per_thread = (reduction.cols + 255) / 256;
  return row_values(
      reduction.rows, reduction.cols,
      {
          {"WHAT", reduction.what},
          {"BYTES", megabytes_text(bytes)},
          {"TIME", hbm_time_text(bytes)},
          {"PER_THREAD", std::to_string(per_thread)},
          {"WARP_BLOCKS", std::to_string((reduction.rows + 7) / 8)},
          {"TAIL", reduction.cols % 32 == 0
                       ? "The row length divides by 32, so every lane gets the same count"
                       : "The row length leaves " + count_text(reduction.cols % 32, "column", "columns") +
                             " over, which the loop bound covers for the first lanes"},
          {"COMBINE_NOTE", reduction.is_max ? "max is exact, so the order of the tree does not matter"
                                            : "the tree changes the summation order, which moves the result by a few "
                                              "ulps of the row's partial sums, well inside the tolerance"},
          {"FIT", per_thread <= 2 ? "With only " + std::to_string(reduction.cols) +
                                        " columns most of the 256 threads get one or two elements, so the loop is "
                                        "short and the tree's 8 synchronized steps are a large share of the time; this "
                                        "shape favours the warp version."
                                  : "Each thread accumulates about " + std::to_string(per_thread) +
                                        " elements before the tree, enough work to amortize its 8 synchronized steps."},
      });
}

std::vector<CandidateRecipe<RowReduction>> row_reduction_recipes(const RowReduction&) {
  return {
      {"warp_shuffle_reduce", warp_source,
       "The reference gives each of the $(ROWS) rows to one thread: only $(REF_WARPS) warps exist, and within a warp "
       "the 32 threads read addresses $(ROW_BYTES) bytes apart, so every load is a separate sector and the loop is a "
       "long serial dependency chain per thread. Mapping one warp to a row makes the loads coalesced (a lane reads "
       "every 32nd element, a warp reads 128 contiguous bytes per step), gives each lane $(PER_LANE) elements, and "
       "finishes with five __shfl_down_sync steps instead of shared memory. $(TAIL); $(COMBINE_NOTE). The kernel "
       "streams $(BYTES) once, about $(TIME) at full bandwidth."},
      {"block_tree_reduce", block_source,
       "Row $(WHAT) over a $(ROWS)x$(COLS) matrix ($(BYTES)). Reference bottleneck: one thread per row, uncoalesced "
       "loads $(ROW_BYTES) bytes apart across a warp and little parallelism. Here each row gets a 256-thread block; "
       "threads stride through the row coalesced, then a shared-memory tree halves the active threads each step with "
       "a __syncthreads between steps. $(FIT)"},
      {"warp_shuffle_unroll4", warp_unroll4_source,
       "What limits the reference? Each of $(ROWS) threads walks its own row of $(COLS) floats. Within a warp the "
       "addresses are $(ROW_BYTES) bytes apart, so a single load instruction touches 32 different sectors, and "
       "each thread has only the few loads that loop unrolling exposes outstanding. "
       "With only $(REF_WARPS) warps on the whole GPU that is nowhere near enough bytes in flight to approach the "
       "$(TIME) it takes to stream $(BYTES). The first fix is clear: a warp per row, lanes reading consecutive "
       "floats, so each load instruction fetches a full 128-byte line. That alone leaves each lane with a single "
       "accumulator, so its $(PER_LANE) combines form one serial chain and how many loads run ahead of it depends "
       "on how far the compiler chooses to unroll. I considered a block per row with a shared-memory tree, but for "
       "rows "
       "of $(COLS) floats a "
       "warp already has enough parallel work, and the tree adds eight synchronized steps per row. Instead, each lane "
       "keeps four "
       "independent accumulators and issues the four loads c, c+32, c+64, c+96 before combining any of them, so four "
       "128-byte lines per warp are in flight; a second loop takes the remaining columns one stride at a time. The "
       "four partials are combined, then a butterfly of __shfl_xor_sync gives every lane the total and lane 0 writes "
       "it. $(TAIL); $(COMBINE_NOTE). Register cost is four floats, so occupancy is unchanged."},
  };
}

KernelTask row_reduction_task(const RowReduction& reduction) {
  return {.name = reduction.name,
          .operator_type = kReductionOperator,
          .domain = reduction.domain,
          .description = reduction.description,
          .inputs = {{"in", int64_t(reduction.rows) * reduction.cols}},
          .output = {"out", reduction.rows},
          .reference_source = reference_source(reduction)};
}

// ---- the shape space ----

nlohmann::json write_row_reduction(const RowReduction& reduction) {
  return {{"op", reduction.op}, {"rows", reduction.rows}, {"cols", reduction.cols}};
}

RowReduction read_row_reduction(const nlohmann::json& shape) {
  return row_reduction_of("", shape.at("op").get<std::string>(), shape.at("rows").get<int>(),
                          shape.at("cols").get<int>());
}

std::string row_reduction_problem(const RowReduction& reduction) {
  const std::vector<std::string>& ops = row_reduction_ops();
  if (std::find(ops.begin(), ops.end(), reduction.op) == ops.end()) return "unknown reduction " + reduction.op;
  if (reduction.cols < 1 || reduction.cols > 16384) return "cols outside [1, 16384] (tolerance of a row sum)";
  if (reduction.rows < 32 || reduction.rows > (1 << 20)) return "rows outside [32, 2^20]";
  int64_t elements = int64_t(reduction.rows) * reduction.cols;
  if (elements < (1 << 18) || elements > (1 << 26)) return "elements outside [2^18, 2^26]";
  return "";
}

std::string row_reduction_name(const RowReduction& reduction) {
  return "row_" + reduction.op + "_r" + std::to_string(reduction.rows) + "c" + std::to_string(reduction.cols);
}

// Rows of 32 to 8192 columns, half of them a multiple of 32, over 2M to 32M elements.
RowReduction draw_row_reduction(ShapeRandom& random) {
  std::string op = random.pick(row_reduction_ops());
  for (;;) {
    int64_t cols = random.log_between(32, 8192);
    if (random.one_in(2)) cols = round_to_multiple(cols, 32);
    int64_t rows = random.log_between(int64_t(2) << 20, int64_t(32) << 20) / cols;
    RowReduction reduction = row_reduction_of("", op, int(std::min<int64_t>(rows, 1 << 21)), int(cols));
    if (row_reduction_problem(reduction).empty()) return reduction;
  }
}

std::vector<std::vector<RowReduction>> row_reduction_neighbours(const RowReduction& reduction, ShapeRandom& random) {
  const std::string& op = reduction.op;
  int rows = reduction.rows, cols = reduction.cols;
  std::vector<RowReduction> ops;
  for (const std::string& other : row_reduction_ops()) ops.push_back(row_reduction_of("", other, rows, cols));
  return {
      {row_reduction_of("", op, rows / 2, cols), row_reduction_of("", op, rows * 2, cols),
       row_reduction_of("", op, rows, cols / 2), row_reduction_of("", op, rows, cols * 2)},
      {row_reduction_of("", op, cols, rows), row_reduction_of("", op, rows * 4, cols / 4),
       row_reduction_of("", op, rows / 4, cols * 4)},
      {row_reduction_of("", op, rows, int(ragged_near(cols, random))),
       row_reduction_of("", op, rows, int(round_to_multiple(cols, 32)))},
      ops,
  };
}

std::vector<std::string> row_reduction_features(const RowReduction& reduction) {
  return {raggedness_tag(reduction.cols % 32 != 0), "op/" + reduction.op};
}

ShapeSpace<RowReduction> row_reduction_space() {
  return {"row_reduction",    write_row_reduction,  read_row_reduction,       row_reduction_problem,
          row_reduction_name, {draw_row_reduction}, row_reduction_neighbours, row_reduction_features};
}

TaskFamily<RowReduction> row_reduction_family(std::vector<RowReduction> reductions) {
  return {std::move(reductions), row_reduction_task, reasoning_values, row_reduction_recipes};
}

}  // namespace

void add_row_reduction_tasks(std::vector<KernelCatalogEntry>& entries) {
  add_family_tasks(entries, row_reduction_family(row_reductions()), row_reduction_space());
}

FamilyGenerator row_reduction_generator() { return family_generator(row_reduction_family({}), row_reduction_space()); }

}  // namespace tailforge
