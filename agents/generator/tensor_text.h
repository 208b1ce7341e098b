// Internal to the tensor_codegen generator domain: index arithmetic and literals printed the way
// a deep-learning compiler's CUDA code generator (TVM's CodeGenC) prints them: every binary
// operation in parentheses of its own, thread and block indices cast to int, a sum's constant
// last, division and remainder by a power of two as a shift and a mask. Text only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agents/generator/domain.h"

namespace tailforge::tensor_text {

extern const char* const kThread;  // ((int)threadIdx.x)
extern const char* const kBlock;   // ((int)blockIdx.x)

std::string number(int64_t value);
std::string binary(const std::string& left, const char* op, const std::string& right);
std::string scaled(const std::string& term, int64_t factor);  // "" for factor 0, term for 1
std::string quotient(const std::string& term, int64_t divisor);
std::string remainder(const std::string& term, int64_t divisor);  // "" (zero) for divisor 1
// `if <condition> {` as the code generator opens a guarded block: the condition's own
// parentheses serve as the statement's.
std::string if_open(const std::string& condition);
// terms (empty ones skipped) added left to right, then the constant when it is not 0.
std::string sum(const std::vector<std::string>& terms, int64_t constant = 0);

// blockIdx.x * block_span + threadIdx.x + offset, with threadIdx.x < threads and offset a multiple
// of threads below block_span; quotient and remainder by a constant simplified where the
// compiler's canonical simplifier would.
struct FlatIndex {
  int64_t block_span = 1;
  int64_t threads = 1;
  int64_t offset = 0;

  std::string text() const;
  std::string divided(int64_t divisor) const;
  std::string modulo(int64_t divisor) const;
};

// A floating literal as the code generator writes it: 0.000000e+00f (float) or 0.000000e+00.
std::string literal(const DomainContext& context, double value);
// The most negative finite value of the element type, for max reductions.
std::string lowest(const DomainContext& context);

// The kernel's head: extern "C" __global__ void __launch_bounds__(threads)
// default_function_kernel(T* __restrict__ a, ...).
std::string kernel_head(const DomainContext& context, int threads, const std::vector<std::string>& parameters);

// Host reference helpers: a template head when the templates knob is on, and the element type
// the host reference reads ("T" or "value_t").
std::string reference_head(const DomainContext& context);
std::string reference_type(const DomainContext& context);

int64_t blocks_for(int64_t elements, int64_t per_block);

// The host side of one operator's program: the tensors, the launch and the reference check.
struct HostTensor {
  std::string name;      // host vector; its device copy is d_<name>
  std::string elements;  // element count expression
  std::string fill;      // statements filling it; empty: every element from the seeded inputs
};

struct TensorProgram {
  std::vector<std::string> sizes;  // names of `const int` sizes, declared and reported in order
  std::vector<int64_t> size_values;
  std::vector<HostTensor> inputs;
  HostTensor output;  // its reference is want, filled by reference_call
  std::string reference_call;
  int64_t grid = 1;
  int threads = 1;
  std::string shared_bytes = "0";
  double tolerance = 1e-5;
};

// The statements of main(): inputs, device copies, the launch, the download, the reference
// check and the printed results.
std::string host_main(const DomainContext& context, const TensorProgram& program);

}  // namespace tailforge::tensor_text

namespace tailforge {

// The operators of the tensor_codegen domain, one writer each.
DomainCode write_tensor_dense(DomainContext& context);
DomainCode write_tensor_conv2d(DomainContext& context);
DomainCode write_tensor_injective(DomainContext& context);
DomainCode write_tensor_softmax(DomainContext& context);
DomainCode write_tensor_pool(DomainContext& context);

}  // namespace tailforge
