// 2D stencil tasks of the built-in kernelopt catalog: 3x3-neighbourhood stencils (5-point Jacobi,
// box blur) with clamp-to-edge boundaries. The reference reads every neighbour from global memory;
// candidates reuse neighbours through shared tiles with a halo or by marching down columns with
// registers. Every output is a fixed-order sum of at most nine values through one function all
// units share, so results agree to an ulp; tolerance stays at 1e-3.
#include <algorithm>
#include <array>

#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

struct Tap {
  int dy = 0, dx = 0;
};

struct Stencil2d {
  std::string name;
  std::string domain;
  std::string description;
  int height = 0, width = 0;
  std::string scale;
  std::vector<Tap> taps;  // row-major order, the order of the sum
};

std::vector<Tap> five_point() { return {{-1, 0}, {0, -1}, {0, 0}, {0, 1}, {1, 0}}; }

std::vector<Tap> box3x3() {
  std::vector<Tap> taps;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) taps.push_back({dy, dx});
  }
  return taps;
}

std::string tap_name(const Tap& tap) {
  static const std::array<std::array<const char*, 3>, 3> names = {{
      {{"north_west", "north", "north_east"}},
      {{"west", "center", "east"}},
      {{"south_west", "south", "south_east"}},
  }};
  return names[tap.dy + 1][tap.dx + 1];
}

bool has_tap(const Stencil2d& stencil, int dy, int dx) {
  for (const Tap& tap : stencil.taps) {
    if (tap.dy == dy && tap.dx == dx) return true;
  }
  return false;
}

// `stencil(<tap values>)` with each value given by `value_of`.
std::string stencil_call(const Stencil2d& stencil, const std::function<std::string(const Tap&)>& value_of) {
  std::string call = "stencil(";
  for (size_t i = 0; i < stencil.taps.size(); ++i) call += (i ? ", " : "") + value_of(stencil.taps[i]);
  return call + ")";
}

std::string prelude_2d(const Stencil2d& stencil) {
  std::string params, sum;
  for (size_t i = 0; i < stencil.taps.size(); ++i) {
    params += (i ? ", float " : "float ") + tap_name(stencil.taps[i]);
    sum += (i ? " + " : "") + tap_name(stencil.taps[i]);
  }
  return kernel_prelude({{"kHeight", stencil.height}, {"kWidth", stencil.width}}) +
         fill_kernel_template(R"(
__device__ __forceinline__ int clamp_index(int value, int limit) {
  return value < 0 ? 0 : (value >= limit ? limit - 1 : value);
}
__device__ __forceinline__ float stencil($(PARAMS)) { return $(SCALE) * ($(SUM)); }

)",
                              {{"PARAMS", params}, {"SCALE", stencil.scale}, {"SUM", sum}});
}

std::string reference_2d(const Stencil2d& stencil) {
  static const char* rows[] = {"row_above", "row", "row_below"};
  static const char* cols[] = {"left", "x", "right"};
  std::string call = stencil_call(
      stencil, [](const Tap& tap) { return std::string("in[") + rows[tap.dy + 1] + " + " + cols[tap.dx + 1] + "]"; });
  return prelude_2d(stencil) +
         fill_kernel_template(R"(// One thread per output, every neighbour read from global memory.
__global__ void stencil2d_naive(const float* in, float* out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= kWidth || y >= kHeight) return;
  const int64_t row_above = int64_t(clamp_index(y - 1, kHeight)) * kWidth;
  const int64_t row = int64_t(y) * kWidth;
  const int64_t row_below = int64_t(clamp_index(y + 1, kHeight)) * kWidth;
  const int left = clamp_index(x - 1, kWidth);
  const int right = clamp_index(x + 1, kWidth);
  out[row + x] = $(CALL);
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid((kWidth + 15) / 16, (kHeight + 15) / 16);
  stencil2d_naive<<<grid, block, 0, stream>>>(inputs[0], output);
}
)",
                              {{"CALL", call}});
}

// A kTileY x 32 output tile per block of 32 x kBlockRows threads, the tile and its one-cell halo
// in shared memory (loaded with clamped coordinates).
std::string shared_2d(const Stencil2d& stencil, int tile_y, int block_rows) {
  static const char* rows[] = {"ly - 1", "ly", "ly + 1"};
  static const char* cols[] = {"lx - 1", "lx", "lx + 1"};
  std::string call = stencil_call(
      stencil, [](const Tap& tap) { return std::string("tile[") + rows[tap.dy + 1] + "][" + cols[tap.dx + 1] + "]"; });
  return prelude_2d(stencil) +
         fill_kernel_template(
             R"(constexpr int kTileX = 32;
constexpr int kTileY = $(TILE_Y);
constexpr int kBlockRows = $(BLOCK_ROWS);
constexpr int kHaloCells = (kTileY + 2) * (kTileX + 2);

__global__ void stencil2d_shared(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[kTileY + 2][kTileX + 2];
  const int tid = threadIdx.y * kTileX + threadIdx.x;
  const int x0 = blockIdx.x * kTileX - 1;
  const int y0 = blockIdx.y * kTileY - 1;
  for (int index = tid; index < kHaloCells; index += kTileX * kBlockRows) {
    const int cell_y = index / (kTileX + 2);
    const int cell_x = index % (kTileX + 2);
    tile[cell_y][cell_x] = in[int64_t(clamp_index(y0 + cell_y, kHeight)) * kWidth + clamp_index(x0 + cell_x, kWidth)];
  }
  __syncthreads();
  const int x = blockIdx.x * kTileX + threadIdx.x;
  const int lx = threadIdx.x + 1;
  for (int k = 0; k < kTileY; k += kBlockRows) {
    const int ly = threadIdx.y + k + 1;
    const int y = y0 + ly;
    if (x < kWidth && y < kHeight) out[int64_t(y) * kWidth + x] = $(CALL);
  }
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const dim3 block(kTileX, kBlockRows);
  const dim3 grid((kWidth + kTileX - 1) / kTileX, (kHeight + kTileY - 1) / kTileY);
  stencil2d_shared<<<grid, block, 0, stream>>>(inputs[0], output);
}
)",
             {{"TILE_Y", std::to_string(tile_y)}, {"BLOCK_ROWS", std::to_string(block_rows)}, {"CALL", call}});
}

// Each thread marches down a strip of rows in one column, keeping the rows above and at y in
// registers and loading only the row below per step. Only the values some tap needs are kept.
std::string march_2d(const Stencil2d& stencil) {
  static const char* suffixes[] = {"w", "c", "e"};
  static const char* columns[] = {"left", "x", "right"};
  std::string declare_first, load_below, shift;
  bool uses_column[3] = {false, false, false};
  for (int dx = -1; dx <= 1; ++dx) {
    bool keep_above = has_tap(stencil, -1, dx);
    bool keep_middle = has_tap(stencil, 0, dx) || keep_above;
    bool load = has_tap(stencil, 1, dx) || keep_middle;
    std::string suffix = suffixes[dx + 1], column = columns[dx + 1];
    if (keep_above) declare_first += "  float above_" + suffix + " = in[first_above + " + column + "];\n";
    if (keep_middle) declare_first += "  float middle_" + suffix + " = in[first_middle + " + column + "];\n";
    if (load) load_below += "    const float below_" + suffix + " = in[below + " + column + "];\n";
    if (keep_above) shift += "    above_" + suffix + " = middle_" + suffix + ";\n";
    if (keep_middle) shift += "    middle_" + suffix + " = below_" + suffix + ";\n";
    uses_column[dx + 1] = load;
  }
  std::string neighbours;
  if (uses_column[0]) neighbours += "  const int left = clamp_index(x - 1, kWidth);\n";
  if (uses_column[2]) neighbours += "  const int right = clamp_index(x + 1, kWidth);\n";
  static const char* rows[] = {"above_", "middle_", "below_"};
  std::string call =
      stencil_call(stencil, [](const Tap& tap) { return std::string(rows[tap.dy + 1]) + suffixes[tap.dx + 1]; });
  bool needs_above = has_tap(stencil, -1, -1) || has_tap(stencil, -1, 0) || has_tap(stencil, -1, 1);
  std::string first_above =
      needs_above ? "  const int64_t first_above = int64_t(clamp_index(y_begin - 1, kHeight)) * kWidth;\n" : "";
  return prelude_2d(stencil) + fill_kernel_template(R"(constexpr int kThreadsX = 128;
constexpr int kRowsPerThread = 32;

__global__ void stencil2d_march(const float* __restrict__ in, float* __restrict__ out) {
  const int x = blockIdx.x * kThreadsX + threadIdx.x;
  if (x >= kWidth) return;  // no barriers in this kernel
$(NEIGHBOURS)  const int y_begin = blockIdx.y * kRowsPerThread;
  const int y_end = y_begin + kRowsPerThread < kHeight ? y_begin + kRowsPerThread : kHeight;
$(FIRST_ABOVE)  const int64_t first_middle = int64_t(y_begin) * kWidth;
$(DECLARE)  for (int y = y_begin; y < y_end; ++y) {
    const int64_t below = int64_t(clamp_index(y + 1, kHeight)) * kWidth;
$(LOAD)    out[int64_t(y) * kWidth + x] = $(CALL);
$(SHIFT)  }
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const dim3 grid((kWidth + kThreadsX - 1) / kThreadsX, (kHeight + kRowsPerThread - 1) / kRowsPerThread);
  stencil2d_march<<<grid, kThreadsX, 0, stream>>>(inputs[0], output);
}
)",
                                                    {{"NEIGHBOURS", neighbours},
                                                     {"FIRST_ABOVE", first_above},
                                                     {"DECLARE", declare_first},
                                                     {"LOAD", load_below},
                                                     {"CALL", call},
                                                     {"SHIFT", shift}});
}

TemplateValues values_2d(const Stencil2d& stencil) {
  int64_t elements = int64_t(stencil.height) * stencil.width;
  auto edge = [](int size, int tile) {
    return size % tile == 0 ? std::string("divides evenly") : "leaves a partial tile of " + std::to_string(size % tile);
  };
  return {
      {"H", std::to_string(stencil.height)},
      {"W", std::to_string(stencil.width)},
      {"TAPS", std::to_string(stencil.taps.size())},
      {"BYTES", megabytes_text(elements * 8)},
      {"TIME", hbm_time_text(elements * 8)},
      {"LOADS", megabytes_text(elements * 4 * static_cast<int64_t>(stencil.taps.size()))},
      {"HALO8", ratio_text(10.0 * 34.0 / (8.0 * 32.0))},
      {"HALO32", ratio_text(34.0 * 34.0 / (32.0 * 32.0))},
      {"EDGE_X", edge(stencil.width, 32)},
      {"EDGE_Y8", edge(stencil.height, 8)},
      {"EDGE_Y32", edge(stencil.height, 32)},
      {"STRIPS", std::to_string(int64_t((stencil.width + 127) / 128) * ((stencil.height + 31) / 32))},
      {"ROW_LOADS", has_tap(stencil, 1, -1) ? "three (west, centre and east of the row below)"
                                            : "three (the row below's centre, plus its west and east, which the "
                                              "5-point stencil needs once they become the middle row)"},
  };
}

std::vector<CandidateRecipe<Stencil2d>> recipes_2d(const Stencil2d&) {
  return {
      {"shared_halo_tile", [](const Stencil2d& stencil) { return shared_2d(stencil, 8, 8); },
       "$(H)x$(W) image, $(TAPS)-tap stencil: the reference issues $(TAPS) global loads per output ($(LOADS) of "
       "requests for $(BYTES) of unique traffic) and relies on L1 for the overlap. A 32x8 tile with a one-cell halo "
       "in shared memory, 10x34 floats, is loaded once ($(HALO8)x the output count, clamped coordinates give the "
       "edge behaviour), then every tap reads shared memory; rows of 34 floats keep a warp's reads in distinct "
       "banks. The width $(EDGE_X) in 32-wide tiles and the height $(EDGE_Y8) in 8-row tiles; partial tiles check "
       "bounds at the store."},
      {"shared_halo_tile_unroll4", [](const Stencil2d& stencil) { return shared_2d(stencil, 32, 8); },
       "The reference does $(TAPS) global loads per output over $(H)x$(W). Shared tiling fixes the load count, but "
       "a small tile pays for its halo: a 32x8 tile loads $(HALO8)x its outputs. A 32x32 tile per block of 32x8 "
       "threads, each thread computing 4 rows, loads only $(HALO32)x and amortizes the barrier over 4 outputs per "
       "thread. The shared tile is 34x34 floats (4.6 KB). Height $(EDGE_Y32) in 32-row tiles; out-of-range "
       "rows and columns are skipped at the store."},
      {"register_column_march", march_2d,
       "What does the reference actually cost? Each output of the $(H)x$(W) grid reads $(TAPS) neighbours straight "
       "from global memory, $(LOADS) of load requests. DRAM traffic is probably close to the $(BYTES) minimum "
       "(~$(TIME)) because neighbouring threads share lines in L1, so the real overhead is the load instructions "
       "and L1 bandwidth: $(TAPS) loads for one store. Shared-memory tiling is the standard cure, but it adds a "
       "halo load, index arithmetic for the cooperative fill, and a barrier. There is a cheaper structure for "
       "vertical reuse: march down the columns. Each thread owns one column of a 32-row strip; it keeps the values "
       "of the row above and the current row in registers and per step loads only what the new row below "
       "contributes, $(ROW_LOADS). Every value then enters the thread once per row instead of up to three times. "
       "Horizontal neighbours still come from global loads, but consecutive threads read consecutive addresses, "
       "so a warp's west, centre and east loads are the same few cache lines and hit L1. No shared memory and no "
       "__syncthreads, so a thread past the right edge can simply return. The grid is $(STRIPS) blocks of 128 "
       "threads; 32 rows per strip is a compromise: longer strips amortize the two warm-up rows better but leave "
       "fewer blocks to spread over the SMs. Boundaries use the same clamp as the reference, for the first row "
       "above the strip and for the row below at the bottom, so edge outputs are identical."},
  };
}

KernelTask task_2d(const Stencil2d& stencil) {
  int64_t elements = int64_t(stencil.height) * stencil.width;
  return {.name = stencil.name,
          .operator_type = kStencilOperator,
          .domain = stencil.domain,
          .description = stencil.description,
          .inputs = {{"in", elements}},
          .output = {"out", elements},
          .reference_source = reference_2d(stencil)};
}

// The 5-point Jacobi step ("5pt") or the 3x3 box blur ("box3x3") over a height x width grid.
Stencil2d stencil_2d_of(const std::string& name, const std::string& kind, int height, int width) {
  std::string size = std::to_string(height) + "x" + std::to_string(width);
  Stencil2d stencil{name, "stencil", "", height, width, "0.2f", {}};
  if (kind == "box3x3") {
    stencil.domain = "image";
    stencil.description = "3x3 box blur (mean of the 3x3 neighbourhood) of a " + size + " image, clamped";
    stencil.scale = "(1.0f / 9.0f)";
    stencil.taps = box3x3();
  } else if (kind == "5pt") {
    stencil.description =
        "2D 5-point Jacobi step 0.2 (c + n + s + e + w) over a " + size + " grid, clamped at the edges";
    stencil.taps = five_point();
  }
  return stencil;
}

std::string stencil_2d_kind(const Stencil2d& stencil) { return stencil.taps.size() == 9 ? "box3x3" : "5pt"; }

std::vector<Stencil2d> stencils_2d() {
  return {
      stencil_2d_of("stencil2d_5pt_4000x3001", "5pt", 4000, 3001),
      stencil_2d_of("stencil2d_5pt_4096x4096", "5pt", 4096, 4096),
      stencil_2d_of("box_blur3x3_2160x3840", "box3x3", 2160, 3840),
      stencil_2d_of("box_blur3x3_3001x5001", "box3x3", 3001, 5001),
  };
}

// ---- the shape space ----

nlohmann::json write_stencil_2d(const Stencil2d& stencil) {
  return {{"kind", stencil_2d_kind(stencil)}, {"height", stencil.height}, {"width", stencil.width}};
}

Stencil2d read_stencil_2d(const nlohmann::json& shape) {
  return stencil_2d_of("", shape.at("kind").get<std::string>(), shape.at("height").get<int>(),
                       shape.at("width").get<int>());
}

std::string stencil_2d_problem(const Stencil2d& stencil) {
  if (stencil.taps.empty()) return "an unknown kind (5pt or box3x3)";
  if (stencil.height < 8 || stencil.width < 32 || stencil.height > 65536 || stencil.width > 65536) {
    return "height outside [8, 65536] or width outside [32, 65536]";
  }
  int64_t elements = int64_t(stencil.height) * stencil.width;
  if (elements < (1 << 18) || elements > (1 << 26)) return "elements outside [2^18, 2^26]";
  return "";
}

std::string stencil_2d_name(const Stencil2d& stencil) {
  return std::string(stencil.taps.size() == 9 ? "box_blur3x3" : "stencil2d_5pt") + "_h" +
         std::to_string(stencil.height) + "w" + std::to_string(stencil.width);
}

// 2M to 24M points, rows of 256 to 8192; half the draws in whole 32x32 tiles.
Stencil2d draw_stencil_2d(ShapeRandom& random) {
  std::string kind = random.one_in(2) ? "box3x3" : "5pt";
  for (;;) {
    int64_t width = random.log_between(256, 8192);
    int64_t height = random.log_between(int64_t(2) << 20, int64_t(24) << 20) / width;
    if (random.one_in(2)) {
      width = round_to_multiple(width, 32);
      height = round_to_multiple(height, 32);
    }
    Stencil2d stencil = stencil_2d_of("", kind, int(std::min<int64_t>(height, 1 << 20)), int(width));
    if (stencil_2d_problem(stencil).empty()) return stencil;
  }
}

std::vector<std::vector<Stencil2d>> stencil_2d_neighbours(const Stencil2d& stencil, ShapeRandom& random) {
  std::string kind = stencil_2d_kind(stencil);
  int h = stencil.height, w = stencil.width;
  return {
      {stencil_2d_of("", kind, h / 2, w), stencil_2d_of("", kind, h * 2, w), stencil_2d_of("", kind, h, w / 2),
       stencil_2d_of("", kind, h, w * 2)},
      {stencil_2d_of("", kind, w, h), stencil_2d_of("", kind, h * 4, w / 4), stencil_2d_of("", kind, h / 4, w * 4)},
      {stencil_2d_of("", kind, int(ragged_near(h, random)), int(ragged_near(w, random))),
       stencil_2d_of("", kind, int(round_to_multiple(h, 32)), int(round_to_multiple(w, 32)))},
      {stencil_2d_of("", kind == "5pt" ? "box3x3" : "5pt", h, w)},
  };
}

std::vector<std::string> stencil_2d_features(const Stencil2d& stencil) {
  return {raggedness_tag(stencil.width % 32 != 0 || stencil.height % 8 != 0), "op/" + stencil_2d_kind(stencil)};
}

ShapeSpace<Stencil2d> stencil_2d_space() {
  return {"stencil_2d",    write_stencil_2d,  read_stencil_2d,       stencil_2d_problem,
          stencil_2d_name, {draw_stencil_2d}, stencil_2d_neighbours, stencil_2d_features};
}

TaskFamily<Stencil2d> stencil_2d_family(std::vector<Stencil2d> stencils) {
  return {std::move(stencils), task_2d, values_2d, recipes_2d};
}

}  // namespace

void add_grid_stencil_tasks(std::vector<KernelCatalogEntry>& entries) {
  add_family_tasks(entries, stencil_2d_family(stencils_2d()), stencil_2d_space());
}

FamilyGenerator grid_stencil_generator() { return family_generator(stencil_2d_family({}), stencil_2d_space()); }

}  // namespace tailforge
