// timed_sum: sums a fixed array on the GPU and, as benchmarks do, prints a number that is not
// its result: a time (random here, as a real one varies) and a tag that changes from run to run.
#include <cstdio>
#include <random>
#include <cuda_runtime.h>

__global__ void sum(const int* x, int n, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(out, x[i]);
}

int main() {
  const int n = 4096;
  int host[n];
  for (int i = 0; i < n; ++i) host[i] = i % 13;
  int *dx = nullptr, *dout = nullptr, result = 0;
  cudaMalloc(&dx, n * sizeof(int));
  cudaMalloc(&dout, sizeof(int));
  cudaMemcpy(dx, host, n * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(dout, 0, sizeof(int));
  sum<<<(n + 255) / 256, 256>>>(dx, n, dout);
  cudaMemcpy(&result, dout, sizeof(int), cudaMemcpyDeviceToHost);
  std::random_device entropy;
  printf("sum %d tag %u time %u.%u ms\n", result, entropy(), entropy() % 1000 + 1000, entropy() % 1000);
  cudaFree(dx);
  cudaFree(dout);
  return 0;
}
