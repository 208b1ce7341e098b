// Row softmax tasks of the built-in kernelopt catalog (fusion): the reference runs four naive
// kernels (row max, exp into a buffer, row sum, divide); candidates fuse them per row. Outputs are
// probabilities below 1 and every implementation uses expf, so 1e-3 * (1 + |ref|) leaves room for
// orders of magnitude more than the few-ulp differences that reordering the row sum causes.
#include <algorithm>

#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

struct SoftmaxShape {
  std::string name;
  int rows = 0, cols = 0;
};

std::vector<SoftmaxShape> softmax_shapes() {
  return {{"softmax_rows_4096x1000", 4096, 1000}, {"softmax_rows_1024x4097", 1024, 4097}};
}

std::string prelude(const SoftmaxShape& shape) {
  return kernel_prelude({{"kRows", shape.rows}, {"kCols", shape.cols}}) +
         "constexpr float kLowest = -3.402823466e+38f;\n\n";
}

std::string reference_source(const SoftmaxShape& shape) {
  return prelude(shape) + R"(constexpr int64_t kElements = int64_t(kRows) * kCols;

__device__ float row_max[kRows];
__device__ float row_sum[kRows];
__device__ float exps[kElements];

__global__ void softmax_row_max(const float* x) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= kRows) return;
  float m = kLowest;
  for (int c = 0; c < kCols; ++c) m = fmaxf(m, x[int64_t(row) * kCols + c]);
  row_max[row] = m;
}

__global__ void softmax_exp(const float* x) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= kElements) return;
  exps[i] = expf(x[i] - row_max[i / kCols]);
}

__global__ void softmax_row_sum() {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= kRows) return;
  float s = 0.0f;
  for (int c = 0; c < kCols; ++c) s += exps[int64_t(row) * kCols + c];
  row_sum[row] = s;
}

__global__ void softmax_divide(float* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= kElements) return;
  out[i] = exps[i] / row_sum[i / kCols];
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const int row_blocks = (kRows + 127) / 128;
  const int element_blocks = int((kElements + 255) / 256);
  softmax_row_max<<<row_blocks, 128, 0, stream>>>(inputs[0]);
  softmax_exp<<<element_blocks, 256, 0, stream>>>(inputs[0]);
  softmax_row_sum<<<row_blocks, 128, 0, stream>>>();
  softmax_divide<<<element_blocks, 256, 0, stream>>>(output);
}
)";
}

// A warp-per-row unit: `comment` above the kernel, which takes a row with one warp, runs
// `statistics` (the row's max m and the sum s of exp(x - m)) and writes the row scaled by 1 / s.
std::string softmax_warp_unit(const SoftmaxShape& shape, const char* comment, const char* statistics) {
  return prelude(shape) + fill_kernel_template(R"(constexpr int kWarpsPerBlock = 8;

$(COMMENT)__global__ void softmax_warp(const float* __restrict__ x, float* __restrict__ out) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= kRows) return;  // the whole warp leaves together
  const float* in = x + int64_t(row) * kCols;
  float* dst = out + int64_t(row) * kCols;
  float m = kLowest;
$(STATISTICS)  const float inverse = 1.0f / s;
  for (int c = lane; c < kCols; c += 32) dst[c] = expf(in[c] - m) * inverse;
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  softmax_warp<<<(kRows + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * 32, 0, stream>>>(inputs[0], output);
}
)",
                                               {{"COMMENT", comment}, {"STATISTICS", statistics}});
}

std::string warp_source(const SoftmaxShape& shape) {
  return softmax_warp_unit(shape,
                           R"(// One warp per row, three coalesced passes over it (max, sum of exp, write); the row's
// re-reads mostly hit L1/L2.
)",
                           R"(  for (int c = lane; c < kCols; c += 32) m = fmaxf(m, in[c]);
  for (int offset = 16; offset > 0; offset >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));
  float s = 0.0f;
  for (int c = lane; c < kCols; c += 32) s += expf(in[c] - m);
  for (int offset = 16; offset > 0; offset >>= 1) s += __shfl_xor_sync(0xffffffffu, s, offset);
)");
}

std::string online_source(const SoftmaxShape& shape) {
  return softmax_warp_unit(
      shape, R"(// One warp per row. Pass 1 keeps a running max and a sum rescaled to it (online softmax), so the
// row is read twice instead of three times; lanes merge their (max, sum) pairs with shuffles.
)",
      R"(  float s = 0.0f;
  for (int c = lane; c < kCols; c += 32) {
    const float v = in[c];
    if (v > m) {
      s = s * expf(m - v) + 1.0f;
      m = v;
    } else {
      s += expf(v - m);
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float m_other = __shfl_xor_sync(0xffffffffu, m, offset);
    const float s_other = __shfl_xor_sync(0xffffffffu, s, offset);
    const float m_new = fmaxf(m, m_other);
    s = s * expf(m - m_new) + s_other * expf(m_other - m_new);
    m = m_new;
  }
)");
}

std::string block_source(const SoftmaxShape& shape) {
  return prelude(shape) + R"(constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Block-wide reductions; every thread gets the result. The trailing barrier lets the scratch be
// reused by the next call.
__device__ __forceinline__ float block_max(float value, float* scratch) {
  const int lane = threadIdx.x & 31;
  for (int offset = 16; offset > 0; offset >>= 1) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  if (lane == 0) scratch[threadIdx.x >> 5] = value;
  __syncthreads();
  value = lane < kWarps ? scratch[lane] : kLowest;
  for (int offset = 16; offset > 0; offset >>= 1) value = fmaxf(value, __shfl_xor_sync(0xffffffffu, value, offset));
  __syncthreads();
  return value;
}

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

// One block per row; the row is read from global memory once and kept in shared memory. Each
// thread only touches its own columns of `values`, so the reductions' barriers are enough.
__global__ void softmax_block(const float* __restrict__ x, float* __restrict__ out) {
  __shared__ float values[kCols];
  __shared__ float scratch[kWarps];
  const float* in = x + int64_t(blockIdx.x) * kCols;
  float* dst = out + int64_t(blockIdx.x) * kCols;
  float m = kLowest;
  for (int c = threadIdx.x; c < kCols; c += kThreads) {
    const float v = in[c];
    values[c] = v;
    m = fmaxf(m, v);
  }
  m = block_max(m, scratch);
  float s = 0.0f;
  for (int c = threadIdx.x; c < kCols; c += kThreads) {
    const float e = expf(values[c] - m);
    values[c] = e;
    s += e;
  }
  s = block_sum(s, scratch);
  const float inverse = 1.0f / s;
  for (int c = threadIdx.x; c < kCols; c += kThreads) dst[c] = values[c] * inverse;
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  softmax_block<<<kRows, kThreads, 0, stream>>>(inputs[0], output);
}
)";
}

TemplateValues reasoning_values(const SoftmaxShape& shape) {
  int64_t elements = int64_t(shape.rows) * shape.cols;
  int64_t minimal = elements * 8;
  // max reads x; exp reads x, writes exps; sum reads exps; divide reads exps, writes out
  int64_t reference = elements * 4 * 6;
  return row_values(
      shape.rows, shape.cols,
      {
          {"BYTES", megabytes_text(minimal)},
          {"TIME", hbm_time_text(minimal)},
          {"REF_BYTES", megabytes_text(reference)},
          {"ROWS_PER_SM", ratio_text(static_cast<double>(shape.rows) / 132)},
          {"L1_NOTE", shape.cols * 4 * 8 <= 48 * 1024
                          ? "a block's 8 rows are " + ratio_text(shape.cols * 4 * 8 / 1024.0) +
                                " KB, so the second and third passes mostly hit L1"
                          : "a block's 8 rows are " + ratio_text(shape.cols * 4 * 8 / 1024.0) +
                                " KB, more than L1 keeps reliably next to other blocks, so the re-reads partly come "
                                "from L2"},
      });
}

std::vector<CandidateRecipe<SoftmaxShape>> softmax_recipes(const SoftmaxShape&) {
  return {
      {"fused_warp_per_row", warp_source,
       "The reference is four launches: a row max and a row sum with one thread per row (only $(REF_WARPS) warps, "
       "uncoalesced row walks), and two elementwise passes that write and re-read a full exp buffer, $(REF_BYTES) "
       "of traffic against $(BYTES) for one read and one write. Fusing per row with a warp per row removes the "
       "buffer and the launches: lanes stride the row coalesced, the max and the sum are five __shfl_xor_sync "
       "steps each (xor so every lane has the result), and the write pass recomputes expf instead of storing it. "
       "The row is read three times, but $(L1_NOTE)."},
      {"fused_online_softmax", online_source,
       "Softmax over $(ROWS) rows of $(COLS). The reference's exp buffer and four launches cost $(REF_BYTES) of "
       "traffic; the fused minimum is $(BYTES) (about $(TIME)). A warp-per-row fused kernel still reads each row "
       "three times (max, sum, write). The online-softmax recurrence merges the first two: each lane keeps a running "
       "max m and a sum s relative to it, rescaling s by exp(m_old - m_new) when the max grows, and pairs (m, s) "
       "merge across lanes the same way with shuffles. Two reads per row instead of three, at the cost of an extra "
       "expf when the max changes. m starts at -FLT_MAX rather than -inf so that a merge of two empty states "
       "computes exp(0) * 0 instead of NaN; with $(COLS) columns every lane sees at least one element anyway."},
      {"fused_block_shared_row", block_source,
       "Where does the reference spend its time? Four kernels. The row max and row sum kernels give each of the "
       "$(ROWS) rows to one thread, $(REF_WARPS) warps in total, with each thread walking $(COLS) floats while its "
       "warp neighbours are $(ROW_KB) KB away; these are latency bound and badly uncoalesced. The exp and divide "
       "kernels are fine individually but exist only because of the unfused structure, and together they write and "
       "read back a $(ROWS)x$(COLS) exp buffer, so total traffic is $(REF_BYTES) versus $(BYTES) for a fused kernel "
       "that reads x once and writes the output once. So: fuse, and reduce each row cooperatively. A warp per row "
       "is the usual choice, but it re-reads the row from cache for each pass. Here I give each row a 256-thread "
       "block and keep the row in shared memory ($(ROW_KB) KB, well under the 48 KB static limit): the row is read "
       "from global memory exactly once, the exponentials overwrite it in place, and the final pass scales from "
       "shared memory, so global traffic is exactly the minimum. Reductions are two-level: __shfl_xor_sync inside "
       "each warp, the 8 warp results through shared scratch, then every warp reduces the 8 values so all threads "
       "hold the result without an extra broadcast. Each thread only reads back the columns it wrote itself, so no "
       "barrier is needed around the shared row beyond those inside the reductions; the reductions end with a "
       "barrier so the scratch can be reused. Occupancy: $(ROWS) blocks is about $(ROWS_PER_SM) per SM, and the "
       "shared footprint allows several resident blocks, so the SMs stay busy. The risk is the three barriers per "
       "row, which a warp-per-row kernel avoids; for long rows the single global read should win."},
  };
}

KernelTask softmax_task(const SoftmaxShape& shape) {
  int64_t elements = int64_t(shape.rows) * shape.cols;
  return {.name = shape.name,
          .operator_type = kFusionOperator,
          .domain = "tensor",
          .description = "softmax over each row of a " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols) +
                         " matrix; the reference runs max, exp, sum and divide as 4 kernels",
          .inputs = {{"x", elements}},
          .output = {"out", elements},
          .reference_source = reference_source(shape)};
}

// ---- the shape space ----

nlohmann::json write_softmax(const SoftmaxShape& shape) { return {{"rows", shape.rows}, {"cols", shape.cols}}; }

SoftmaxShape read_softmax(const nlohmann::json& shape) {
  return {"", shape.at("rows").get<int>(), shape.at("cols").get<int>()};
}

std::string softmax_problem(const SoftmaxShape& shape) {
  // The block-per-row candidate keeps a row in static shared memory (48 KB at most).
  if (shape.cols < 1 || shape.cols > 8192) return "cols outside [1, 8192]";
  if (shape.rows < 32 || shape.rows > (1 << 20)) return "rows outside [32, 2^20]";
  int64_t elements = int64_t(shape.rows) * shape.cols;
  if (elements < (1 << 18) || elements > (1 << 25)) return "elements outside [2^18, 2^25]";
  return "";
}

std::string softmax_name(const SoftmaxShape& shape) {
  return "softmax_r" + std::to_string(shape.rows) + "c" + std::to_string(shape.cols);
}

// Rows of 32 to 8192 columns, half of them a multiple of 32, over 1M to 16M elements.
SoftmaxShape draw_softmax(ShapeRandom& random) {
  for (;;) {
    int64_t cols = random.log_between(32, 8192);
    if (random.one_in(2)) cols = round_to_multiple(cols, 32);
    int64_t rows = random.log_between(int64_t(1) << 20, int64_t(16) << 20) / cols;
    SoftmaxShape shape{"", int(std::min<int64_t>(rows, 1 << 21)), int(cols)};
    if (softmax_problem(shape).empty()) return shape;
  }
}

std::vector<std::vector<SoftmaxShape>> softmax_neighbours(const SoftmaxShape& shape, ShapeRandom& random) {
  int rows = shape.rows, cols = shape.cols;
  return {
      {{"", rows / 2, cols}, {"", rows * 2, cols}, {"", rows, cols / 2}, {"", rows, cols * 2}},
      {{"", cols, rows}, {"", rows * 4, cols / 4}, {"", rows / 4, cols * 4}},
      {{"", rows, int(ragged_near(cols, random))}, {"", rows, int(round_to_multiple(cols, 32))}},
  };
}

std::vector<std::string> softmax_features(const SoftmaxShape& shape) {
  // The reference runs 4 kernels.
  return {raggedness_tag(shape.cols % 32 != 0), "fused/4_ops"};
}

ShapeSpace<SoftmaxShape> softmax_space() {
  return {"softmax",    write_softmax,  read_softmax,       softmax_problem,
          softmax_name, {draw_softmax}, softmax_neighbours, softmax_features};
}

TaskFamily<SoftmaxShape> softmax_family(std::vector<SoftmaxShape> shapes) {
  return {std::move(shapes), softmax_task, reasoning_values, softmax_recipes};
}

}  // namespace

void add_softmax_tasks(std::vector<KernelCatalogEntry>& entries) {
  add_family_tasks(entries, softmax_family(softmax_shapes()), softmax_space());
}

FamilyGenerator softmax_generator() { return family_generator(softmax_family({}), softmax_space()); }

}  // namespace tailforge
