// Compiles only as C++17, the dialect nvcc uses for CUDA: digit separators, std::bool_constant,
// an inline variable and if constexpr, as real programs (llm.c) use them.
#include <hip/hip_runtime.h>
#include <cstdio>
#include <type_traits>

constexpr std::bool_constant<true> kTrue;
inline constexpr int kScale = 1'000;

template <bool Half>
__global__ void scale(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if constexpr (Half) {
    if (i < n) x[i] *= 0.5f;
  } else {
    if (i < n) x[i] *= kScale;
  }
}

int main() {
  float* x = nullptr;
  hipMalloc(&x, 256 * sizeof(float));
  hipLaunchKernelGGL(scale<decltype(kTrue)::value>, dim3(1), dim3(256), 0, 0, x, 256);
  hipDeviceSynchronize();
  printf("done\n");
  hipFree(x);
  return 0;
}
