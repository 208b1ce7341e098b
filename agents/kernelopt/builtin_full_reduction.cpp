// Whole-array reduction tasks of the built-in kernelopt catalog (sum and max of millions of
// floats into one). The reference has each thread walk a contiguous 4096-float chunk, then one
// thread combines the chunk results. Tolerance stays at 1e-3: the sum's inputs are in [0, 1), so
// the total (~8e6) is well conditioned and any summation order lands within ~1e-5 relative; the
// max is exact.
#include <algorithm>

#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

struct FullReduction {
  std::string name;
  std::string description;
  int64_t count = 0;
  bool is_max = false;  // else a sum
  float low = -1.0f, high = 1.0f;
};

// The sum (inputs in [0, 1), so the total is well conditioned) or the max of `count` floats.
FullReduction full_reduction_of(const std::string& name, bool is_max, int64_t count) {
  if (is_max) return {name, "max of " + std::to_string(count) + " floats into one value", count, true, -1.0f, 1.0f};
  return {name, "sum of " + std::to_string(count) + " floats in [0, 1) into one value", count, false, 0.0f, 1.0f};
}

std::vector<FullReduction> full_reductions() {
  return {full_reduction_of("full_sum_16m", false, 16777216), full_reduction_of("full_max_10m", true, 10000019)};
}

std::string prelude(const FullReduction& reduction) {
  return fill_kernel_template(R"(#include <cstdint>

constexpr int64_t kCount = $(COUNT);
constexpr float kIdentity = $(IDENTITY);

__device__ __forceinline__ float combine(float a, float b) { return $(COMBINE); }

)",
                              {{"COUNT", std::to_string(reduction.count)},
                               {"IDENTITY", reduction.is_max ? "-3.402823466e+38f" : "0.0f"},
                               {"COMBINE", reduction.is_max ? "fmaxf(a, b)" : "a + b"}});
}

std::string reference_source(const FullReduction& reduction) {
  return prelude(reduction) + R"(constexpr int kChunk = 4096;
constexpr int kChunks = int((kCount + kChunk - 1) / kChunk);

__device__ float chunk_results[kChunks];

// One thread per contiguous chunk: neighbouring threads read addresses 16 KB apart.
__global__ void reduce_chunks(const float* in) {
  const int chunk = blockIdx.x * blockDim.x + threadIdx.x;
  if (chunk >= kChunks) return;
  const int64_t begin = int64_t(chunk) * kChunk;
  const int64_t end = begin + kChunk < kCount ? begin + kChunk : kCount;
  float acc = kIdentity;
  for (int64_t i = begin; i < end; ++i) acc = combine(acc, in[i]);
  chunk_results[chunk] = acc;
}

// A single thread combines the chunk results in order.
__global__ void reduce_chunk_results(float* out) {
  float acc = kIdentity;
  for (int c = 0; c < kChunks; ++c) acc = combine(acc, chunk_results[c]);
  out[0] = acc;
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  reduce_chunks<<<(kChunks + 127) / 128, 128, 0, stream>>>(inputs[0]);
  reduce_chunk_results<<<1, 1, 0, stream>>>(output);
}
)";
}

std::string block_tree_source(const FullReduction& reduction) {
  return prelude(reduction) + R"(constexpr int kThreads = 256;
constexpr int kBlocks = 1024;

__device__ float block_results[kBlocks];

// Pass 1: grid-stride partials (coalesced), a shared-memory tree per block, one result per block.
__global__ void reduce_blocks(const float* __restrict__ in) {
  __shared__ float partial[kThreads];
  const int tid = threadIdx.x;
  float acc = kIdentity;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + tid; i < kCount; i += int64_t(kBlocks) * kThreads) {
    acc = combine(acc, in[i]);
  }
  partial[tid] = acc;
  __syncthreads();
  for (int width = kThreads / 2; width > 0; width >>= 1) {
    if (tid < width) partial[tid] = combine(partial[tid], partial[tid + width]);
    __syncthreads();
  }
  if (tid == 0) block_results[blockIdx.x] = partial[0];
}

// Pass 2: one block of kBlocks threads reduces the block results the same way.
__global__ void reduce_block_results(float* __restrict__ out) {
  __shared__ float partial[kBlocks];
  const int tid = threadIdx.x;
  partial[tid] = block_results[tid];
  __syncthreads();
  for (int width = kBlocks / 2; width > 0; width >>= 1) {
    if (tid < width) partial[tid] = combine(partial[tid], partial[tid + width]);
    __syncthreads();
  }
  if (tid == 0) out[0] = partial[0];
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  reduce_blocks<<<kBlocks, kThreads, 0, stream>>>(inputs[0]);
  reduce_block_results<<<1, kBlocks, 0, stream>>>(output);
}
)";
}

// The warp-level helpers shared by the shuffle candidates.
const char* kWarpHelpers = R"(constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ float warp_combine(float value) {
  for (int offset = 16; offset > 0; offset >>= 1) value = combine(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

// The block's combined value, valid in thread 0.
__device__ __forceinline__ float block_combine(float value) {
  __shared__ float warp_results[kWarps];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  value = warp_combine(value);
  if (lane == 0) warp_results[warp] = value;
  __syncthreads();
  value = kIdentity;
  if (warp == 0) value = warp_combine(lane < kWarps ? warp_results[lane] : kIdentity);
  return value;
}

)";

std::string shuffle_two_pass_source(const FullReduction& reduction) {
  return prelude(reduction) + kWarpHelpers + R"(constexpr int kBlocks = 1056;  // 8 blocks on each of 132 SMs
constexpr int64_t kVectors = kCount / 4;

__device__ float block_results[kBlocks];

// Pass 1: float4 grid-stride loads (`vectors` is 0 when the input is not 16-byte aligned, which
// leaves everything to the scalar loop), warp shuffles, one result per block.
__global__ void reduce_blocks(const float* __restrict__ in, int64_t vectors) {
  const float4* in4 = reinterpret_cast<const float4*>(in);
  const int64_t first = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  const int64_t stride = int64_t(kBlocks) * kThreads;
  float acc = kIdentity;
  for (int64_t v = first; v < vectors; v += stride) {
    const float4 q = in4[v];
    acc = combine(acc, combine(combine(q.x, q.y), combine(q.z, q.w)));
  }
  for (int64_t i = vectors * 4 + first; i < kCount; i += stride) acc = combine(acc, in[i]);
  acc = block_combine(acc);
  if (threadIdx.x == 0) block_results[blockIdx.x] = acc;
}

// Pass 2: one block combines the block results.
__global__ void reduce_block_results(float* __restrict__ out) {
  float acc = kIdentity;
  for (int i = threadIdx.x; i < kBlocks; i += kThreads) acc = combine(acc, block_results[i]);
  acc = block_combine(acc);
  if (threadIdx.x == 0) out[0] = acc;
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  const bool aligned = (reinterpret_cast<uintptr_t>(inputs[0]) & 15u) == 0;
  reduce_blocks<<<kBlocks, kThreads, 0, stream>>>(inputs[0], aligned ? kVectors : 0);
  reduce_block_results<<<1, kThreads, 0, stream>>>(output);
}
)";
}

std::string atomic_source(const FullReduction& reduction) {
  std::string atomic =
      reduction.is_max
          ? R"(// Float max through integer atomics: non-negative floats order like their int bits, negative
// floats order inversely to their unsigned bits.
__device__ __forceinline__ void atomic_combine(float* address, float value) {
  if (value >= 0.0f) {
    atomicMax(reinterpret_cast<int*>(address), __float_as_int(value));
  } else {
    atomicMin(reinterpret_cast<unsigned int*>(address), __float_as_uint(value));
  }
}

)"
          : R"(__device__ __forceinline__ void atomic_combine(float* address, float value) {
  atomicAdd(address, value);
}

)";
  return prelude(reduction) + kWarpHelpers + atomic + R"(constexpr int kBlocks = 1056;  // 8 blocks on each of 132 SMs

// The output must start at the identity on every call: the launch is repeated for timing.
__global__ void reset_output(float* out) { out[0] = kIdentity; }

// One pass: grid-stride partials with two accumulators, warp shuffles, one atomic per block.
__global__ void reduce_atomic(const float* __restrict__ in, float* __restrict__ out) {
  const int64_t stride = int64_t(kBlocks) * kThreads;
  float acc0 = kIdentity, acc1 = kIdentity;
  int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  for (; i + stride < kCount; i += 2 * stride) {
    acc0 = combine(acc0, in[i]);
    acc1 = combine(acc1, in[i + stride]);
  }
  if (i < kCount) acc0 = combine(acc0, in[i]);
  const float acc = block_combine(combine(acc0, acc1));
  if (threadIdx.x == 0) atomic_combine(out, acc);
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  reset_output<<<1, 1, 0, stream>>>(output);
  reduce_atomic<<<kBlocks, kThreads, 0, stream>>>(inputs[0], output);
}
)";
}

TemplateValues reasoning_values(const FullReduction& reduction) {
  int64_t chunks = (reduction.count + 4095) / 4096;
  return {
      {"N", std::to_string(reduction.count)},
      {"WHAT", reduction.is_max ? "max" : "sum"},
      {"BYTES", megabytes_text(reduction.count * 4)},
      {"TIME", hbm_time_text(reduction.count * 4)},
      {"CHUNKS", std::to_string(chunks)},
      {"CHUNK_WARPS", std::to_string((chunks + 31) / 32)},
      {"PER_THREAD", std::to_string(reduction.count / (1024 * 256))},
      {"TAIL", reduction.count % 4 == 0 ? "The count divides by 4, so the scalar loop has nothing left to do "
                                          "when the input is aligned"
                                        : "The last " + count_text(reduction.count % 4, "element", "elements") +
                                              " beyond the whole float4s go through the scalar loop"},
      {"REDUCING", reduction.is_max ? "taking the max of" : "summing"},
      {"ATOMIC", reduction.is_max
                     ? "CUDA has no float atomicMax, so I use the integer trick: non-negative floats compare like "
                       "their signed int bits (atomicMax), negative ones compare inversely to their unsigned bits "
                       "(atomicMin); mixed signs resolve correctly because any non-negative int is above any "
                       "negative one, and any negative float's unsigned bits are above any non-negative float's. "
                       "The result is exact and independent of order."
                     : "atomicAdd on a float makes the final order depend on block scheduling, so the last bits "
                       "vary from run to run; with inputs in [0, 1) the total is about " +
                           std::to_string(reduction.count / 2) +
                           " and the variation is a few ulps, far inside 1e-3 relative."},
  };
}

std::vector<CandidateRecipe<FullReduction>> full_reduction_recipes(const FullReduction&) {
  return {
      {"block_tree_reduce", block_tree_source,
       "The reference's first kernel has $(CHUNKS) threads ($(CHUNK_WARPS) warps), each $(REDUCING) a contiguous "
       "4096-float "
       "chunk, so a warp's 32 loads go to 32 addresses 16 KB apart: uncoalesced, and far too few threads to cover "
       "memory latency. Its second kernel is a single thread combining $(CHUNKS) values serially. The operator reads "
       "$(BYTES), about $(TIME) at full bandwidth. I use the classic two-pass tree: 1024 blocks of 256 threads read "
       "the array with a grid-stride loop, so every warp load is 128 contiguous bytes and each thread accumulates "
       "about $(PER_THREAD) values; each block reduces its 256 partials in shared memory, halving the active threads "
       "with a __syncthreads per step; a second launch of one 1024-thread block reduces the 1024 block results the "
       "same way. No atomics, so the result is deterministic run to run."},
      {"warp_shuffle_reduce_float4", shuffle_two_pass_source,
       "Reduction of $(N) floats ($(BYTES)). The reference is slow for two reasons: strided per-thread chunks (no "
       "coalescing, few threads) and a serial single-thread final pass. Plan: float4 grid-stride loads in 1056 "
       "blocks (8 per SM) so each thread has 16-byte requests in flight; reduce within a warp with "
       "__shfl_xor_sync, combine the 8 warp results through 8 floats of shared memory; a tiny second kernel "
       "combines the 1056 block results. $(TAIL). tf_launch passes 0 vectors when the input is not 16-byte aligned. "
       "Deterministic, no atomics."},
      {"warp_shuffle_atomic", atomic_source,
       "Let me think about where the time goes in the reference $(WHAT). Kernel one: $(CHUNKS) threads, each walking "
       "4096 consecutive floats. Consecutive threads are 16 KB apart, so a warp's load instruction touches 32 "
       "different lines; the L1 catches some reuse as each thread moves along its line, but with only $(CHUNK_WARPS) "
       "warps in the whole grid there are not enough requests in flight to pull $(BYTES) at anything close to "
       "bandwidth. Kernel two: one thread, $(CHUNKS) dependent combines, pure latency, plus a second launch. The "
       "ideal is a single streaming pass, about $(TIME). The two-pass tree is the textbook answer, but the second "
       "pass is a launch of its own, so here I try to finish in one reduction kernel: a grid of 1056 blocks "
       "(8 per SM on 132 SMs) reads with a grid-stride loop, two accumulators per thread so two loads are in "
       "flight, the block combines with warp shuffles and 8 floats of shared memory, and thread 0 of each block "
       "merges its result into the output with one atomic. That is 1056 atomics on one address, which the L2 "
       "serializes, but at a few nanoseconds each they stay a small part of the time. $(ATOMIC) Idempotence matters "
       "because the harness calls tf_launch repeatedly: a one-thread kernel on the same stream resets the output "
       "to the identity first, so the atomics never accumulate across calls. One thing I rejected: a global counter "
       "with the last block doing the final reduction (threadfence reduction); it avoids the atomics on the value "
       "but needs its own reset and a memory fence, more moving parts for little gain."},
  };
}

KernelTask full_reduction_task(const FullReduction& reduction) {
  return {.name = reduction.name,
          .operator_type = kReductionOperator,
          .domain = "science",
          .description = reduction.description,
          .inputs = {{"in", reduction.count}},
          .output = {"out", 1},
          .input_low = reduction.low,
          .input_high = reduction.high,
          .reference_source = reference_source(reduction)};
}

// ---- the shape space ----

nlohmann::json write_full_reduction(const FullReduction& reduction) {
  return {{"op", reduction.is_max ? "max" : "sum"}, {"count", reduction.count}};
}

FullReduction read_full_reduction(const nlohmann::json& shape) {
  std::string op = shape.at("op").get<std::string>();
  FullReduction reduction = full_reduction_of("", op == "max", shape.at("count").get<int64_t>());
  if (op != "max" && op != "sum") reduction.count = 0;  // problem() rules it out
  return reduction;
}

std::string full_reduction_problem(const FullReduction& reduction) {
  // A float sum of more than 2^24 values in [0, 1) drifts towards the tolerance in the reference's order.
  int64_t high = reduction.is_max ? int64_t(1) << 26 : int64_t(1) << 24;
  if (reduction.count < (1 << 18) || reduction.count > high)
    return "an unknown op, or a count outside [2^18, 2^24] (sum), [2^18, 2^26] (max)";
  return "";
}

std::string full_reduction_name(const FullReduction& reduction) {
  return std::string(reduction.is_max ? "full_max" : "full_sum") + "_n" + std::to_string(reduction.count);
}

FullReduction draw_full_reduction(ShapeRandom& random) {
  bool is_max = random.one_in(2);
  int64_t count = random.log_between(int64_t(4) << 20, int64_t(16) << 20);
  return full_reduction_of("", is_max, random.one_in(2) ? round_to_multiple(count, 4096) : (count | 1));
}

std::vector<std::vector<FullReduction>> full_reduction_neighbours(const FullReduction& reduction, ShapeRandom& random) {
  bool is_max = reduction.is_max;
  int64_t count = reduction.count;
  return {
      {full_reduction_of("", is_max, count / 2), full_reduction_of("", is_max, count * 2),
       full_reduction_of("", is_max, count / 8)},
      {full_reduction_of("", is_max, ragged_near(count, random)),
       full_reduction_of("", is_max, round_to_multiple(count, 4096))},
      {full_reduction_of("", !is_max, count)},
  };
}

std::vector<std::string> full_reduction_features(const FullReduction& reduction) {
  return {raggedness_tag(reduction.count % 4 != 0), reduction.is_max ? "op/max" : "op/sum"};
}

ShapeSpace<FullReduction> full_reduction_space() {
  return {"full_reduction",    write_full_reduction,  read_full_reduction,       full_reduction_problem,
          full_reduction_name, {draw_full_reduction}, full_reduction_neighbours, full_reduction_features};
}

TaskFamily<FullReduction> full_reduction_family(std::vector<FullReduction> reductions) {
  return {std::move(reductions), full_reduction_task, reasoning_values, full_reduction_recipes};
}

}  // namespace

void add_full_reduction_tasks(std::vector<KernelCatalogEntry>& entries) {
  add_family_tasks(entries, full_reduction_family(full_reductions()), full_reduction_space());
}

FamilyGenerator full_reduction_generator() {
  return family_generator(full_reduction_family({}), full_reduction_space());
}

}  // namespace tailforge
