// Matrix-vector tasks of the built-in kernelopt catalog (operator type "matmul"): y = A x, where
// the reference gives each row to one thread, and y = A^T x, where the reference gives each column
// to one thread looping over all rows. Tolerance stays at 1e-3: a dot product of a few thousand
// terms in [-1, 1) has |y| ~ sqrt(K / 9) and reordering it moves the result by ~1e-5 absolute.
#include <algorithm>

#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

struct MatvecShape {
  std::string name;
  int rows = 0, cols = 0;   // of A
  bool transposed = false;  // y = A^T x (length cols) instead of y = A x (length rows)
};

std::vector<MatvecShape> matvec_shapes() {
  return {{"matvec_6000x3001", 6000, 3001, false}, {"matvec_transposed_4096x4096", 4096, 4096, true}};
}

std::string prelude(const MatvecShape& shape) {
  return kernel_prelude({{"kRows", shape.rows}, {"kCols", shape.cols}}) + "\n";
}

// ---- y = A x ----

std::string row_reference_source(const MatvecShape& shape) {
  return prelude(shape) + R"(// One thread per row: a warp's 32 threads read 32 rows at once, addresses a row apart.
__global__ void matvec_naive(const float* a, const float* x, float* y) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= kRows) return;
  float acc = 0.0f;
  for (int c = 0; c < kCols; ++c) acc += a[int64_t(row) * kCols + c] * x[c];
  y[row] = acc;
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  matvec_naive<<<(kRows + 127) / 128, 128, 0, stream>>>(inputs[0], inputs[1], output);
}
)";
}

const char* kRowWarpLaunch = R"(
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  matvec_warp<<<(kRows + kWarpsPerBlock - 1) / kWarpsPerBlock, kWarpsPerBlock * 32, 0, stream>>>(inputs[0], inputs[1],
                                                                                                 output);
}
)";

std::string row_warp_source(const MatvecShape& shape) {
  return prelude(shape) + R"(constexpr int kWarpsPerBlock = 8;

// One warp per row: coalesced reads of the row, x from cache, a shuffle tree at the end.
__global__ void matvec_warp(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= kRows) return;  // the whole warp leaves together
  const float* line = a + int64_t(row) * kCols;
  float acc = 0.0f;
  for (int c = lane; c < kCols; c += 32) acc += line[c] * x[c];
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (lane == 0) y[row] = acc;
}
)" + kRowWarpLaunch;
}

std::string row_warp_unroll4_source(const MatvecShape& shape) {
  return prelude(shape) + R"(constexpr int kWarpsPerBlock = 8;

// One warp per row with four independent accumulators, so four row loads are in flight per lane.
__global__ void matvec_warp(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y) {
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= kRows) return;  // the whole warp leaves together
  const float* line = a + int64_t(row) * kCols;
  float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
  int c = lane;
  for (; c + 96 < kCols; c += 128) {
    acc0 += line[c] * x[c];
    acc1 += line[c + 32] * x[c + 32];
    acc2 += line[c + 64] * x[c + 64];
    acc3 += line[c + 96] * x[c + 96];
  }
  for (; c < kCols; c += 32) acc0 += line[c] * x[c];
  float acc = (acc0 + acc1) + (acc2 + acc3);
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  if (lane == 0) y[row] = acc;
}
)" + kRowWarpLaunch;
}

std::string row_shared_x_source(const MatvecShape& shape) {
  return prelude(shape) + R"(constexpr int kWarpsPerBlock = 16;
constexpr int kThreads = kWarpsPerBlock * 32;

// x is staged once per block in shared memory and shared by its 16 rows (one warp each), so the
// streaming rows of A cannot evict it from L1.
__global__ void matvec_shared_x(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float x_shared[kCols];
  for (int c = threadIdx.x; c < kCols; c += kThreads) x_shared[c] = x[c];
  __syncthreads();
  const int lane = threadIdx.x & 31;
  const int row = blockIdx.x * kWarpsPerBlock + (threadIdx.x >> 5);
  if (row >= kRows) return;  // after the barrier; the whole warp leaves together
  const float* line = a + int64_t(row) * kCols;
  float acc0 = 0.0f, acc1 = 0.0f;
  int c = lane;
  for (; c + 32 < kCols; c += 64) {
    acc0 += line[c] * x_shared[c];
    acc1 += line[c + 32] * x_shared[c + 32];
  }
  if (c < kCols) acc0 += line[c] * x_shared[c];
  float acc = acc0 + acc1;
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  if (lane == 0) y[row] = acc;
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  matvec_shared_x<<<(kRows + kWarpsPerBlock - 1) / kWarpsPerBlock, kThreads, 0, stream>>>(inputs[0], inputs[1],
                                                                                          output);
}
)";
}

// ---- y = A^T x ----

std::string column_reference_source(const MatvecShape& shape) {
  return prelude(shape) + R"(// One thread per output column looping over every row: coalesced, but only kCols threads.
__global__ void matvec_transposed_naive(const float* a, const float* x, float* y) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= kCols) return;
  float acc = 0.0f;
  for (int r = 0; r < kRows; ++r) acc += a[int64_t(r) * kCols + col] * x[r];
  y[col] = acc;
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  matvec_transposed_naive<<<(kCols + 127) / 128, 128, 0, stream>>>(inputs[0], inputs[1], output);
}
)";
}

const char* kSliceConstants = R"(constexpr int kSlices = 32;
constexpr int kRowsPerSlice = (kRows + kSlices - 1) / kSlices;
constexpr int kThreads = 256;

)";

const char* kScalarSlicePartials = R"(__device__ float partials[kSlices][kCols];

// Pass 1: block (column block, slice) sums its slice of rows for one column per thread.
__global__ void slice_partials(const float* __restrict__ a, const float* __restrict__ x) {
  const int col = blockIdx.x * kThreads + threadIdx.x;
  if (col >= kCols) return;
  const int begin = blockIdx.y * kRowsPerSlice;
  const int end = begin + kRowsPerSlice < kRows ? begin + kRowsPerSlice : kRows;
  float acc = 0.0f;
  for (int r = begin; r < end; ++r) acc += a[int64_t(r) * kCols + col] * x[r];
  partials[blockIdx.y][col] = acc;
}

// Pass 2: one thread per column adds the slices in order.
__global__ void sum_slices(float* __restrict__ y) {
  const int col = blockIdx.x * kThreads + threadIdx.x;
  if (col >= kCols) return;
  float acc = 0.0f;
  for (int s = 0; s < kSlices; ++s) acc += partials[s][col];
  y[col] = acc;
}

)";

std::string split_two_pass_source(const MatvecShape& shape) {
  return prelude(shape) + kSliceConstants + kScalarSlicePartials +
         R"(void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const dim3 grid((kCols + kThreads - 1) / kThreads, kSlices);
  slice_partials<<<grid, kThreads, 0, stream>>>(inputs[0], inputs[1]);
  sum_slices<<<(kCols + kThreads - 1) / kThreads, kThreads, 0, stream>>>(output);
}
)";
}

std::string split_atomic_source(const MatvecShape& shape) {
  return prelude(shape) + kSliceConstants +
         R"(// Each block (column block, slice) adds its slice's partial dot products into y atomically.
__global__ void slice_atomic(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y) {
  const int col = blockIdx.x * kThreads + threadIdx.x;
  if (col >= kCols) return;
  const int begin = blockIdx.y * kRowsPerSlice;
  const int end = begin + kRowsPerSlice < kRows ? begin + kRowsPerSlice : kRows;
  float acc0 = 0.0f, acc1 = 0.0f;
  int r = begin;
  for (; r + 1 < end; r += 2) {
    acc0 += a[int64_t(r) * kCols + col] * x[r];
    acc1 += a[int64_t(r + 1) * kCols + col] * x[r + 1];
  }
  if (r < end) acc0 += a[int64_t(r) * kCols + col] * x[r];
  atomicAdd(&y[col], acc0 + acc1);
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  // The launch is repeated for timing, so y is zeroed on the stream before every accumulation.
  cudaMemsetAsync(output, 0, sizeof(float) * kCols, stream);
  const dim3 grid((kCols + kThreads - 1) / kThreads, kSlices);
  slice_atomic<<<grid, kThreads, 0, stream>>>(inputs[0], inputs[1], output);
}
)";
}

std::string split_float4_source(const MatvecShape& shape) {
  return prelude(shape) + kSliceConstants + kScalarSlicePartials +
         R"(static_assert(kCols % 4 == 0, "float4 rows need the row length to divide by 4");
constexpr int kQuads = kCols / 4;

// Pass 1, vectorized: each thread owns 4 adjacent columns and reads them as one float4 per row.
__global__ void slice_partials_float4(const float* __restrict__ a, const float* __restrict__ x) {
  const int quad = blockIdx.x * kThreads + threadIdx.x;
  if (quad >= kQuads) return;
  const int begin = blockIdx.y * kRowsPerSlice;
  const int end = begin + kRowsPerSlice < kRows ? begin + kRowsPerSlice : kRows;
  const float4* a4 = reinterpret_cast<const float4*>(a);
  float4 acc = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int r = begin; r < end; ++r) {
    const float4 v = a4[int64_t(r) * kQuads + quad];
    const float xr = x[r];
    acc.x += v.x * xr;
    acc.y += v.y * xr;
    acc.z += v.z * xr;
    acc.w += v.w * xr;
  }
  float* slot = &partials[blockIdx.y][quad * 4];
  slot[0] = acc.x;
  slot[1] = acc.y;
  slot[2] = acc.z;
  slot[3] = acc.w;
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  if ((reinterpret_cast<uintptr_t>(inputs[0]) & 15u) == 0) {
    const dim3 grid((kQuads + kThreads - 1) / kThreads, kSlices);
    slice_partials_float4<<<grid, kThreads, 0, stream>>>(inputs[0], inputs[1]);
  } else {
    const dim3 grid((kCols + kThreads - 1) / kThreads, kSlices);
    slice_partials<<<grid, kThreads, 0, stream>>>(inputs[0], inputs[1]);
  }
  sum_slices<<<(kCols + kThreads - 1) / kThreads, kThreads, 0, stream>>>(output);
}
)";
}

// ---- reasoning ----

TemplateValues reasoning_values(const MatvecShape& shape) {
  int64_t bytes = int64_t(shape.rows) * shape.cols * 4;
  int out = shape.transposed ? shape.cols : shape.rows;
  return {
      {"ROWS", std::to_string(shape.rows)},
      {"COLS", std::to_string(shape.cols)},
      {"BYTES", megabytes_text(bytes)},
      {"TIME", hbm_time_text(bytes)},
      {"ROW_BYTES", std::to_string(int64_t(shape.cols) * 4)},
      {"X_KB", ratio_text((shape.transposed ? shape.rows : shape.cols) * 4 / 1024.0)},
      {"REF_WARPS", std::to_string((out + 31) / 32)},
      {"PER_LANE", std::to_string((shape.cols + 31) / 32)},
      {"SLICE_ROWS", std::to_string((shape.rows + 31) / 32)},
      {"SLICE_BLOCKS", std::to_string(((shape.cols + 255) / 256) * 32)},
      {"QUAD_BLOCKS", std::to_string(((shape.cols / 4 + 255) / 256) * 32)},
      {"SHARED_BLOCKS", std::to_string(228 * 1024 / ((shape.transposed ? shape.rows : shape.cols) * 4))},
      {"PARTIAL_MB", megabytes_text(int64_t(32) * shape.cols * 4 * 2)},
  };
}

std::vector<CandidateRecipe<MatvecShape>> matvec_recipes(const MatvecShape& shape) {
  if (!shape.transposed) {
    return {
        {"warp_per_row_shuffle", row_warp_source,
         "y = A x with A $(ROWS)x$(COLS): $(BYTES) to stream once, about $(TIME); x is $(X_KB) KB and stays cached. "
         "The reference's thread-per-row loop makes a warp read 32 rows $(ROW_BYTES) bytes apart per step, so every "
         "load is its own sector. A warp per row reads 128 contiguous bytes per step instead and reduces with "
         "__shfl_down_sync; each lane handles $(PER_LANE) columns, the loop bound covers the odd tail."},
        {"warp_per_row_unroll4", row_warp_unroll4_source,
         "Matvec is bandwidth bound: $(BYTES) of A read once, two flops per 4 bytes. The reference's thread-per-row "
         "loop is uncoalesced (a warp's loads are $(ROW_BYTES) bytes apart) and it has only $(REF_WARPS) warps with a "
         "serial dependency through the accumulator. A warp per row fixes coalescing. To also fix latency, each lane "
         "keeps four independent accumulators over columns c, c+32, c+64, c+96, which puts four 128-byte lines per "
         "warp "
         "in flight; a scalar loop finishes the $(COLS) % 128 remainder, and an xor-shuffle butterfly combines lanes."},
        {"warp_per_row_shared_x", row_shared_x_source,
         "Two inputs with very different reuse: A ($(ROWS)x$(COLS), $(BYTES)) is read exactly once, x ($(X_KB) KB) is "
         "read by every row. The reference walks each row in its own thread, so its A loads are uncoalesced and its "
         "x loads are uniform across the warp but compete in L1 with the streaming A lines. I move to one warp per "
         "row for coalescing, and then the question is where x should live. Relying on L1 usually works, but A "
         "streams $(ROW_BYTES) bytes per row through the same cache, and every eviction of x means an L2 round trip "
         "on the critical path. Staging x in shared memory once per block removes that uncertainty: with 16 warps "
         "(16 rows) per block, the $(X_KB) KB copy is amortized over 16 rows, and the shared reads x_shared[c] for "
         "consecutive lanes hit consecutive banks, so they are conflict-free. The staging loop comes before the "
         "__syncthreads and the out-of-range check after it, so no thread skips the barrier. Each lane keeps two "
         "accumulators to have two A loads in flight. The shared footprint would allow $(SHARED_BLOCKS) "
         "blocks per SM, more than the 4 that the 2048-thread limit allows for 512-thread blocks, so occupancy is "
         "unaffected."},
    };
  }
  return {
      {"split_rows_two_pass", split_two_pass_source,
       "y = A^T x over a $(ROWS)x$(COLS) A. The reference is coalesced (consecutive threads, consecutive columns) "
       "but has only $(COLS) threads, $(REF_WARPS) warps, each walking all $(ROWS) rows with only a few loads in "
       "flight: far too little parallelism to stream $(BYTES) (about $(TIME) at full bandwidth). Splitting the rows "
       "into 32 "
       "slices of $(SLICE_ROWS) gives $(SLICE_BLOCKS) blocks; each thread writes its slice's partial to a "
       "__device__ array, and a second kernel adds the 32 partials per column in a fixed order, so the result is "
       "deterministic. The partials cost $(PARTIAL_MB) of extra traffic, small next to A."},
      {"split_rows_atomic", split_atomic_source,
       "Too few threads is the problem: $(COLS) columns, one thread each, each walking $(ROWS) rows serially. I "
       "split the rows into 32 slices ($(SLICE_BLOCKS) blocks) and let each thread atomicAdd its slice's partial "
       "into y; two accumulators per thread keep two loads in flight. Only 32 atomics per column, so contention is "
       "negligible. y must be zeroed before every call since the harness repeats the launch, so tf_launch issues "
       "cudaMemsetAsync on the same stream first. Atomic order varies, so the last bits of y can differ run to run."},
      {"split_rows_float4_columns", split_float4_source,
       "Thinking about this one in terms of bytes in flight. A is $(ROWS)x$(COLS) floats, $(BYTES), read exactly "
       "once; x has $(ROWS) entries, each used by all $(COLS) columns. The reference launches $(COLS) threads, one "
       "per column, and each loops over $(ROWS) rows: its loads are coalesced, since a warp reads 128 contiguous "
       "bytes of one row, but there are only $(REF_WARPS) warps, fewer than one per SM scheduler, and each has at most "
       "the "
       "handful of loads that loop unrolling exposes outstanding. Against several hundred nanoseconds of DRAM "
       "latency per round trip that is far too few bytes in flight to get near the ~$(TIME) a streaming read "
       "needs. Parallelism has to come from splitting the reduction "
       "dimension. 32 row slices multiply the threads by 32; the partial sums go to a __device__ array and a tiny "
       "second kernel sums them per column in order (deterministic, unlike atomics). On top of that, I widen each "
       "thread to four adjacent columns loaded as one float4 per row: that is 16 bytes per load instruction instead "
       "of 4, a quarter of the load instructions for the same bytes, and each x[r] load now serves four FMAs. The "
       "catch: float4 loads need every row start to be 16-byte aligned, which holds because $(COLS) is divisible by "
       "4 (a static_assert documents it) and the base pointer is checked at run time, with the scalar slice kernel as "
       "the fallback. With four columns per thread the grid shrinks to $(QUAD_BLOCKS) blocks of 256 threads, still "
       "several per SM. Partials are written as four scalar stores into the same $(PARTIAL_MB) array the scalar path "
       "uses, so both paths share the second kernel."},
  };
}

KernelTask matvec_task(const MatvecShape& shape) {
  std::string dims = std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
  return {.name = shape.name,
          .operator_type = kMatmulOperator,
          .domain = "linalg",
          .description = shape.transposed ? "y = A^T x with A " + dims + " row-major (column sums weighted by x)"
                                          : "y = A x with A " + dims + " row-major",
          .inputs = {{"a", int64_t(shape.rows) * shape.cols}, {"x", shape.transposed ? shape.rows : shape.cols}},
          .output = {"y", shape.transposed ? shape.cols : shape.rows},
          .reference_source = shape.transposed ? column_reference_source(shape) : row_reference_source(shape),
          .flops = 2.0 * shape.rows * shape.cols};
}

// ---- the shape space ----

nlohmann::json write_matvec(const MatvecShape& shape) {
  return {{"rows", shape.rows}, {"cols", shape.cols}, {"transposed", shape.transposed}};
}

MatvecShape read_matvec(const nlohmann::json& shape) {
  return {"", shape.at("rows").get<int>(), shape.at("cols").get<int>(), shape.at("transposed").get<bool>()};
}

std::string matvec_problem(const MatvecShape& shape) {
  if (shape.rows < 32 || shape.cols < 32) return "a side below 32";
  // y = A x stages x in static shared memory (48 KB at most); A^T x reads rows as float4s.
  if (!shape.transposed && shape.cols > 8192) return "cols above 8192 (x staged in shared memory)";
  if (shape.transposed && (shape.cols % 4 != 0 || shape.cols > 65536)) return "cols not a multiple of 4 up to 65536";
  if (shape.transposed && shape.rows > 65536) return "rows above 65536 (tolerance of a column's sum)";
  if (shape.rows > (1 << 20)) return "rows above 2^20";
  int64_t elements = int64_t(shape.rows) * shape.cols;
  if (elements < (1 << 18) || elements > (1 << 26)) return "elements outside [2^18, 2^26]";
  return "";
}

std::string matvec_name(const MatvecShape& shape) {
  return std::string(shape.transposed ? "matvec_transposed" : "matvec") + "_r" + std::to_string(shape.rows) + "c" +
         std::to_string(shape.cols);
}

// 2M to 32M elements of A; half the draws with sides that are multiples of 32.
MatvecShape draw_matvec_shape(ShapeRandom& random, bool transposed) {
  for (;;) {
    int64_t cols = random.log_between(256, transposed ? 16384 : 8192);
    int64_t rows = random.log_between(int64_t(2) << 20, int64_t(32) << 20) / cols;
    if (random.one_in(2)) {
      rows = round_to_multiple(rows, 32);
      cols = round_to_multiple(cols, 32);
    }
    if (transposed) cols = round_to_multiple(cols, 4);
    MatvecShape shape{"", int(std::min<int64_t>(rows, 1 << 21)), int(cols), transposed};
    if (matvec_problem(shape).empty()) return shape;
  }
}

MatvecShape draw_matvec(ShapeRandom& random) { return draw_matvec_shape(random, false); }
MatvecShape draw_matvec_transposed(ShapeRandom& random) { return draw_matvec_shape(random, true); }

std::vector<std::vector<MatvecShape>> matvec_neighbours(const MatvecShape& shape, ShapeRandom& random) {
  int rows = shape.rows, cols = shape.cols;
  bool t = shape.transposed;
  int odd_cols = int(ragged_near(cols, random));
  if (t) odd_cols = int(round_to_multiple(odd_cols, 4)) + (cols % 8 == 0 ? 4 : 0);
  return {
      {{"", rows / 2, cols, t}, {"", rows * 2, cols, t}, {"", rows, cols / 2, t}, {"", rows, cols * 2, t}},
      {{"", cols, rows, t}, {"", rows * 4, cols / 4, t}, {"", rows / 4, cols * 4, t}},
      {{"", int(ragged_near(rows, random)), cols, t},
       {"", rows, odd_cols, t},
       {"", int(round_to_multiple(rows, 32)), int(round_to_multiple(cols, 32)), t}},
      {{"", rows, cols, !t}, {"", rows, int(round_to_multiple(cols, 4)), !t}},
  };
}

std::vector<std::string> matvec_features(const MatvecShape& shape) {
  bool ragged = shape.cols % 32 != 0 || (shape.transposed && shape.rows % 32 != 0);
  return {raggedness_tag(ragged), shape.transposed ? "op/transposed" : "op/plain"};
}

ShapeSpace<MatvecShape> matvec_space() {
  return {"matvec",          write_matvec,   read_matvec,
          matvec_problem,    matvec_name,    {draw_matvec, draw_matvec_transposed},
          matvec_neighbours, matvec_features};
}

TaskFamily<MatvecShape> matvec_family(std::vector<MatvecShape> shapes) {
  return {std::move(shapes), matvec_task, reasoning_values, matvec_recipes};
}

}  // namespace

void add_matvec_tasks(std::vector<KernelCatalogEntry>& entries) {
  add_family_tasks(entries, matvec_family(matvec_shapes()), matvec_space());
}

FamilyGenerator matvec_generator() { return family_generator(matvec_family({}), matvec_space()); }

}  // namespace tailforge
