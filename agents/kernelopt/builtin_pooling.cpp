// Pooling tasks of the built-in kernelopt catalog (stencil): 2x2 max pooling with stride 2, an odd
// last input row dropped. The reference gives each output a thread and four scalar loads;
// candidates widen the loads. A max is exact, so any correct candidate matches bit for bit.
#include <algorithm>

#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

struct PoolShape {
  std::string name;
  int height = 0, width = 0;  // of the input; width divisible by 4 (the float4 candidates need it)
};

std::vector<PoolShape> pool_shapes() {
  return {{"maxpool2x2_4001x6000", 4001, 6000}, {"maxpool2x2_4320x7680", 4320, 7680}};
}

std::string prelude(const PoolShape& shape) {
  return kernel_prelude({{"kHeight", shape.height}, {"kWidth", shape.width}}) +
         R"(constexpr int kOutHeight = kHeight / 2;
constexpr int kOutWidth = kWidth / 2;

__device__ __forceinline__ float max4(float a, float b, float c, float d) { return fmaxf(fmaxf(a, b), fmaxf(c, d)); }

)";
}

const char* kScalarPool = R"(__global__ void maxpool_scalar(const float* in, float* out) {
  const int ox = blockIdx.x * blockDim.x + threadIdx.x;
  const int oy = blockIdx.y * blockDim.y + threadIdx.y;
  if (ox >= kOutWidth || oy >= kOutHeight) return;
  const int64_t top = int64_t(2 * oy) * kWidth + 2 * ox;
  const int64_t bottom = top + kWidth;
  out[int64_t(oy) * kOutWidth + ox] = max4(in[top], in[top + 1], in[bottom], in[bottom + 1]);
}

inline void launch_scalar(const float* in, float* out, cudaStream_t stream) {
  const dim3 block(16, 16);
  const dim3 grid((kOutWidth + 15) / 16, (kOutHeight + 15) / 16);
  maxpool_scalar<<<grid, block, 0, stream>>>(in, out);
}

)";

std::string reference_source(const PoolShape& shape) {
  return prelude(shape) + "// One thread per output, four scalar loads from two input rows.\n" + kScalarPool +
         R"(void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  launch_scalar(inputs[0], output, stream);
}
)";
}

std::string float2_source(const PoolShape& shape) {
  return prelude(shape) + kScalarPool + R"(static_assert(kWidth % 2 == 0, "float2 loads need even rows");
constexpr int64_t kOutputs = int64_t(kOutHeight) * kOutWidth;
constexpr int kThreads = 256;

// One output per thread from two float2 loads (the 2x2 window is two aligned pairs).
__global__ void maxpool_float2(const float* __restrict__ in, float* __restrict__ out) {
  const int64_t o = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (o >= kOutputs) return;
  const int oy = int(o / kOutWidth);
  const int ox = int(o % kOutWidth);
  const float2* in2 = reinterpret_cast<const float2*>(in);
  const int64_t top = int64_t(oy) * kWidth + ox;  // (2 oy * kWidth + 2 ox) / 2, in float2 units
  const float2 a = in2[top];
  const float2 b = in2[top + kWidth / 2];
  out[o] = max4(a.x, a.y, b.x, b.y);
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  if ((reinterpret_cast<uintptr_t>(inputs[0]) & 7u) == 0) {
    maxpool_float2<<<int((kOutputs + kThreads - 1) / kThreads), kThreads, 0, stream>>>(inputs[0], output);
  } else {
    launch_scalar(inputs[0], output, stream);
  }
}
)";
}

// The launch of a float4 kernel over `work` threads; it needs 16-byte aligned input and 8-byte
// aligned output rows, and falls back to the scalar kernel otherwise.
std::string float4_launch(const char* kernel, const char* work) {
  return fill_kernel_template(R"(void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const bool aligned = (reinterpret_cast<uintptr_t>(inputs[0]) & 15u) == 0 &&
                       (reinterpret_cast<uintptr_t>(output) & 7u) == 0 && kOutWidth % 2 == 0;
  if (aligned) {
    $(KERNEL)<<<int(($(WORK) + kThreads - 1) / kThreads), kThreads, 0, stream>>>(inputs[0], output);
  } else {
    launch_scalar(inputs[0], output, stream);
  }
}
)",
                              {{"KERNEL", kernel}, {"WORK", work}});
}

std::string float4_pair_source(const PoolShape& shape) {
  return prelude(shape) + kScalarPool + R"(static_assert(kWidth % 4 == 0, "float4 loads need rows of whole float4s");
constexpr int kPairs = kOutWidth / 2;  // output column pairs per row
constexpr int64_t kPairCount = int64_t(kOutHeight) * kPairs;
constexpr int kThreads = 256;

// Two adjacent outputs per thread: one float4 from each of the two input rows, one float2 store.
__global__ void maxpool_float4(const float* __restrict__ in, float* __restrict__ out) {
  const int64_t p = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (p >= kPairCount) return;
  const int oy = int(p / kPairs);
  const int pair = int(p % kPairs);
  const float4* in4 = reinterpret_cast<const float4*>(in);
  const int64_t top = int64_t(2 * oy) * (kWidth / 4) + pair;
  const float4 a = in4[top];
  const float4 b = in4[top + kWidth / 4];
  reinterpret_cast<float2*>(out + int64_t(oy) * kOutWidth)[pair] =
      make_float2(max4(a.x, a.y, b.x, b.y), max4(a.z, a.w, b.z, b.w));
}

)" + float4_launch("maxpool_float4", "kPairCount");
}

std::string float4_block_source(const PoolShape& shape) {
  return prelude(shape) + kScalarPool + R"(static_assert(kWidth % 4 == 0, "float4 loads need rows of whole float4s");
constexpr int kPairs = kOutWidth / 2;                // output column pairs per row
constexpr int kRowPairs = (kOutHeight + 1) / 2;      // output row pairs, the last maybe single
constexpr int64_t kWork = int64_t(kRowPairs) * kPairs;
constexpr int kThreads = 256;

// A 2x2 block of outputs per thread: four float4 loads from four input rows, issued before any
// use, then two float2 stores. The second output row is skipped past the end.
__global__ void maxpool_float4_2x2(const float* __restrict__ in, float* __restrict__ out) {
  const int64_t w = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (w >= kWork) return;
  const int oy = 2 * int(w / kPairs);
  const int pair = int(w % kPairs);
  const bool second_row = oy + 1 < kOutHeight;
  const float4* in4 = reinterpret_cast<const float4*>(in);
  constexpr int64_t kRow4 = kWidth / 4;
  const int64_t top = int64_t(2 * oy) * kRow4 + pair;
  const float4 a = in4[top];
  const float4 b = in4[top + kRow4];
  const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  const float4 c = second_row ? in4[top + 2 * kRow4] : zero;
  const float4 d = second_row ? in4[top + 3 * kRow4] : zero;
  float2* out2 = reinterpret_cast<float2*>(out);
  const int64_t first = (int64_t(oy) * kOutWidth) / 2 + pair;
  out2[first] = make_float2(max4(a.x, a.y, b.x, b.y), max4(a.z, a.w, b.z, b.w));
  if (second_row) out2[first + kOutWidth / 2] = make_float2(max4(c.x, c.y, d.x, d.y), max4(c.z, c.w, d.z, d.w));
}

)" + float4_launch("maxpool_float4_2x2", "kWork");
}

TemplateValues reasoning_values(const PoolShape& shape) {
  int64_t in_bytes = int64_t(shape.height / 2) * 2 * shape.width * 4;
  int64_t out_bytes = int64_t(shape.height / 2) * (shape.width / 2) * 4;
  return {
      {"H", std::to_string(shape.height)},
      {"W", std::to_string(shape.width)},
      {"OH", std::to_string(shape.height / 2)},
      {"OW", std::to_string(shape.width / 2)},
      {"BYTES", megabytes_text(in_bytes + out_bytes)},
      {"TIME", hbm_time_text(in_bytes + out_bytes)},
      {"ODD", shape.height % 2 == 1 ? "The input has an odd row count, so its last row is never read, as in the "
                                      "reference."
                                    : ""},
      {"ROW_PAIRS_NOTE", (shape.height / 2) % 2 == 1
                             ? "The output has an odd number of rows, so the last thread row computes one row "
                               "only and its second pair of loads is skipped."
                             : "The output row count is even, so every thread has a full 2x2 block; the guard for "
                               "a missing second row stays for other shapes."},
  };
}

std::vector<CandidateRecipe<PoolShape>> pooling_recipes(const PoolShape&) {
  return {
      {"float2_row_pairs", float2_source,
       "Max pool 2x2 of $(H)x$(W) into $(OH)x$(OW): $(BYTES) of traffic, no arithmetic to speak of. The reference "
       "does four scalar loads per output; each 2x2 window is two aligned float2 pairs, so two 8-byte loads halve "
       "the load instructions. A 1D grid over outputs keeps the float2 loads of a warp contiguous. $(ODD)"},
      {"float4_two_outputs", float4_pair_source,
       "Pure data movement: $(BYTES) for a $(H)x$(W) to $(OH)x$(OW) 2x2 max pool, so the goal is copy speed, about "
       "$(TIME). The reference's four scalar loads per output use 4 bytes per load instruction. Giving each thread "
       "two adjacent outputs lets it read its 2x4 input window as two float4 loads (one per input row) and write "
       "both results as one float2: 16 bytes per load and 8 per store. Alignment holds because the width $(W) "
       "divides by 4 (static_assert) and output pairs start at even columns; tf_launch verifies the base pointers "
       "and otherwise runs the scalar kernel. $(ODD)"},
      {"float4_2x2_outputs", float4_block_source,
       "Max pooling is a streaming kernel: $(H)x$(W) floats in, $(OH)x$(OW) out, $(BYTES) in total, about $(TIME) at "
       "full bandwidth, and one fmaxf per input element. The reference issues four scalar loads per output from a 2D "
       "grid of 16x16 blocks; its loads of a warp are two 128-byte rows but each instruction moves only 4 bytes per "
       "thread. Widening is the obvious lever. float2 per input row halves the load count; float4 covers two "
       "windows per load. I went one step further and give each thread a 2x2 block of outputs: four input rows, "
       "one float4 each, all four loads issued before any max, which doubles the bytes in flight per thread "
       "compared to the two-output version. Does that hurt coalescing? Consecutive threads take consecutive "
       "float4 columns, so each of the four load instructions of a warp still reads 512 contiguous bytes of one "
       "row. The thread count halves again, to about a quarter of the output count, still millions of threads and "
       "far more than the GPU holds, so occupancy is not a concern; register use is 16 loaded floats. Edges: "
       "$(ROW_PAIRS_NOTE) $(ODD) Alignment: width $(W) divides by 4 so each row starts on a float4 boundary, output "
       "pairs start at even columns so the float2 stores are 8-byte aligned; tf_launch checks the base pointers "
       "and falls back to the scalar kernel otherwise."},
  };
}

KernelTask pooling_task(const PoolShape& shape) {
  return {.name = shape.name,
          .operator_type = kStencilOperator,
          .domain = "image",
          .description = "2x2 max pooling, stride 2, of a " + std::to_string(shape.height) + "x" +
                         std::to_string(shape.width) + " image into " + std::to_string(shape.height / 2) + "x" +
                         std::to_string(shape.width / 2) + " (an odd last row is dropped)",
          .inputs = {{"in", int64_t(shape.height) * shape.width}},
          .output = {"out", int64_t(shape.height / 2) * (shape.width / 2)},
          .reference_source = reference_source(shape)};
}

// ---- the shape space ----

nlohmann::json write_pooling(const PoolShape& shape) { return {{"height", shape.height}, {"width", shape.width}}; }

PoolShape read_pooling(const nlohmann::json& shape) {
  return {"", shape.at("height").get<int>(), shape.at("width").get<int>()};
}

std::string pooling_problem(const PoolShape& shape) {
  if (shape.width % 4 != 0) return "width not a multiple of 4 (float4 rows)";
  if (shape.height < 2 || shape.width < 8 || shape.height > 65536 || shape.width > 65536) {
    return "height outside [2, 65536] or width outside [8, 65536]";
  }
  int64_t elements = int64_t(shape.height) * shape.width;
  if (elements < (1 << 18) || elements > (1 << 26)) return "elements outside [2^18, 2^26]";
  return "";
}

std::string pooling_name(const PoolShape& shape) {
  return "maxpool2x2_h" + std::to_string(shape.height) + "w" + std::to_string(shape.width);
}

// 4M to 32M input pixels, rows a multiple of 4 (of 32 in half the draws), any height (odd ones
// drop their last row).
PoolShape draw_pooling(ShapeRandom& random) {
  for (;;) {
    int64_t width = random.log_between(256, 8192);
    int64_t height = random.log_between(int64_t(4) << 20, int64_t(32) << 20) / width;
    width = round_to_multiple(width, random.one_in(2) ? 32 : 4);
    PoolShape shape{"", int(std::min<int64_t>(height, 1 << 20)), int(width)};
    if (pooling_problem(shape).empty()) return shape;
  }
}

std::vector<std::vector<PoolShape>> pooling_neighbours(const PoolShape& shape, ShapeRandom& random) {
  int h = shape.height, w = shape.width;
  int odd_height = int(ragged_near(h, random));
  return {
      {{"", h / 2, w}, {"", h * 2, w}, {"", h, int(round_to_multiple(w / 2, 4))}, {"", h, w * 2}},
      {{"", w, int(round_to_multiple(h, 4))}, {"", h * 4, int(round_to_multiple(w / 4, 4))}},
      {{"", odd_height, w}, {"", h, w % 8 == 0 ? w + 4 : w + 8}, {"", h + (h % 2 == 0 ? 1 : -1), w}},
  };
}

std::vector<std::string> pooling_features(const PoolShape& shape) {
  return {raggedness_tag(shape.height % 2 != 0 || shape.width % 8 != 0)};
}

ShapeSpace<PoolShape> pooling_space() {
  return {"pooling",    write_pooling,  read_pooling,       pooling_problem,
          pooling_name, {draw_pooling}, pooling_neighbours, pooling_features};
}

TaskFamily<PoolShape> pooling_family(std::vector<PoolShape> shapes) {
  return {std::move(shapes), pooling_task, reasoning_values, pooling_recipes};
}

}  // namespace

void add_pooling_tasks(std::vector<KernelCatalogEntry>& entries) {
  add_family_tasks(entries, pooling_family(pool_shapes()), pooling_space());
}

FamilyGenerator pooling_generator() { return family_generator(pooling_family({}), pooling_space()); }

}  // namespace tailforge
