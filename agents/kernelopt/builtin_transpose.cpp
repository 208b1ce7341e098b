// Transpose tasks of the built-in kernelopt catalog (data movement, operator type "single"): the
// reference reads rows and writes columns directly; candidates stage tiles in shared memory. The
// output is a permutation of the input, so any correct candidate matches bit for bit.
#include <algorithm>
#include <cmath>

#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

struct TransposeShape {
  std::string name;
  int rows = 0, cols = 0;  // of the input; the output is cols x rows
};

std::vector<TransposeShape> transpose_shapes() {
  return {{"transpose_4096x4096", 4096, 4096}, {"transpose_3000x5003", 3000, 5003}};
}

std::string reference_source(const TransposeShape& shape) {
  return kernel_prelude({{"kRows", shape.rows}, {"kCols", shape.cols}}) + R"(
// One thread per element: reads along a row (coalesced), writes down a column (stride kRows).
__global__ void transpose_naive(const float* in, float* out) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < kRows && col < kCols) out[int64_t(col) * kRows + row] = in[int64_t(row) * kCols + col];
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid((kCols + 15) / 16, (kRows + 15) / 16);
  transpose_naive<<<grid, block, 0, stream>>>(inputs[0], output);
}
)";
}

// A kTile x kTile tile through padded shared memory, blockDim (kTile, kBlockRows): each thread
// moves kTile / kBlockRows elements in and out.
std::string tiled_source(const TransposeShape& shape, int tile, int block_rows) {
  return kernel_prelude({{"kRows", shape.rows}, {"kCols", shape.cols}, {"kTile", tile}, {"kBlockRows", block_rows}}) +
         R"(
// Reads a tile along input rows, writes it along output rows; the +1 column of padding puts the
// column reads of the second phase in distinct banks.
__global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[kTile][kTile + 1];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int in_col = blockIdx.x * kTile + tx;
  for (int k = 0; k < kTile; k += kBlockRows) {
    const int in_row = blockIdx.y * kTile + ty + k;
    if (in_row < kRows && in_col < kCols) tile[ty + k][tx] = in[int64_t(in_row) * kCols + in_col];
  }
  __syncthreads();
  const int out_col = blockIdx.y * kTile + tx;  // an input row
  for (int k = 0; k < kTile; k += kBlockRows) {
    const int out_row = blockIdx.x * kTile + ty + k;  // an input column
    if (out_row < kCols && out_col < kRows) out[int64_t(out_row) * kRows + out_col] = tile[tx][ty + k];
  }
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const dim3 block(kTile, kBlockRows);
  const dim3 grid((kCols + kTile - 1) / kTile, (kRows + kTile - 1) / kTile);
  transpose_tiled<<<grid, block, 0, stream>>>(inputs[0], output);
}
)";
}

TemplateValues reasoning_values(const TransposeShape& shape) {
  int64_t elements = int64_t(shape.rows) * shape.cols;
  bool exact32 = shape.rows % 32 == 0 && shape.cols % 32 == 0;
  return {
      {"ROWS", std::to_string(shape.rows)},
      {"COLS", std::to_string(shape.cols)},
      {"BYTES", megabytes_text(elements * 8)},
      {"TIME", hbm_time_text(elements * 8)},
      {"STRIDE", std::to_string(int64_t(shape.rows) * 4)},
      {"EDGE", exact32 ? "Both dimensions divide by 32, so no tile is partial; the bounds checks stay for safety."
                       : "The dimensions are not both multiples of 32 (" + std::to_string(shape.rows % 32) + " and " +
                             std::to_string(shape.cols % 32) +
                             " left over), so edge tiles are partial: both the load and the store phase check "
                             "their own bounds, with the roles of rows and columns swapped in the store."},
  };
}

std::vector<CandidateRecipe<TransposeShape>> transpose_recipes(const TransposeShape&) {
  return {
      {"shared_tiling32_padded", [](const TransposeShape& shape) { return tiled_source(shape, 32, 8); },
       "A $(ROWS)x$(COLS) transpose moves $(BYTES) (read plus write) and does no arithmetic, so the target is the "
       "copy bandwidth, about $(TIME). The reference reads coalesced but writes each warp's 32 values to 32 "
       "different rows of the output, $(STRIDE) bytes apart: every store touches its own 32-byte sector, so the write "
       "side moves about 8x the useful bytes. Staging a 32x32 tile in shared memory fixes that: the block reads 32 "
       "input rows coalesced, synchronizes, and writes 32 output rows coalesced, reading the tile by column. A column "
       "read of a [32][32] array would hit one bank 32 times, so the tile is [32][33]. Blocks are 32x8 threads, each "
       "moving 4 elements: 256 threads keep occupancy high and the extra elements per thread amortize index math. "
       "$(EDGE)"},
      {"shared_tiling16", [](const TransposeShape& shape) { return tiled_source(shape, 16, 16); },
       "Strided stores are the problem: consecutive threads write $(STRIDE) bytes apart. A 16x16 shared tile (padded "
       "to 17 columns against bank conflicts) lets a block write whole 64-byte row segments instead. One element per "
       "thread, 16x16 blocks. $(EDGE)"},
      {"shared_tiling32_full_block", [](const TransposeShape& shape) { return tiled_source(shape, 32, 32); },
       "Starting point: the transpose of a $(ROWS)x$(COLS) float matrix is pure data movement, $(BYTES) over HBM, "
       "so the ideal is a kernel that runs at copy speed, about $(TIME). The reference's stores are the bottleneck: "
       "thread (x, y) writes out[x][y], so a warp scatters its 32 stores over 32 rows $(STRIDE) bytes apart and each "
       "one becomes a separate partial-sector write. The standard fix is a tile through shared memory so both global "
       "phases are row-wise. The questions are tile size and threads per tile. 16x16 tiles only give 64-byte "
       "segments per warp row, half a cache line; 64x64 tiles would need 16.6 KB of shared memory per block and "
       "produce fewer blocks than is comfortable on the smaller edge. 32x32 matches a warp to a tile row, which is "
       "what makes both the loads and the stores full 128-byte lines. For the thread shape I chose one thread per "
       "element, 32x32 = 1024 threads: each thread does exactly one load and one store with no loop, and two such "
       "blocks fill an SM's 2048 thread slots. The alternative, 32x8 threads looping over 4 rows, gives more "
       "independent blocks per SM and slightly better latency hiding, so this variant trades a little of that for "
       "simpler code and fewer instructions per element; it is worth measuring both. Bank conflicts: the second "
       "phase reads tile[tx][ty], a column, so the row length is padded to 33 floats to spread a warp's 32 reads "
       "over 32 banks. Only one __syncthreads is needed between the phases since each block uses its tile once. "
       "$(EDGE)"},
  };
}

KernelTask transpose_task(const TransposeShape& shape) {
  int64_t elements = int64_t(shape.rows) * shape.cols;
  return {.name = shape.name,
          .operator_type = kSingleOperator,
          .domain = "linalg",
          .description = "transpose a " + std::to_string(shape.rows) + "x" + std::to_string(shape.cols) +
                         " row-major matrix into " + std::to_string(shape.cols) + "x" + std::to_string(shape.rows),
          .inputs = {{"in", elements}},
          .output = {"out", elements},
          .reference_source = reference_source(shape)};
}

// ---- the shape space ----

nlohmann::json write_transpose(const TransposeShape& shape) { return {{"rows", shape.rows}, {"cols", shape.cols}}; }

TransposeShape read_transpose(const nlohmann::json& shape) {
  return {"", shape.at("rows").get<int>(), shape.at("cols").get<int>()};
}

std::string transpose_problem(const TransposeShape& shape) {
  if (shape.rows < 16 || shape.cols < 16 || shape.rows > 65536 || shape.cols > 65536)
    return "a side outside [16, 65536]";
  int64_t elements = int64_t(shape.rows) * shape.cols;
  if (elements < (1 << 18) || elements > (1 << 26)) return "elements outside [2^18, 2^26]";
  return "";
}

std::string transpose_name(const TransposeShape& shape) {
  return "transpose_r" + std::to_string(shape.rows) + "c" + std::to_string(shape.cols);
}

// Half the draws with both sides multiples of 32 (whole tiles), half with arbitrary sides.
TransposeShape draw_transpose(ShapeRandom& random) {
  for (;;) {
    int64_t elements = random.log_between(int64_t(2) << 20, int64_t(16) << 20);
    int64_t rows = random.log_between(256, 8192);
    int64_t cols = elements / rows;
    if (random.one_in(2)) {
      rows = round_to_multiple(rows, 32);
      cols = round_to_multiple(cols, 32);
    }
    TransposeShape shape{"", int(rows), int(std::min<int64_t>(cols, 1 << 20))};
    if (cols >= 256 && cols <= 16384 && transpose_problem(shape).empty()) return shape;
  }
}

std::vector<std::vector<TransposeShape>> transpose_neighbours(const TransposeShape& shape, ShapeRandom& random) {
  int rows = shape.rows, cols = shape.cols;
  int side = int(round_to_multiple(int64_t(std::sqrt(double(rows) * cols)), 32));
  return {
      {{"", rows / 2, cols}, {"", rows * 2, cols}, {"", rows, cols / 2}, {"", rows, cols * 2}},
      {{"", cols, rows}, {"", side, side}, {"", rows * 2, cols / 2}, {"", rows / 2, cols * 2}},
      {{"", int(ragged_near(rows, random)), cols},
       {"", rows, int(ragged_near(cols, random))},
       {"", int(round_to_multiple(rows, 32)), int(round_to_multiple(cols, 32))}},
  };
}

std::vector<std::string> transpose_features(const TransposeShape& shape) {
  return {raggedness_tag(shape.rows % 32 != 0 || shape.cols % 32 != 0)};
}

ShapeSpace<TransposeShape> transpose_space() {
  return {"transpose",    write_transpose,  read_transpose,       transpose_problem,
          transpose_name, {draw_transpose}, transpose_neighbours, transpose_features};
}

TaskFamily<TransposeShape> transpose_family(std::vector<TransposeShape> shapes) {
  return {std::move(shapes), transpose_task, reasoning_values, transpose_recipes};
}

}  // namespace

void add_transpose_tasks(std::vector<KernelCatalogEntry>& entries) {
  add_family_tasks(entries, transpose_family(transpose_shapes()), transpose_space());
}

FamilyGenerator transpose_generator() { return family_generator(transpose_family({}), transpose_space()); }

}  // namespace tailforge
