// Row layernorm tasks of the built-in kernelopt catalog (fusion): out = (x - mean) / sqrt(var +
// 1e-5) * gamma + beta per row, where the reference runs three naive kernels (mean, variance,
// normalize). Tolerance stays at 1e-3: inputs in [-1, 1) give a row variance near 1/3 with no
// cancellation, and the mean and variance of a few thousand values agree to ~1e-6 relative across
// summation orders and the Welford recurrence.
#include <algorithm>

#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

struct LayernormShape {
  std::string name;
  int rows = 0, cols = 0;
};

std::vector<LayernormShape> layernorm_shapes() {
  return {{"layernorm_rows_4096x1024", 4096, 1024}, {"layernorm_rows_1024x4000", 1024, 4000}};
}

std::string prelude(const LayernormShape& shape) {
  return kernel_prelude({{"kRows", shape.rows}, {"kCols", shape.cols}}) + "constexpr float kEpsilon = 1e-5f;\n\n";
}

std::string reference_source(const LayernormShape& shape) {
  return prelude(shape) + R"(constexpr int64_t kElements = int64_t(kRows) * kCols;

__device__ float row_mean[kRows];
__device__ float row_inverse_std[kRows];

__global__ void layernorm_mean(const float* x) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= kRows) return;
  float s = 0.0f;
  for (int c = 0; c < kCols; ++c) s += x[int64_t(row) * kCols + c];
  row_mean[row] = s / float(kCols);
}

__global__ void layernorm_variance(const float* x) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= kRows) return;
  const float mean = row_mean[row];
  float s = 0.0f;
  for (int c = 0; c < kCols; ++c) {
    const float d = x[int64_t(row) * kCols + c] - mean;
    s += d * d;
  }
  row_inverse_std[row] = 1.0f / sqrtf(s / float(kCols) + kEpsilon);
}

__global__ void layernorm_normalize(const float* x, const float* gamma, const float* beta, float* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= kElements) return;
  const int row = int(i / kCols);
  const int col = int(i % kCols);
  out[i] = (x[i] - row_mean[row]) * row_inverse_std[row] * gamma[col] + beta[col];
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const int row_blocks = (kRows + 127) / 128;
  layernorm_mean<<<row_blocks, 128, 0, stream>>>(inputs[0]);
  layernorm_variance<<<row_blocks, 128, 0, stream>>>(inputs[0]);
  layernorm_normalize<<<int((kElements + 255) / 256), 256, 0, stream>>>(inputs[0], inputs[1], inputs[2], output);
}
)";
}

// A warp-per-row unit: `helpers` above the kernel, which takes a row with one warp, runs
// `statistics` (the row's mean and inverse_std) and writes the normalized row.
std::string layernorm_warp_unit(const LayernormShape& shape, const char* helpers, const char* statistics) {
  return prelude(shape) + fill_kernel_template(R"(constexpr int kWarpsPerBlock = 8;

$(HELPERS)__global__ void layernorm_warp(const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= kRows) return;  // the whole warp leaves together
  const float* in = x + int64_t(row) * kCols;
  float* dst = out + int64_t(row) * kCols;
$(STATISTICS)  for (int c = lane; c < kCols; c += 32) dst[c] = (in[c] - mean) * inverse_std * gamma[c] + beta[c];
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  layernorm_warp<<<(kRows + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * 32, 0, stream>>>(
      inputs[0], inputs[1], inputs[2], output);
}
)",
                                               {{"HELPERS", helpers}, {"STATISTICS", statistics}});
}

std::string warp_source(const LayernormShape& shape) {
  return layernorm_warp_unit(shape, R"(__device__ __forceinline__ float warp_sum(float value) {
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// One warp per row: mean, then the sum of squared deviations, then the normalized write, each a
// coalesced pass over the row; the re-reads come from L1/L2.
)",
                             R"(  float s = 0.0f;
  for (int c = lane; c < kCols; c += 32) s += in[c];
  const float mean = warp_sum(s) / float(kCols);
  float q = 0.0f;
  for (int c = lane; c < kCols; c += 32) {
    const float d = in[c] - mean;
    q += d * d;
  }
  const float inverse_std = 1.0f / sqrtf(warp_sum(q) / float(kCols) + kEpsilon);
)");
}

std::string welford_source(const LayernormShape& shape) {
  return layernorm_warp_unit(shape,
                             R"(// Welford statistics of a set of values: count, mean and the sum of squared deviations.
struct Moments {
  float count;
  float mean;
  float m2;
};

// Chan's merge of two sets; an empty `b` leaves `a` unchanged.
__device__ __forceinline__ Moments merge(Moments a, Moments b) {
  const float count = a.count + b.count;
  if (b.count == 0.0f) return a;
  if (a.count == 0.0f) return b;
  const float delta = b.mean - a.mean;
  const float weight = b.count / count;
  return {count, a.mean + delta * weight, a.m2 + b.m2 + delta * delta * a.count * weight};
}

// One warp per row: a single Welford pass gives mean and variance (lanes merge down to lane 0,
// which broadcasts), then one normalized write pass: the row is read twice.
)",
                             R"(  Moments moments = {0.0f, 0.0f, 0.0f};
  for (int c = lane; c < kCols; c += 32) {
    const float v = in[c];
    moments.count += 1.0f;
    const float delta = v - moments.mean;
    moments.mean += delta / moments.count;
    moments.m2 += delta * (v - moments.mean);
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    Moments other;
    other.count = __shfl_down_sync(0xffffffffu, moments.count, offset);
    other.mean = __shfl_down_sync(0xffffffffu, moments.mean, offset);
    other.m2 = __shfl_down_sync(0xffffffffu, moments.m2, offset);
    if (lane + offset < 32) moments = merge(moments, other);
  }
  const float mean = __shfl_sync(0xffffffffu, moments.mean, 0);
  const float m2 = __shfl_sync(0xffffffffu, moments.m2, 0);
  const float inverse_std = 1.0f / sqrtf(m2 / float(kCols) + kEpsilon);
)");
}

std::string block_source(const LayernormShape& shape) {
  return prelude(shape) + R"(constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// A block-wide sum every thread receives; the trailing barrier lets `scratch` be reused.
__device__ __forceinline__ float block_sum(float value, float* scratch) {
  const int lane = threadIdx.x & 31;
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  if (lane == 0) scratch[threadIdx.x >> 5] = value;
  __syncthreads();
  value = lane < kWarps ? scratch[lane] : 0.0f;
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  __syncthreads();
  return value;
}

// One block per row, the row cached in shared memory: one global read, two-pass statistics from
// shared memory, one global write. Each thread only revisits its own columns.
__global__ void layernorm_block(const float* __restrict__ x, const float* __restrict__ gamma,
                                const float* __restrict__ beta, float* __restrict__ out) {
  __shared__ float values[kCols];
  __shared__ float scratch[kWarps];
  const float* in = x + int64_t(blockIdx.x) * kCols;
  float* dst = out + int64_t(blockIdx.x) * kCols;
  float s = 0.0f;
  for (int c = threadIdx.x; c < kCols; c += kThreads) {
    const float v = in[c];
    values[c] = v;
    s += v;
  }
  const float mean = block_sum(s, scratch) / float(kCols);
  float q = 0.0f;
  for (int c = threadIdx.x; c < kCols; c += kThreads) {
    const float d = values[c] - mean;
    q += d * d;
  }
  const float inverse_std = 1.0f / sqrtf(block_sum(q, scratch) / float(kCols) + kEpsilon);
  for (int c = threadIdx.x; c < kCols; c += kThreads) dst[c] = (values[c] - mean) * inverse_std * gamma[c] + beta[c];
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  layernorm_block<<<kRows, kThreads, 0, stream>>>(inputs[0], inputs[1], inputs[2], output);
}
)";
}

TemplateValues reasoning_values(const LayernormShape& shape) {
  int64_t elements = int64_t(shape.rows) * shape.cols;
  int64_t minimal = elements * 8;
  int64_t reference = elements * 4 * 4;  // mean reads x, variance reads x, normalize reads x and writes
  return row_values(
      shape.rows, shape.cols,
      {
          {"BYTES", megabytes_text(minimal)},
          {"TIME", hbm_time_text(minimal)},
          {"REF_BYTES", megabytes_text(reference)},
          {"REGISTER_NOTE", shape.cols <= 1024
                                ? "Holding the row in registers would take " + std::to_string((shape.cols + 31) / 32) +
                                      " floats per lane, feasible at this width but it ties the kernel to the shape"
                                : "Holding the row in registers would take " + std::to_string((shape.cols + 31) / 32) +
                                      " floats per lane, which spills at this width"},
      });
}

std::vector<CandidateRecipe<LayernormShape>> layernorm_recipes(const LayernormShape&) {
  return {
      {"fused_warp_per_row", warp_source,
       "Three launches, two of them with one thread per row ($(REF_WARPS) warps, uncoalesced walks $(ROW_KB) KB "
       "apart). One warp per row fuses all three: coalesced passes for the mean, the squared deviations and the "
       "write, each reduction five __shfl_xor_sync steps, no global temporaries. Same two-pass variance as the "
       "reference, so the numbers match closely."},
      {"fused_welford_warp", welford_source,
       "Layernorm of $(ROWS) rows of $(COLS) floats with gamma and beta. The reference reads x three times through "
       "three kernels ($(REF_BYTES)); the two statistics kernels run one thread per row, so they are both "
       "uncoalesced and short of parallelism. A fused warp-per-row kernel fixes both, but the textbook two-pass "
       "variance still reads the row three times (mean, deviations, write). Welford's recurrence gets mean and M2 in "
       "one pass without the cancellation of sum(x^2) - n mean^2; each lane runs it over its $(PER_LANE) columns, "
       "then lanes merge with Chan's formula through __shfl_down_sync down to lane 0, which broadcasts with "
       "__shfl_sync. The merge guards empty sets, and the lanes beyond 32 - offset skip merging, so no "
       "garbage enters lane 0. Two reads per row; the price is a division per element in the Welford update, "
       "cheap next to the memory time of about $(TIME)."},
      {"fused_block_shared_row", block_source,
       "Starting from the numbers: $(ROWS)x$(COLS) floats, so one read of x and one write of the output is "
       "$(BYTES), about $(TIME) at HBM speed, while the reference's three kernels move $(REF_BYTES) and its two "
       "statistics kernels are latency bound, one thread per row ($(REF_WARPS) warps) walking rows whose "
       "neighbours are $(ROW_KB) KB apart. Fusion is the obvious step; the question is how to avoid re-reading the "
       "row for the second and third passes. Options: (1) a warp per row re-reading from cache, simple but it "
       "relies on L1 keeping 8 rows per block; (2) Welford in one pass plus a write pass, two reads; (3) keep the "
       "row on chip. $(REGISTER_NOTE), so I keep it in shared memory: $(ROW_KB) KB per block, well under the "
       "static 48 KB. With a 256-thread block per row, every thread loads its strided columns once, coalesced, into "
       "shared memory while accumulating the sum; the mean comes from a two-level reduction (warp shuffles, 8 warp "
       "partials in shared scratch, then every warp reduces those 8 so all threads hold the result); the squared "
       "deviations are computed from shared memory in a second pass (exact two-pass variance, no Welford needed "
       "since the data is on chip); the write pass applies gamma and beta. Each thread only reads back columns it "
       "stored itself, so the barriers inside the reductions suffice. gamma and beta are read once per row per "
       "column, $(COLS) floats that stay in L2 across all rows."},
  };
}

KernelTask layernorm_task(const LayernormShape& shape) {
  int64_t elements = int64_t(shape.rows) * shape.cols;
  return {.name = shape.name,
          .operator_type = kFusionOperator,
          .domain = "tensor",
          .description = "layernorm over each row of a " + std::to_string(shape.rows) + "x" +
                         std::to_string(shape.cols) +
                         " matrix with gamma and beta (eps 1e-5); the reference runs mean, variance and normalize as "
                         "3 kernels",
          .inputs = {{"x", elements}, {"gamma", shape.cols}, {"beta", shape.cols}},
          .output = {"out", elements},
          .reference_source = reference_source(shape)};
}

// ---- the shape space ----

nlohmann::json write_layernorm(const LayernormShape& shape) { return {{"rows", shape.rows}, {"cols", shape.cols}}; }

LayernormShape read_layernorm(const nlohmann::json& shape) {
  return {"", shape.at("rows").get<int>(), shape.at("cols").get<int>()};
}

std::string layernorm_problem(const LayernormShape& shape) {
  // The block-per-row candidate keeps a row in static shared memory (48 KB at most).
  if (shape.cols < 1 || shape.cols > 8192) return "cols outside [1, 8192]";
  if (shape.rows < 32 || shape.rows > (1 << 20)) return "rows outside [32, 2^20]";
  int64_t elements = int64_t(shape.rows) * shape.cols;
  if (elements < (1 << 18) || elements > (1 << 25)) return "elements outside [2^18, 2^25]";
  return "";
}

std::string layernorm_name(const LayernormShape& shape) {
  return "layernorm_r" + std::to_string(shape.rows) + "c" + std::to_string(shape.cols);
}

// Rows of 32 to 8192 columns, half of them a multiple of 32, over 1M to 16M elements.
LayernormShape draw_layernorm(ShapeRandom& random) {
  for (;;) {
    int64_t cols = random.log_between(32, 8192);
    if (random.one_in(2)) cols = round_to_multiple(cols, 32);
    int64_t rows = random.log_between(int64_t(1) << 20, int64_t(16) << 20) / cols;
    LayernormShape shape{"", int(std::min<int64_t>(rows, 1 << 21)), int(cols)};
    if (layernorm_problem(shape).empty()) return shape;
  }
}

std::vector<std::vector<LayernormShape>> layernorm_neighbours(const LayernormShape& shape, ShapeRandom& random) {
  int rows = shape.rows, cols = shape.cols;
  return {
      {{"", rows / 2, cols}, {"", rows * 2, cols}, {"", rows, cols / 2}, {"", rows, cols * 2}},
      {{"", cols, rows}, {"", rows * 4, cols / 4}, {"", rows / 4, cols * 4}},
      {{"", rows, int(ragged_near(cols, random))}, {"", rows, int(round_to_multiple(cols, 32))}},
  };
}

std::vector<std::string> layernorm_features(const LayernormShape& shape) {
  // The reference runs 3 kernels.
  return {raggedness_tag(shape.cols % 32 != 0), "fused/3_ops"};
}

ShapeSpace<LayernormShape> layernorm_space() {
  return {"layernorm",    write_layernorm,  read_layernorm,       layernorm_problem,
          layernorm_name, {draw_layernorm}, layernorm_neighbours, layernorm_features};
}

TaskFamily<LayernormShape> layernorm_family(std::vector<LayernormShape> shapes) {
  return {std::move(shapes), layernorm_task, reasoning_values, layernorm_recipes};
}

}  // namespace

void add_layernorm_tasks(std::vector<KernelCatalogEntry>& entries) {
  add_family_tasks(entries, layernorm_family(layernorm_shapes()), layernorm_space());
}

FamilyGenerator layernorm_generator() { return family_generator(layernorm_family({}), layernorm_space()); }

}  // namespace tailforge
