// saxpy: y = a*x + y on the GPU, checked against a CPU reference; prints a few results.
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <hip/hip_runtime.h>

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  const int n = 1 << 16;
  const float a = 2.5f;
  float* x = (float*)malloc(n * sizeof(float));
  float* y = (float*)malloc(n * sizeof(float));
  float* expected = (float*)malloc(n * sizeof(float));
  unsigned seed = 12345u;
  for (int i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)(seed % 1000) / 100.0f;
    y[i] = (float)(i % 17) * 0.5f;
    expected[i] = a * x[i] + y[i];
  }
  float *dx = nullptr, *dy = nullptr;
  hipMalloc(&dx, n * sizeof(float));
  hipMalloc(&dy, n * sizeof(float));
  hipMemcpy(dx, x, n * sizeof(float), hipMemcpyHostToDevice);
  hipMemcpy(dy, y, n * sizeof(float), hipMemcpyHostToDevice);
  hipLaunchKernelGGL(saxpy, dim3((n + 255) / 256), dim3(256), 0, 0, n, a, dx, dy);
  hipError_t err = hipDeviceSynchronize();
  if (err != hipSuccess) { printf("HIP error: %s\n", hipGetErrorString(err)); return 1; }
  hipMemcpy(y, dy, n * sizeof(float), hipMemcpyDeviceToHost);
  int mismatches = 0;
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    if (fabsf(y[i] - expected[i]) > 1e-5f) ++mismatches;
    sum += y[i];
  }
  printf("y[0] = %.4f y[1] = %.4f y[%d] = %.4f\n", y[0], y[1], n - 1, y[n - 1]);
  printf("sum = %.3f mismatches = %d\n", sum, mismatches);
  printf("%s\n", mismatches == 0 ? "PASSED" : "FAILED");
  hipFree(dx);
  hipFree(dy);
  free(x); free(y); free(expected);
  return mismatches == 0 ? 0 : 1;
}
