// Five kernels of the shapes per-kernel pairs must handle: a bounds check with a branch, a
// non-inlined device function, __constant__ memory, a shared-memory reduction with a loop, and a
// template instantiated twice. Checked against CPU references; prints a few results.
#include <cstdio>
#include <cuda_runtime.h>

__constant__ float kWeights[4];

__device__ __noinline__ float smooth(float left, float mid, float right) {
  return 0.25f * left + 0.5f * mid + 0.25f * right;
}

__global__ void scale_add(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void blur(int n, const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i > 0 && i < n - 1) out[i] = smooth(in[i - 1], in[i], in[i + 1]);
}

__global__ void weighted(int n, const float* in, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = kWeights[i % 4] * in[i];
}

__global__ void block_sum(int n, const float* in, float* sums) {
  __shared__ float partial[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) sums[blockIdx.x] = partial[0];
}

template <typename T>
__global__ void square(int n, T* data) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = data[i] * data[i];
}

int main() {
  const int n = 1024, threads = 256, blocks = n / threads;
  float host[n], result[n], sums[blocks];
  int ints[n];
  for (int i = 0; i < n; ++i) { host[i] = (float)(i % 13) * 0.5f; ints[i] = i % 7; }
  const float weights[4] = {1.0f, 0.5f, 0.25f, 2.0f};
  cudaMemcpyToSymbol(kWeights, weights, sizeof(weights));
  float *x, *y, *s;
  int* d_ints;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMalloc(&s, blocks * sizeof(float));
  cudaMalloc(&d_ints, n * sizeof(int));
  cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_ints, ints, n * sizeof(int), cudaMemcpyHostToDevice);
  int failures = 0;

  cudaMemcpy(y, host, n * sizeof(float), cudaMemcpyHostToDevice);
  scale_add<<<blocks, threads>>>(n, 2.0f, x, y);
  cudaMemcpy(result, y, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) failures += result[i] != 3.0f * host[i];
  printf("scale_add %.2f %.2f\n", result[1], result[n - 1]);

  cudaMemset(y, 0, n * sizeof(float));
  blur<<<blocks, threads>>>(n, x, y);
  cudaMemcpy(result, y, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 1; i < n - 1; ++i) failures += result[i] != 0.25f * host[i - 1] + 0.5f * host[i] + 0.25f * host[i + 1];
  printf("blur %.3f %.3f\n", result[1], result[n - 2]);

  weighted<<<blocks, threads>>>(n, x, y);
  cudaMemcpy(result, y, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) failures += result[i] != weights[i % 4] * host[i];
  printf("weighted %.3f %.3f\n", result[3], result[n - 1]);

  block_sum<<<blocks, threads>>>(n, x, s);
  cudaMemcpy(sums, s, blocks * sizeof(float), cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; ++b) {
    float expected = 0.0f;
    for (int i = b * threads; i < (b + 1) * threads; ++i) expected += host[i];
    failures += sums[b] != expected;
  }
  printf("block_sum %.1f %.1f\n", sums[0], sums[blocks - 1]);

  square<float><<<blocks, threads>>>(n, x);
  square<int><<<blocks, threads>>>(n, d_ints);
  cudaMemcpy(result, x, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaMemcpy(ints, d_ints, n * sizeof(int), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) failures += result[i] != host[i] * host[i] || ints[i] != (i % 7) * (i % 7);
  printf("square %.2f %d\n", result[5], ints[6]);

  cudaError_t error = cudaDeviceSynchronize();
  if (error != cudaSuccess) { printf("CUDA error: %s\n", cudaGetErrorString(error)); return 1; }
  printf("%s\n", failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
