// Elementwise tasks of the built-in kernelopt catalog: single ops (relu, gelu, sigmoid, axpy, ...)
// and chains of them that the reference runs as one kernel per op through __device__ buffers
// (the fusion tasks). Tolerance stays at 1e-3: every output depends on one input position, so the
// only differences are a few ulps from reordered or contracted float operations.
// An op is a chain of tokens (chain_ops()); the task generator draws chains and their fused
// neighbours (one op more, one fewer, one replaced) from the same table.
#include <algorithm>
#include <cstddef>

#include "agents/kernelopt/builtin_family.h"

namespace tailforge {
namespace {

// One op of a chain, as a token of the recipe: its CUDA expression and its notation over $(V), the
// previous stage's value (x for the first stage); binary ops also read y, the second input.
struct ChainOp {
  const char* token;  // no underscore, so a name's tokens split back unambiguously
  const char* expression;
  const char* math;
  int flops;            // arithmetic per element, roughly, for the reasoning
  bool binary = false;  // reads y
  bool infix = false;   // its notation needs parentheses around a compound operand
};

const std::vector<ChainOp>& chain_ops() {
  static const std::vector<ChainOp> ops = {
      {"relu", "fmaxf($(V), 0.0f)", "max($(V), 0)", 1},
      {"leakyrelu", "$(V) > 0.0f ? $(V) : 0.01f * $(V)", "leaky_relu($(V), 0.01)", 2},
      {"gelu", "0.5f * $(V) * (1.0f + tanhf(0.7978845608f * ($(V) + 0.044715f * $(V) * $(V) * $(V))))",
       "gelu_tanh($(V))", 25},
      {"sigmoid", "1.0f / (1.0f + expf(-$(V)))", "sigmoid($(V))", 12},
      {"silu", "$(V) / (1.0f + expf(-$(V)))", "silu($(V))", 12},
      {"tanh", "tanhf($(V))", "tanh($(V))", 12},
      {"exp", "expf($(V))", "exp($(V))", 8},
      {"clamp", "fminf(fmaxf($(V), -0.5f), 0.5f)", "clamp($(V), -0.5, 0.5)", 2},
      {"abs", "fabsf($(V))", "|$(V)|", 1},
      {"scale", "1.5f * $(V)", "1.5 $(V)", 1, false, true},
      {"shift", "$(V) + 0.5f", "$(V) + 0.5", 1, false, true},
      {"scaleshift", "1.75f * $(V) - 0.25f", "1.75 $(V) - 0.25", 2, false, true},
      {"affine", "2.0f * $(V) - 1.0f", "2 $(V) - 1", 2, false, true},
      {"add", "$(V) + y", "$(V) + y", 1, true, true},
      {"sub", "$(V) - y", "$(V) - y", 1, true, true},
      {"mul", "$(V) * y", "$(V) * y", 1, true, true},
      {"axpy", "2.5f * $(V) + y", "2.5 $(V) + y", 2, true, true},
  };
  return ops;
}

const ChainOp* find_chain_op(const std::string& token) {
  for (const ChainOp& op : chain_ops()) {
    if (token == op.token) return &op;
  }
  return nullptr;
}

struct ElementwiseOp {
  std::string name;
  std::string operator_type;
  std::string description;
  int64_t count = 0;
  int inputs = 1;                   // x, or x and y
  std::vector<std::string> stages;  // expressions in x, y (the inputs at i) and v (the previous stage)
  int flops = 1;                    // arithmetic per element, roughly, for the reasoning
  std::vector<std::string> tokens;  // the chain (chain_ops()), one token per stage
};

// The op of a chain of known tokens over `count` floats, named `name`; `what` opens the
// description ("" gives "<tokens>: out = <notation>"). A chain of one op is a single op; a
// longer one is a fusion whose reference runs one kernel per op.
ElementwiseOp chain_op(const std::string& name, std::string what, int64_t count,
                       const std::vector<std::string>& tokens) {
  ElementwiseOp op{name, tokens.size() > 1 ? kFusionOperator : kSingleOperator, "", count, 1, {}, 0, tokens};
  std::string math = "x", names;
  bool compound = false;  // math is an infix expression
  for (size_t i = 0; i < tokens.size(); ++i) {
    const ChainOp& chain = *find_chain_op(tokens[i]);
    op.stages.push_back(fill_kernel_template(chain.expression, {{"V", i == 0 ? "x" : "v"}}));
    math = fill_kernel_template(chain.math, {{"V", chain.infix && compound ? "(" + math + ")" : math}});
    compound = chain.infix;
    names += (i ? ", " : "") + std::string(tokens[i]);
    op.flops += chain.flops;
    if (chain.binary) op.inputs = 2;
  }
  if (what.empty()) what = names + ": out = " + math;
  op.description = what + " over " + std::to_string(count) + " floats";
  if (tokens.size() > 1) op.description += "; the reference runs " + std::to_string(tokens.size()) + " kernels";
  return op;
}

std::vector<ElementwiseOp> elementwise_ops() {
  const std::string gelu = "gelu, tanh form: 0.5 x (1 + tanh(0.79788456 (x + 0.044715 x^3)))";
  return {
      chain_op("relu_16m", "relu: out[i] = max(x[i], 0)", 16777216, {"relu"}),
      chain_op("relu_12m_tail", "relu: out[i] = max(x[i], 0)", 12582909, {"relu"}),
      chain_op("gelu_tanh_16m", gelu, 16777216, {"gelu"}),
      chain_op("gelu_tanh_10m", gelu, 10000019, {"gelu"}),
      chain_op("sigmoid_12m", "sigmoid: out[i] = 1 / (1 + exp(-x[i]))", 12000007, {"sigmoid"}),
      chain_op("axpy_14m", "axpy: out[i] = 2.5 x[i] + y[i]", 14000003, {"axpy"}),
      chain_op("clamp_16m", "clamp to [-0.5, 0.5]", 16777215, {"clamp"}),
      chain_op("exp_16m", "exp: out[i] = exp(x[i])", 16777216, {"exp"}),
      chain_op("leaky_relu_12m", "leaky relu: out[i] = x[i] > 0 ? x[i] : 0.01 x[i]", 12582917, {"leakyrelu"}),
      chain_op("scale_shift_16m", "scale and shift: out[i] = 1.75 x[i] - 0.25", 16777216, {"scaleshift"}),
      chain_op("add_relu_8m", "add then relu: out = max(x + y, 0)", 8388608, {"add", "relu"}),
      chain_op("scale_add_gelu_6m", "scale, add, gelu (tanh form): out = gelu(1.5 x + y)", 6000011,
               {"scale", "add", "gelu"}),
      chain_op("mul_bias_sigmoid_affine_4m", "multiply, bias, sigmoid, affine: out = 2 sigmoid(x y + 0.5) - 1", 4194311,
               {"mul", "shift", "sigmoid", "affine"}),
  };
}

bool is_fusion(const ElementwiseOp& op) { return op.stages.size() > 1; }

// ---- the reference: one kernel per stage, one thread per element ----

std::string reference_stage_kernel(const ElementwiseOp& op, size_t stage) {
  const std::string& expression = op.stages[stage];
  bool last = stage + 1 == op.stages.size();
  std::string params, loads;
  auto add_param = [&](const std::string& param) { params += (params.empty() ? "" : ", ") + param; };
  if (mentions_identifier(expression, "x")) {
    add_param("const float* x_in");
    loads += "  const float x = x_in[i];\n";
  }
  if (mentions_identifier(expression, "y")) {
    add_param("const float* y_in");
    loads += "  const float y = y_in[i];\n";
  }
  if (mentions_identifier(expression, "v"))
    loads += "  const float v = stage_buffer" + std::to_string(stage - 1) + "[i];\n";
  if (last) add_param("float* out");
  std::string target = last ? "out" : "stage_buffer" + std::to_string(stage);
  return "__global__ void stage" + std::to_string(stage) + "(" + params +
         ") {\n"
         "  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;\n"
         "  if (i >= kCount) return;\n" +
         loads + "  " + target + "[i] = " + expression + ";\n}\n\n";
}

std::string reference_stage_launch(const ElementwiseOp& op, size_t stage) {
  const std::string& expression = op.stages[stage];
  std::string args;
  auto add_arg = [&](const std::string& arg) { args += (args.empty() ? "" : ", ") + arg; };
  if (mentions_identifier(expression, "x")) add_arg("inputs[0]");
  if (mentions_identifier(expression, "y")) add_arg("inputs[1]");
  if (stage + 1 == op.stages.size()) add_arg("output");
  return "  stage" + std::to_string(stage) + "<<<kBlocks, kThreads, 0, stream>>>(" + args + ");\n";
}

std::string reference_source(const ElementwiseOp& op) {
  std::string text = "#include <cstdint>\n\nconstexpr int64_t kCount = " + std::to_string(op.count) +
                     ";\nconstexpr int kThreads = 256;\nconstexpr int kBlocks = int((kCount + kThreads - 1) / "
                     "kThreads);\n\n";
  for (size_t stage = 0; stage + 1 < op.stages.size(); ++stage) {
    text += "__device__ float stage_buffer" + std::to_string(stage) + "[kCount];  // intermediate of stage " +
            std::to_string(stage) + "\n";
  }
  if (is_fusion(op)) text += "\n";
  for (size_t stage = 0; stage < op.stages.size(); ++stage) text += reference_stage_kernel(op, stage);
  text += "void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {\n";
  for (size_t stage = 0; stage < op.stages.size(); ++stage) text += reference_stage_launch(op, stage);
  return text + "}\n";
}

// ---- the candidates: all stages in one function, applied by different kernels ----

// The prelude of every candidate: constants and `fused_op` (all stages in registers).
std::string candidate_prelude(const ElementwiseOp& op) {
  std::string text = "#include <cstdint>\n\nconstexpr int64_t kCount = " + std::to_string(op.count) +
                     ";\nconstexpr int kThreads = 256;\n\n";
  text += op.inputs == 2 ? "__device__ __forceinline__ float fused_op(float x, float y) {\n"
                         : "__device__ __forceinline__ float fused_op(float x) {\n";
  text += "  float v = " + op.stages[0] + ";\n";
  for (size_t stage = 1; stage < op.stages.size(); ++stage) text += "  v = " + op.stages[stage] + ";\n";
  return text + "  return v;\n}\n\n";
}

TemplateValues io_values(const ElementwiseOp& op) {
  bool two = op.inputs == 2;
  return {
      {"PARAMS", two ? "const float* __restrict__ x_in, const float* __restrict__ y_in, float* __restrict__ out"
                     : "const float* __restrict__ x_in, float* __restrict__ out"},
      {"ARGS", two ? "inputs[0], inputs[1], output" : "inputs[0], output"},
      {"APPLY_I", two ? "fused_op(x_in[i], y_in[i])" : "fused_op(x_in[i])"},
      {"ALIGNED", two ? "is_aligned16(inputs[0]) && is_aligned16(inputs[1]) && is_aligned16(output)"
                      : "is_aligned16(inputs[0]) && is_aligned16(output)"},
  };
}

std::string unroll4_source(const ElementwiseOp& op) {
  bool two = op.inputs == 2;
  TemplateValues values = io_values(op);
  values.push_back({"DECLARE_Y", two ? "    float ys[kUnroll];\n" : ""});
  values.push_back({"LOAD_Y", two ? "      ys[u] = i < kCount ? y_in[i] : 0.0f;\n" : ""});
  values.push_back({"APPLY_U", two ? "fused_op(xs[u], ys[u])" : "fused_op(xs[u])"});
  return candidate_prelude(op) + fill_kernel_template(R"(constexpr int kUnroll = 4;
// 8 resident blocks of 256 threads on each of the H100's 132 SMs; fewer when the array is small.
constexpr int64_t kChunks = (kCount + kThreads * kUnroll - 1) / (kThreads * kUnroll);
constexpr int kBlocks = int(kChunks < 1056 ? kChunks : 1056);

// Grid-stride loop; each thread loads 4 elements 256 apart before computing any of them.
__global__ void elementwise_unroll4($(PARAMS)) {
  const int64_t stride = int64_t(gridDim.x) * kThreads * kUnroll;
  for (int64_t base = int64_t(blockIdx.x) * kThreads * kUnroll + threadIdx.x; base < kCount; base += stride) {
    float xs[kUnroll];
$(DECLARE_Y)    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + int64_t(u) * kThreads;
      xs[u] = i < kCount ? x_in[i] : 0.0f;
$(LOAD_Y)    }
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + int64_t(u) * kThreads;
      if (i < kCount) out[i] = $(APPLY_U);
    }
  }
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  elementwise_unroll4<<<kBlocks, kThreads, 0, stream>>>($(ARGS));
}
)",
                                                      values);
}

// The float4 helpers and the scalar fallback shared by both vectorized candidates.
std::string vector_helpers(const ElementwiseOp& op) {
  std::string text = "constexpr int64_t kVectors = kCount / 4;\nconstexpr int64_t kTail = kCount - kVectors * 4;\n\n";
  text += op.inputs == 2 ? "__device__ __forceinline__ float4 fused_op4(float4 x, float4 y) {\n"
                           "  return make_float4(fused_op(x.x, y.x), fused_op(x.y, y.y), fused_op(x.z, y.z), "
                           "fused_op(x.w, y.w));\n}\n\n"
                         : "__device__ __forceinline__ float4 fused_op4(float4 x) {\n"
                           "  return make_float4(fused_op(x.x), fused_op(x.y), fused_op(x.z), fused_op(x.w));\n}\n\n";
  text += fill_kernel_template(R"(// Used when a buffer is not 16-byte aligned, where float4 accesses would fault.
__global__ void elementwise_scalar($(PARAMS)) {
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (i < kCount) out[i] = $(APPLY_I);
}

inline bool is_aligned16(const void* pointer) { return (reinterpret_cast<uintptr_t>(pointer) & 15u) == 0; }

)",
                               io_values(op));
  return text;
}

std::string float4_source(const ElementwiseOp& op) {
  bool two = op.inputs == 2;
  TemplateValues values = io_values(op);
  values.push_back({"LOAD_B", two ? "    const float4 b = reinterpret_cast<const float4*>(y_in)[v];\n" : ""});
  values.push_back({"APPLY4", two ? "fused_op4(a, b)" : "fused_op4(a)"});
  return candidate_prelude(op) + vector_helpers(op) +
         fill_kernel_template(R"(// One float4 per thread; threads 0..kTail-1 also finish the scalar tail.
__global__ void elementwise_float4($(PARAMS)) {
  const int64_t v = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (v < kVectors) {
    const float4 a = reinterpret_cast<const float4*>(x_in)[v];
$(LOAD_B)    reinterpret_cast<float4*>(out)[v] = $(APPLY4);
  }
  if (v < kTail) {
    const int64_t i = kVectors * 4 + v;
    out[i] = $(APPLY_I);
  }
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  if ($(ALIGNED)) {
    elementwise_float4<<<int((kVectors + kThreads - 1) / kThreads), kThreads, 0, stream>>>($(ARGS));
  } else {
    elementwise_scalar<<<int((kCount + kThreads - 1) / kThreads), kThreads, 0, stream>>>($(ARGS));
  }
}
)",
                              values);
}

std::string float4_unroll2_source(const ElementwiseOp& op) {
  bool two = op.inputs == 2;
  TemplateValues values = io_values(op);
  values.push_back({"LOAD_B", two ? "    const float4 b0 = y4[v];\n"
                                    "    const float4 b1 = second ? y4[w] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);\n"
                                  : ""});
  values.push_back({"Y4", two ? "  const float4* y4 = reinterpret_cast<const float4*>(y_in);\n" : ""});
  values.push_back({"APPLY0", two ? "fused_op4(a0, b0)" : "fused_op4(a0)"});
  values.push_back({"APPLY1", two ? "fused_op4(a1, b1)" : "fused_op4(a1)"});
  return candidate_prelude(op) + vector_helpers(op) +
         fill_kernel_template(R"(constexpr int64_t kPairs = (kVectors + kThreads * 2 - 1) / (kThreads * 2);
constexpr int kBlocks = int(kPairs < 1056 ? (kPairs > 0 ? kPairs : 1) : 1056);

// Grid-stride over float4s, two independent float4 loads per input per iteration.
__global__ void elementwise_float4_unroll2($(PARAMS)) {
  const float4* x4 = reinterpret_cast<const float4*>(x_in);
$(Y4)  float4* out4 = reinterpret_cast<float4*>(out);
  const int64_t stride = int64_t(gridDim.x) * kThreads * 2;
  for (int64_t v = int64_t(blockIdx.x) * kThreads * 2 + threadIdx.x; v < kVectors; v += stride) {
    const int64_t w = v + kThreads;
    const bool second = w < kVectors;
    const float4 a0 = x4[v];
    const float4 a1 = second ? x4[w] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
$(LOAD_B)    out4[v] = $(APPLY0);
    if (second) out4[w] = $(APPLY1);
  }
  if (blockIdx.x == 0 && int64_t(threadIdx.x) < kTail) {
    const int64_t i = kVectors * 4 + threadIdx.x;
    out[i] = $(APPLY_I);
  }
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  if ($(ALIGNED)) {
    elementwise_float4_unroll2<<<kBlocks, kThreads, 0, stream>>>($(ARGS));
  } else {
    elementwise_scalar<<<int((kCount + kThreads - 1) / kThreads), kThreads, 0, stream>>>($(ARGS));
  }
}
)",
                              values);
}

// Fusion only: the plainest fusion, one thread per element.
std::string fused_scalar_source(const ElementwiseOp& op) {
  return candidate_prelude(op) +
         fill_kernel_template(R"(// All stages in registers: the inputs are read once and the output written once.
__global__ void elementwise_fused($(PARAMS)) {
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (i < kCount) out[i] = $(APPLY_I);
}

void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  elementwise_fused<<<int((kCount + kThreads - 1) / kThreads), kThreads, 0, stream>>>($(ARGS));
}
)",
                              io_values(op));
}

// ---- reasoning ----

TemplateValues reasoning_values(const ElementwiseOp& op) {
  int64_t streams = op.inputs + 1;
  int64_t fused_bytes = op.count * 4 * streams;
  int64_t intermediates = static_cast<int64_t>(op.stages.size()) - 1;
  int64_t reference_bytes = fused_bytes + op.count * 4 * 2 * intermediates;
  int64_t vectors = op.count / 4;
  int64_t blocks = std::min<int64_t>((op.count + 1023) / 1024, 1056);
  std::string tail = op.count % 1024 == 0 ? "the count is a multiple of 1024, so only the loop bound ends the work"
                                          : "the bounds check on every index covers the last " +
                                                count_text(op.count % 1024, "element", "elements") +
                                                ", since the count is not a multiple of 1024";
  int64_t left = op.count % 4;
  std::string vector_tail = left == 0
                                ? "there is no scalar tail since the count divides by 4"
                                : "the last " + count_text(left, "element", "elements") + (left == 1 ? " is" : " are") +
                                      " a scalar tail handled by the first threads";
  return {
      {"N", std::to_string(op.count)},
      {"REF_BLOCKS", std::to_string((op.count + 255) / 256)},
      {"BYTES", megabytes_text(fused_bytes)},
      {"TIME", hbm_time_text(fused_bytes)},
      {"REF_BYTES", megabytes_text(reference_bytes)},
      {"REF_TIME", hbm_time_text(reference_bytes)},
      {"RATIO", ratio_text(static_cast<double>(reference_bytes) / static_cast<double>(fused_bytes))},
      {"STAGES", std::to_string(op.stages.size())},
      {"INTERMEDIATES", std::to_string(intermediates)},
      {"LAUNCHES_SAVED", count_text(intermediates, "launch", "launches")},
      {"INTERMEDIATE_ARRAYS", count_text(intermediates, "intermediate array", "intermediate arrays")},
      {"TEMPORARIES", count_text(intermediates, "temporary", "temporaries")},
      {"FLOPS_TEXT", count_text(op.flops, "flop", "flops")},
      {"FLOPS", std::to_string(op.flops)},
      {"INTENSITY", ratio_text(static_cast<double>(op.flops) / static_cast<double>(4 * streams))},
      {"STREAMS", op.inputs == 2 ? "two input arrays and one output" : "one input array and one output"},
      {"VECTORS", std::to_string(vectors)},
      {"BLOCKS", std::to_string(blocks)},
      {"TAIL_SENTENCE", tail},
      {"VECTOR_TAIL", vector_tail},
      {"COMPUTE_NOTE", op.flops >= 12 ? "The transcendental (expf/tanhf) costs a few SFU cycles per element, still "
                                        "far below the memory time, so the kernel stays bandwidth bound."
                                      : "The arithmetic is a couple of instructions per element and disappears "
                                        "under the memory time."},
  };
}

std::vector<CandidateRecipe<ElementwiseOp>> elementwise_recipes(const ElementwiseOp& op) {
  if (!is_fusion(op)) {
    return {
        {"grid_stride_unroll4", unroll4_source,
         "The reference launches $(REF_BLOCKS) blocks of 256 threads, one element each, over $(N) floats: $(STREAMS), "
         "$(BYTES) of traffic for about $(FLOPS_TEXT) per element, an arithmetic intensity of roughly $(INTENSITY) "
         "flop/byte. That is far below the H100's ridge point, so the time is set by how many bytes are in flight; at "
         "~3 TB/s the floor is about $(TIME). With one element per thread each warp has a single 128-byte request per "
         "array outstanding before it stalls, and a large share of the work is block launch and retirement. I switch "
         "to "
         "a fixed grid of $(BLOCKS) blocks (8 resident blocks of 256 threads on each of the 132 SMs) with a "
         "grid-stride loop, and in each iteration a thread first loads 4 elements spaced 256 apart and only then "
         "computes and stores them. The accesses stay fully coalesced, because consecutive threads still read "
         "consecutive addresses, but each thread now has 4 independent loads in flight, and unlike a float4 version "
         "this needs no 16-byte alignment. $(COMPUTE_NOTE) Indices are 64-bit, and $(TAIL_SENTENCE)."},
        {"float4_vectorized", float4_source,
         "Bandwidth bound: $(N) floats, $(BYTES) moved, about $(FLOPS_TEXT) per element. Scalar loads issue one 4-byte "
         "access per thread; float4 loads cut load/store instructions 4x and put 16 bytes per array in flight per "
         "thread. $(VECTORS) threads each handle one float4; $(VECTOR_TAIL). cudaMalloc memory is 256-byte aligned, "
         "but tf_launch still checks 16-byte alignment and falls back to a scalar kernel if it fails."},
        {"float4_grid_stride_unroll2", float4_unroll2_source,
         "Is there anything to win here at all? The reference is already coalesced: thread i touches element i, a warp "
         "reads 128 contiguous bytes, and the operator does about $(FLOPS_TEXT) per element against $(BYTES) of "
         "traffic for $(N) floats, so the best case is the ~$(TIME) it takes HBM to stream that. Shared memory is "
         "pointless, nothing is reused. What is left is the instruction and latency overhead per byte: one load "
         "instruction per 4 bytes, one element per thread, and a $(REF_BLOCKS)-block grid that the block scheduler has "
         "to walk through. My first idea was plain float4 (one vector per thread), which fixes the instruction count "
         "but still retires a thread after 16 bytes. A grid-stride loop with a fixed grid of up to 1056 blocks removes "
         "the launch churn, and issuing two float4 loads per array before any use gives each thread 32 bytes per array "
         "in flight, which is what Little's law asks for when a single SM needs tens of kilobytes outstanding to cover "
         "HBM latency. I considered unrolling to four float4s, but that doubles the registers held across the loads "
         "and the gain flattens once the memory pipe is full, so two it is. The second load is predicated on being in "
         "range; $(VECTOR_TAIL), done once by block 0 after the loop. Alignment: float4 needs 16-byte aligned "
         "pointers, so tf_launch checks every buffer and otherwise runs the scalar kernel. $(COMPUTE_NOTE) I expect a "
         "modest gain, maybe 5 to 15 percent, since the reference is not badly written, just fine-grained."},
    };
  }
  return {
      {"fused_single_pass", fused_scalar_source,
       "The reference runs $(STAGES) kernels and sends $(INTERMEDIATE_ARRAYS) of $(N) floats through "
       "global memory: $(REF_BYTES) of traffic instead of the $(BYTES) a single pass needs. Fusing every stage into "
       "one kernel keeps the intermediates in registers and saves $(LAUNCHES_SAVED); all stages are "
       "bandwidth bound, so I expect close to $(RATIO)x."},
      {"fused_float4_vectorized", float4_source,
       "Each of the reference's $(STAGES) kernels is a trivially parallel elementwise pass, and between them "
       "they route $(TEMPORARIES) of $(N) floats through global memory, so the "
       "reference moves $(REF_BYTES) (about $(REF_TIME) at 3 TB/s) while the operator itself only needs $(BYTES) "
       "(about $(TIME)). Step one is fusion: compute the whole chain in registers in one kernel. Step two is to make "
       "that single pass cheap per byte: each thread loads one float4 from each input, applies the chain to the four "
       "lanes and stores one float4, so $(VECTORS) threads cover the array and $(VECTOR_TAIL). The fused chain is "
       "about $(FLOPS_TEXT) per element, still memory bound. float4 requires 16-byte aligned buffers; tf_launch "
       "checks and uses the scalar fused kernel otherwise."},
      {"fused_grid_stride_unroll4", unroll4_source,
       "Profile-level view of the reference: $(STAGES) launches, each reading its inputs and writing a full $(N)-float "
       "array, and the intermediates among them ($(INTERMEDIATES) of $(STAGES) arrays) only exist to hand values to "
       "the next kernel. Total traffic is $(REF_BYTES), against $(BYTES) for the fused operator, a ratio of $(RATIO); "
       "on top "
       "of that every launch has a fixed cost and a tail where the last blocks leave SMs idle. So fusion is the main "
       "win and everything else is secondary. Which fused kernel, though? The simplest is one thread per element; it "
       "gets most of the benefit. float4 vectorization would add a bit more, but it ties correctness to 16-byte "
       "alignment of every pointer and needs a scalar tail. I went with a different way to raise bytes in flight "
       "that works at any alignment: a fixed grid of $(BLOCKS) blocks with a grid-stride loop, and per iteration each "
       "thread loads 4 elements of each input, 256 apart so that each load instruction of a warp is still one "
       "coalesced 128-byte line, before evaluating the chain on any of them. That gives 4 independent loads per input "
       "per thread in flight, the same memory-level parallelism as float4, without the alignment condition. The cost "
       "is 4 or 8 live registers for the loaded values plus the chain's temporaries; the chain is about "
       "$(FLOPS_TEXT) per element, so register pressure stays low and occupancy is not limited. I also checked that "
       "fusion "
       "does not change the numbers: the stages are evaluated in the same order on the same float values, only "
       "without the round trip through memory, so results match the reference to a few ulps (nvcc may contract a "
       "multiply and add into an fma in either version). Tail: $(TAIL_SENTENCE)."},
  };
}

KernelTask elementwise_task(const ElementwiseOp& op) {
  std::vector<KernelBuffer> inputs = {{"x", op.count}};
  if (op.inputs == 2) inputs.push_back({"y", op.count});
  return {.name = op.name,
          .operator_type = op.operator_type,
          .domain = "tensor",
          .description = op.description,
          .inputs = inputs,
          .output = {"out", op.count},
          .reference_source = reference_source(op)};
}

// ---- the shape space: a chain of tokens over a count ----

constexpr int64_t kElementwiseMin = 1 << 18, kElementwiseMax = 1 << 25;

nlohmann::json write_elementwise(const ElementwiseOp& op) { return {{"ops", op.tokens}, {"count", op.count}}; }

ElementwiseOp read_elementwise(const nlohmann::json& shape) {
  std::vector<std::string> tokens = shape.at("ops").get<std::vector<std::string>>();
  int64_t count = shape.at("count").get<int64_t>();
  for (const std::string& token : tokens) {
    if (!find_chain_op(token))
      return ElementwiseOp{.name = "", .count = count, .tokens = tokens};  // problem() says why
  }
  return chain_op("", "", count, tokens);
}

std::string elementwise_problem(const ElementwiseOp& op) {
  if (op.tokens.empty() || op.tokens.size() > 6) return "a chain needs 1 to 6 ops";
  int exps = 0;
  for (size_t i = 0; i < op.tokens.size(); ++i) {
    if (!find_chain_op(op.tokens[i])) return "unknown op " + op.tokens[i];
    if (i > 0 && op.tokens[i] == op.tokens[i - 1]) return "the same op twice in a row";
    if (op.tokens[i] != "exp") continue;
    // Three ops grow |x| < 1 to at most 26 (axpy thrice) and exp(26) ~ 2e11; more could overflow.
    if (++exps > 1 || i > 3) return "exp of a value that may overflow float";
  }
  if (op.count < kElementwiseMin || op.count > kElementwiseMax) return "count outside [2^18, 2^25]";
  if (op.tokens.size() >= 4 && op.count > kElementwiseMax / 2) return "a chain of 4 or more ops over more than 2^24";
  return "";
}

std::string elementwise_name(const ElementwiseOp& op) {
  std::string name;
  for (const std::string& token : op.tokens) name += token + "_";
  return name + "n" + std::to_string(op.count);
}

// Half the draws a multiple of 4096 (no tail), half odd (a scalar tail of 1 or 3).
int64_t draw_count(ShapeRandom& random, int64_t low, int64_t high) {
  int64_t count = random.log_between(low, high);
  return random.one_in(2) ? std::max<int64_t>(4096, count / 4096 * 4096) : (count | 1);
}

std::vector<std::string> chain_tokens() {
  std::vector<std::string> tokens;
  for (const ChainOp& op : chain_ops()) tokens.push_back(op.token);
  return tokens;
}

ElementwiseOp draw_single(ShapeRandom& random) {
  std::string token = random.pick(chain_tokens());
  return chain_op("", "", draw_count(random, 1 << 20, 1 << 24), {token});
}

ElementwiseOp draw_fusion(ShapeRandom& random) {
  static const std::vector<int> lengths = {2, 2, 2, 3, 3, 3, 4, 4, 5};
  int length = random.pick(lengths);
  for (;;) {
    std::vector<std::string> tokens;
    while (static_cast<int>(tokens.size()) < length) tokens.push_back(random.pick(chain_tokens()));
    int64_t high = length >= 4 ? int64_t(1) << 23 : 12 << 20;
    ElementwiseOp op = chain_op("", "", draw_count(random, 1 << 20, high), tokens);
    if (elementwise_problem(op).empty()) return op;
  }
}

// The chain with one op more (appended or prepended), one fewer, or one replaced.
std::vector<ElementwiseOp> fused_neighbours(const ElementwiseOp& op, ShapeRandom& random) {
  std::vector<ElementwiseOp> near;
  const std::vector<std::string> all = chain_tokens();
  for (int draw = 0; draw < 3; ++draw) {
    std::vector<std::string> longer = op.tokens;
    longer.push_back(random.pick(all));
    near.push_back(chain_op("", "", op.count, longer));
    std::vector<std::string> replaced = op.tokens;
    replaced[static_cast<size_t>(random.between(0, static_cast<int64_t>(replaced.size()) - 1))] = random.pick(all);
    near.push_back(chain_op("", "", op.count, replaced));
  }
  std::vector<std::string> front = op.tokens;
  front.insert(front.begin(), random.pick(all));
  near.push_back(chain_op("", "", op.count, front));
  for (size_t drop = 0; op.tokens.size() > 1 && drop < op.tokens.size(); ++drop) {
    std::vector<std::string> shorter = op.tokens;
    shorter.erase(shorter.begin() + static_cast<std::ptrdiff_t>(drop));
    near.push_back(chain_op("", "", op.count, shorter));
  }
  return near;
}

std::vector<std::vector<ElementwiseOp>> elementwise_neighbours(const ElementwiseOp& op, ShapeRandom& random) {
  std::vector<ElementwiseOp> sizes;
  for (int64_t count : {op.count / 2, op.count * 2, ragged_near(op.count, random), ragged_near(op.count / 3, random),
                        round_to_multiple(op.count, 4096), op.count + 4096 - op.count % 4096}) {
    sizes.push_back(chain_op("", "", count, op.tokens));
  }
  return {fused_neighbours(op, random), sizes};
}

std::vector<std::string> elementwise_features(const ElementwiseOp& op) {
  std::vector<std::string> tags = {raggedness_tag(op.count % 4 != 0)};
  for (const std::string& token : op.tokens) tags.push_back("op/" + token);
  if (op.tokens.size() > 1) tags.push_back("fused/" + std::to_string(op.tokens.size()) + "_ops");
  tags.push_back(op.inputs == 2 ? "inputs/2" : "inputs/1");
  return tags;
}

ShapeSpace<ElementwiseOp> elementwise_space() {
  return {"elementwise",    write_elementwise,          read_elementwise,       elementwise_problem,
          elementwise_name, {draw_single, draw_fusion}, elementwise_neighbours, elementwise_features};
}

TaskFamily<ElementwiseOp> elementwise_family(std::vector<ElementwiseOp> ops) {
  return {std::move(ops), elementwise_task, reasoning_values, elementwise_recipes};
}

}  // namespace

void add_elementwise_tasks(std::vector<KernelCatalogEntry>& entries) {
  add_family_tasks(entries, elementwise_family(elementwise_ops()), elementwise_space());
}

FamilyGenerator elementwise_generator() { return family_generator(elementwise_family({}), elementwise_space()); }

}  // namespace tailforge
