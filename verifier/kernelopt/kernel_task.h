// The kernelopt track's data (ConCuR): a task is one operator with fixed shapes and a naive
// reference CUDA implementation; a candidate is another implementation of the same task with the
// reasoning that produced it. Both are "kernel units": CUDA text that defines
//
//   void tf_launch(const float* const* inputs, float* output, cudaStream_t stream);
//
// (a C++ function, not extern "C"), launches its kernels on `stream` only, and bakes the task's
// shapes in as constants. A unit may #include system headers; it must not define main().
// The harness (harness.h) puts a reference and a candidate in one program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace tailforge {

// The operator types a task can have; curation balances "single" against the rest.
inline constexpr const char* kSingleOperator = "single";       // one elementwise/data-movement op
inline constexpr const char* kReductionOperator = "reduction"; // sums, maxima, norms
inline constexpr const char* kFusionOperator = "fusion";       // several ops the reference runs as separate kernels
inline constexpr const char* kMatmulOperator = "matmul";       // dense linear algebra
inline constexpr const char* kStencilOperator = "stencil";     // neighbourhood ops

struct KernelBuffer {
  std::string name;
  int64_t elements = 0;  // float32 elements
};

struct KernelTask {
  std::string name;           // stable id: "relu_4m", "matmul_bias_relu_512"
  std::string operator_type;  // one of the k*Operator names above
  std::string domain;         // the generator domain it belongs to ("tensor", "image", ...)
  std::string description;    // one line: what the operator computes, with shapes
  std::vector<KernelBuffer> inputs;
  KernelBuffer output;
  float input_low = -1.0f, input_high = 1.0f;  // inputs are uniform in [low, high) from the seed
  double tolerance = 1e-3;    // an output is right when |candidate - reference| <= tolerance * (1 + |reference|)
  std::string reference_source;  // the kernel unit the task measures against, or a PyTorch module
  // "cuda" (reference_source is a kernel unit) or "pytorch": a KernelBench-style Python file with
  // Model, get_inputs() and optionally get_init_inputs() (pytorch_harness.h).
  std::string reference_language = "cuda";
  std::string origin = "builtin";  // "builtin", "generated" (agents/kernelopt/generated_tasks.h) or "imported"
  std::string family;  // the built-in family that made it ("elementwise", "gemm", ...); empty for imported tasks
  // JSON text: what rebuilds the task and its built-in candidates ({"family":..,"shape":{..}}); empty for
  // imported tasks.
  std::string recipe;
  // The floating-point operations the operator must do (a matrix product's 2mnk); 0 when not
  // declared. With the bytes it must read (every input, once) it bounds how fast a call can be.
  double flops = 0;
  int64_t read_bytes = 0;  // the bytes it must read; 0: every input, once
  int64_t must_read_bytes() const {
    if (read_bytes > 0) return read_bytes;
    int64_t bytes = 0;
    for (const KernelBuffer& input : inputs) bytes += input.elements * 4;
    return bytes;
  }
};

struct KernelCandidate {
  std::string task;        // KernelTask::name
  std::string strategy;    // "float4_vectorized", "shared_tiling", ... or the model's name
  std::string origin;      // "builtin" or "model"
  std::string model;       // the model that wrote it (origin "model")
  std::string reasoning;   // the reasoning that produced it
  std::string source;      // the kernel unit
};

// Reasoning length: whitespace-separated words (an LLM's token count is not known for every
// model; words keep every candidate on the same scale).
int64_t reasoning_length(const std::string& reasoning);

// A task's buffers, input range, tolerance, reference language, roofline inputs (FLOPs, bytes),
// family and recipe as JSON (the stored task's spec); read back into `task`, a field missing or
// of the wrong type keeping its default. Never throws on any JSON.
nlohmann::json kernel_task_spec(const KernelTask& task);
void read_kernel_task_spec(const nlohmann::json& spec, KernelTask& task);
// The spec with name, operator type, domain and description: the whole task but its reference.
nlohmann::json kernel_task_json(const KernelTask& task);
// An error naming `where` unless the JSON has a name, an operator type and buffers.
Result<KernelTask> kernel_task_from_json(const nlohmann::json& json, const std::string& where);

}  // namespace tailforge
