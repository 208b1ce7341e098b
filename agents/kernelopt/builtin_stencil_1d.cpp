// 1D stencil tasks of the built-in kernelopt catalog: out[i] = 0.25 x[i-1] + 0.5 x[i] + 0.25 x[i+1]
// with clamp-to-edge ends. The reference reads all three neighbours from global memory;
// candidates reuse them through a shared tile or a float4 register window. All units share the
// same combining function, so results agree to an ulp; tolerance stays at 1e-3.
#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

struct Stencil1d {
  std::string name;
  int64_t count = 0;
};

std::string prelude_1d(const Stencil1d& stencil) {
  return "#include <cstdint>\n\nconstexpr int64_t kCount = " + std::to_string(stencil.count) + R"(;

__device__ __forceinline__ int64_t clamp_index(int64_t i) { return i < 0 ? 0 : (i >= kCount ? kCount - 1 : i); }
__device__ __forceinline__ float weighted(float left, float center, float right) {
  return 0.25f * left + 0.5f * center + 0.25f * right;
}

)";
}

const char* kScalar1d = R"(__global__ void stencil1d_scalar(const float* in, float* out) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < kCount) out[i] = weighted(in[clamp_index(i - 1)], in[i], in[clamp_index(i + 1)]);
}

)";

std::string reference_1d(const Stencil1d& stencil) {
  return prelude_1d(stencil) + "// One thread per element, all three reads from global memory.\n" + kScalar1d +
         R"(void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  stencil1d_scalar<<<int((kCount + 255) / 256), 256, 0, stream>>>(inputs[0], output);
}
)";
}

std::string shared_1d(const Stencil1d& stencil) {
  return prelude_1d(stencil) + R"(constexpr int kThreads = 256;

// The block's 256 elements plus one halo cell on each side in shared memory; cells past the end
// hold the clamped last element, which is what the last real output needs on its right.
__global__ void stencil1d_shared(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[kThreads + 2];
  const int64_t base = int64_t(blockIdx.x) * kThreads;
  const int64_t i = base + threadIdx.x;
  tile[threadIdx.x + 1] = in[clamp_index(i)];
  if (threadIdx.x == 0) tile[0] = in[clamp_index(base - 1)];
  if (threadIdx.x == kThreads - 1) tile[kThreads + 1] = in[clamp_index(base + kThreads)];
  __syncthreads();
  if (i < kCount) out[i] = weighted(tile[threadIdx.x], tile[threadIdx.x + 1], tile[threadIdx.x + 2]);
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  stencil1d_shared<<<int((kCount + kThreads - 1) / kThreads), kThreads, 0, stream>>>(inputs[0], output);
}
)";
}

std::string float4_1d(const Stencil1d& stencil) {
  return prelude_1d(stencil) + kScalar1d + R"(constexpr int64_t kVectors = kCount / 4;
constexpr int64_t kTail = kCount - kVectors * 4;
constexpr int kThreads = 256;

// Four outputs per thread from one float4 and the two scalar neighbours of the group; threads
// 0..kTail-1 also compute the scalar tail.
__global__ void stencil1d_float4(const float* __restrict__ in, float* __restrict__ out) {
  const int64_t v = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (v < kVectors) {
    const int64_t i = v * 4;
    const float4 c = reinterpret_cast<const float4*>(in)[v];
    const float left = in[clamp_index(i - 1)];
    const float right = in[clamp_index(i + 4)];
    reinterpret_cast<float4*>(out)[v] =
        make_float4(weighted(left, c.x, c.y), weighted(c.x, c.y, c.z), weighted(c.y, c.z, c.w),
                    weighted(c.z, c.w, right));
  }
  if (v < kTail) {
    const int64_t i = kVectors * 4 + v;
    out[i] = weighted(in[clamp_index(i - 1)], in[i], in[clamp_index(i + 1)]);
  }
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const bool aligned = ((reinterpret_cast<uintptr_t>(inputs[0]) | reinterpret_cast<uintptr_t>(output)) & 15u) == 0;
  if (aligned) {
    stencil1d_float4<<<int((kVectors + kThreads - 1) / kThreads), kThreads, 0, stream>>>(inputs[0], output);
  } else {
    stencil1d_scalar<<<int((kCount + 255) / 256), 256, 0, stream>>>(inputs[0], output);
  }
}
)";
}

std::string shared_unroll4_1d(const Stencil1d& stencil) {
  return prelude_1d(stencil) + R"(constexpr int kThreads = 256;
constexpr int kPerBlock = kThreads * 4;

// 1024 outputs per block: the tile (with its two halo cells) is loaded by a coalesced loop, then
// each thread computes 4 outputs 256 apart so the stores stay coalesced.
__global__ void stencil1d_shared4(const float* __restrict__ in, float* __restrict__ out) {
  __shared__ float tile[kPerBlock + 2];
  const int64_t base = int64_t(blockIdx.x) * kPerBlock;
  for (int k = threadIdx.x; k < kPerBlock + 2; k += kThreads) tile[k] = in[clamp_index(base - 1 + k)];
  __syncthreads();
  for (int u = 0; u < 4; ++u) {
    const int local = threadIdx.x + u * kThreads;
    const int64_t i = base + local;
    if (i < kCount) out[i] = weighted(tile[local], tile[local + 1], tile[local + 2]);
  }
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  stencil1d_shared4<<<int((kCount + kPerBlock - 1) / kPerBlock), kThreads, 0, stream>>>(inputs[0], output);
}
)";
}

TemplateValues values_1d(const Stencil1d& stencil) {
  int64_t bytes = stencil.count * 8;
  return {
      {"N", std::to_string(stencil.count)},
      {"BYTES", megabytes_text(bytes)},
      {"TIME", hbm_time_text(bytes)},
      {"LOADS", megabytes_text(stencil.count * 12)},
      {"TAIL", stencil.count % 4 == 0 ? "There is no scalar tail"
                                      : "The first threads also compute the scalar tail of " +
                                            count_text(stencil.count % 4, "element", "elements")},
  };
}

std::vector<CandidateRecipe<Stencil1d>> recipes_1d(const Stencil1d&) {
  return {
      {"shared_halo_tile", shared_1d,
       "3-point stencil over $(N) floats. The reference issues three global loads per output, $(LOADS) of load "
       "requests for $(BYTES) of unique traffic; L1 absorbs most of the overlap, but every load still costs an "
       "instruction and an L1 lookup. A 256-float shared tile plus two halo cells turns that into one global load "
       "per element (plus two per block), with the neighbours read from shared memory after one __syncthreads. "
       "Clamped loads past the end make the last block's right halo correct."},
      {"float4_register_window", float4_1d,
       "Bandwidth bound ($(BYTES), ~$(TIME)). Each thread loads one float4 and the two scalars around it and writes "
       "four outputs as a float4: 6 loads' worth of data for 4 outputs instead of 12 scalar loads, no shared memory "
       "and no barrier. The neighbour scalars overlap with adjacent threads' float4s and hit L1. $(TAIL); unaligned "
       "buffers fall back to the scalar kernel."},
      {"shared_halo_tile_unroll4", shared_unroll4_1d,
       "The reference is a one-thread-per-element stencil over $(N) floats that reads x[i-1], x[i] and x[i+1] from "
       "global memory. Caches serve the overlap, so DRAM traffic is already near the $(BYTES) minimum; what it "
       "wastes is load instructions (three per output) and per-thread overhead. A shared-memory tile with a halo "
       "cuts the global loads to one per element, but with a 256-element tile the two halo loads and the barrier are "
       "amortized over only 256 outputs, and each thread does very little work between the barrier and its exit. "
       "So I give each block 1024 outputs: its 256 threads fill a 1026-float tile with a coalesced strided loop "
       "(clamped indices, so the halo at either end of the array repeats the edge value, as the reference's clamp "
       "does), synchronize once, and each computes 4 outputs, 256 apart, so that every store instruction of a warp "
       "is still a contiguous 128-byte line. I considered computing 4 consecutive outputs per thread instead, which "
       "would keep the left and right neighbours in registers, but then shared reads have a stride of 4 words "
       "across the warp (4-way bank conflicts) and the stores stop being coalesced. Shared use is about 4 KB per "
       "block, no occupancy limit. Outputs past the end are skipped, the tile beyond it holds clamped copies."},
  };
}

KernelTask task_1d(const Stencil1d& stencil) {
  return {.name = stencil.name,
          .operator_type = kStencilOperator,
          .domain = "stencil",
          .description = "1D 3-point stencil out[i] = 0.25 x[i-1] + 0.5 x[i] + 0.25 x[i+1] over " +
                         std::to_string(stencil.count) + " floats, clamped at the ends",
          .inputs = {{"x", stencil.count}},
          .output = {"out", stencil.count},
          .reference_source = reference_1d(stencil)};
}

// ---- the shape space ----

nlohmann::json write_stencil_1d(const Stencil1d& stencil) { return {{"count", stencil.count}}; }

Stencil1d read_stencil_1d(const nlohmann::json& shape) { return {"", shape.at("count").get<int64_t>()}; }

std::string stencil_1d_problem(const Stencil1d& stencil) {
  if (stencil.count < (1 << 18) || stencil.count > (1 << 26)) return "count outside [2^18, 2^26]";
  return "";
}

std::string stencil_1d_name(const Stencil1d& stencil) { return "stencil1d_3pt_n" + std::to_string(stencil.count); }

// 2M to 32M points; half the draws a multiple of 1024 (whole tiles), half odd (a scalar tail).
Stencil1d draw_stencil_1d(ShapeRandom& random) {
  int64_t count = random.log_between(int64_t(2) << 20, int64_t(32) << 20);
  return {"", random.one_in(2) ? round_to_multiple(count, 1024) : (count | 1)};
}

std::vector<std::vector<Stencil1d>> stencil_1d_neighbours(const Stencil1d& stencil, ShapeRandom& random) {
  int64_t count = stencil.count;
  return {
      {{"", count / 2}, {"", count * 2}, {"", count / 8}},
      {{"", ragged_near(count, random)},
       {"", round_to_multiple(count, 1024)},
       {"", round_to_multiple(count, 1024) + 2}},
  };
}

std::vector<std::string> stencil_1d_features(const Stencil1d& stencil) {
  return {raggedness_tag(stencil.count % 4 != 0)};
}

ShapeSpace<Stencil1d> stencil_1d_space() {
  return {"stencil_1d",    write_stencil_1d,  read_stencil_1d,       stencil_1d_problem,
          stencil_1d_name, {draw_stencil_1d}, stencil_1d_neighbours, stencil_1d_features};
}

TaskFamily<Stencil1d> stencil_1d_family(std::vector<Stencil1d> stencils) {
  return {std::move(stencils), task_1d, values_1d, recipes_1d};
}

}  // namespace

void add_line_stencil_tasks(std::vector<KernelCatalogEntry>& entries) {
  add_family_tasks(entries, stencil_1d_family({{"stencil1d_3pt_16m", 16777213}}), stencil_1d_space());
}

FamilyGenerator line_stencil_generator() { return family_generator(stencil_1d_family({}), stencil_1d_space()); }

}  // namespace tailforge
