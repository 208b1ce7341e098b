// Kernels with fully unrolled loops, compiled to unrolled_loops.ptx for reroll_test.cpp:
// nvcc -ptx -arch=sm_90 unrolled_loops.cu -o unrolled_loops.ptx
#include <cuda_fp16.h>

__global__ void scale_add_f32(float* out, const float* in, float a) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 16;
#pragma unroll
  for (int k = 0; k < 16; ++k) out[base + k] = a * in[base + k] + out[base + k];
}

__global__ void add_f16(__half* out, const __half* a, const __half* b) {
  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 8;
#pragma unroll
  for (int k = 0; k < 8; ++k) out[base + k] = __hadd(a[base + k], b[base + k]);
}

__global__ void strided_sum_i16(int* out, const short* in, int stride) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int sum = 0;
#pragma unroll
  for (int k = 0; k < 32; ++k) sum += in[t + k * 256];
  out[t] = sum;
}
