// CUDA programs of different structure (not only different names and numbers), so that even with
// identifiers and numbers masked no two are near-duplicates: decontamination and dataset-card
// tests store them as verified cuda2hip pairs and copy some into benchmark folders.
#pragma once

#include <string>
#include <vector>

#include "store/samples.h"

namespace tailforge {

inline const std::vector<std::string>& varied_programs() {
  static const std::vector<std::string> programs = {
      R"(#include <cstdio>
__global__ void scale_add(const float* x, const float* y, float* out, float alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = alpha * x[i] + y[i];
}
int main() {
  const int n = 1024;
  float *x, *y, *out;
  cudaMallocManaged(&x, n * sizeof(float));
  cudaMallocManaged(&y, n * sizeof(float));
  cudaMallocManaged(&out, n * sizeof(float));
  for (int i = 0; i < n; ++i) { x[i] = i * 0.5f; y[i] = 1.0f; }
  scale_add<<<(n + 255) / 256, 256>>>(x, y, out, 2.0f, n);
  cudaDeviceSynchronize();
  printf("%f %f\n", out[0], out[n - 1]);
  return 0;
}
)",
      R"(#include <cstdio>
#define TILE 16
__global__ void transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[TILE][TILE + 1];
  int c = blockIdx.x * TILE + threadIdx.x;
  int r = blockIdx.y * TILE + threadIdx.y;
  if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
  __syncthreads();
  c = blockIdx.y * TILE + threadIdx.x;
  r = blockIdx.x * TILE + threadIdx.y;
  if (r < cols && c < rows) out[r * rows + c] = tile[threadIdx.x][threadIdx.y];
}
int main() {
  int rows = 64, cols = 48;
  float *in, *out;
  cudaMallocManaged(&in, rows * cols * sizeof(float));
  cudaMallocManaged(&out, rows * cols * sizeof(float));
  for (int k = 0; k < rows * cols; ++k) in[k] = (float)k;
  dim3 block(TILE, TILE), grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
  transpose<<<grid, block>>>(in, out, rows, cols);
  cudaDeviceSynchronize();
  printf("%.1f\n", out[5 * rows + 7]);
}
)",
      R"(#include <cstdio>
__global__ void histogram(const unsigned char* bytes, unsigned int* bins, size_t count) {
  __shared__ unsigned int local[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < count; k += (size_t)gridDim.x * blockDim.x)
    atomicAdd(&local[bytes[k]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
int main() {
  size_t count = 1 << 16;
  unsigned char* bytes;
  unsigned int* bins;
  cudaMallocManaged(&bytes, count);
  cudaMallocManaged(&bins, 256 * sizeof(unsigned int));
  for (size_t k = 0; k < count; ++k) bytes[k] = (unsigned char)((k * 2654435761u) >> 24);
  cudaMemset(bins, 0, 256 * sizeof(unsigned int));
  histogram<<<32, 128>>>(bytes, bins, count);
  cudaDeviceSynchronize();
  unsigned long total = 0;
  for (int b = 0; b < 256; ++b) total += bins[b];
  printf("total %lu first %u\n", total, bins[0]);
}
)",
      R"(#include <cstdio>
__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  return v;
}
__global__ void dot(const float* a, const float* b, float* result, int n) {
  float partial = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) partial += a[i] * b[i];
  partial = warp_sum(partial);
  if ((threadIdx.x & 31) == 0) atomicAdd(result, partial);
}
int main() {
  int n = 4096;
  float *a, *b, *result;
  cudaMallocManaged(&a, n * sizeof(float));
  cudaMallocManaged(&b, n * sizeof(float));
  cudaMallocManaged(&result, sizeof(float));
  for (int i = 0; i < n; ++i) { a[i] = 1.0f / (i + 1); b[i] = (float)(i % 7); }
  *result = 0.0f;
  dot<<<8, 256>>>(a, b, result, n);
  cudaDeviceSynchronize();
  printf("dot = %.4f\n", *result);
}
)",
      R"(#include <cstdio>
__constant__ float weights[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
__global__ void blur(const float* signal, float* smoothed, int length) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= length) return;
  float acc = 0.0f;
  #pragma unroll
  for (int tap = -2; tap <= 2; ++tap) {
    int j = min(max(i + tap, 0), length - 1);
    acc += weights[tap + 2] * signal[j];
  }
  smoothed[i] = acc;
}
int main() {
  const int length = 300;
  float *signal, *smoothed;
  cudaMallocManaged(&signal, length * sizeof(float));
  cudaMallocManaged(&smoothed, length * sizeof(float));
  for (int i = 0; i < length; ++i) signal[i] = (i % 10 == 0) ? 10.0f : 0.0f;
  blur<<<3, 128>>>(signal, smoothed, length);
  cudaDeviceSynchronize();
  for (int i = 0; i < 5; ++i) printf("%g ", smoothed[i]);
  printf("\n");
}
)",
      R"(#include <cstdio>
struct Particle { float x, y, vx, vy; };
__global__ void step(Particle* particles, int count, float dt, float gravity) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= count) return;
  Particle p = particles[id];
  p.vy -= gravity * dt;
  p.x += p.vx * dt;
  p.y += p.vy * dt;
  if (p.y < 0.0f) { p.y = -p.y; p.vy = -0.8f * p.vy; }
  particles[id] = p;
}
int main() {
  int count = 512;
  Particle* particles;
  cudaMallocManaged(&particles, count * sizeof(Particle));
  for (int k = 0; k < count; ++k) particles[k] = {0.0f, 1.0f + k * 0.01f, 0.1f * (k % 3), 0.0f};
  for (int s = 0; s < 100; ++s) step<<<(count + 127) / 128, 128>>>(particles, count, 0.01f, 9.81f);
  cudaDeviceSynchronize();
  printf("%.3f %.3f\n", particles[10].x, particles[10].y);
}
)",
      R"(#include <cstdio>
__global__ void classify(const int* codes, int* labels, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  switch (codes[i] % 4) {
    case 0: labels[i] = -1; break;
    case 1: labels[i] = codes[i] / 2; break;
    case 2: labels[i] = codes[i] * codes[i]; break;
    default: labels[i] = 7;
  }
}
int main() {
  int n = 200;
  int *codes, *labels;
  cudaMallocManaged(&codes, n * sizeof(int));
  cudaMallocManaged(&labels, n * sizeof(int));
  for (int i = 0; i < n; ++i) codes[i] = (i * 37) % 101;
  classify<<<1, 256>>>(codes, labels, n);
  cudaDeviceSynchronize();
  long sum = 0;
  for (int i = 0; i < n; ++i) sum += labels[i];
  printf("sum of labels %ld\n", sum);
}
)",
      R"(#include <cstdio>
template <typename T>
__global__ void row_max(const T* matrix, T* maxima, int rows, int cols) {
  extern __shared__ unsigned char scratch[];
  T* best = reinterpret_cast<T*>(scratch);
  int row = blockIdx.x;
  T m = matrix[row * cols];
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = matrix[row * cols + c] > m ? matrix[row * cols + c] : m;
  best[threadIdx.x] = m;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride && best[threadIdx.x + stride] > best[threadIdx.x]) best[threadIdx.x] = best[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) maxima[row] = best[0];
}
int main() {
  int rows = 16, cols = 100;
  double *matrix, *maxima;
  cudaMallocManaged(&matrix, rows * cols * sizeof(double));
  cudaMallocManaged(&maxima, rows * sizeof(double));
  for (int k = 0; k < rows * cols; ++k) matrix[k] = (k * 7919) % 1000 / 10.0;
  row_max<double><<<rows, 64, 64 * sizeof(double)>>>(matrix, maxima, rows, cols);
  cudaDeviceSynchronize();
  printf("%.1f %.1f\n", maxima[0], maxima[rows - 1]);
}
)"};
  return programs;
}

// Stores `text` as a verified cuda2hip sample with its HIP translation; returns its id.
inline std::string store_verified_pair(Database& db, const std::string& text, const std::string& origin = "template",
                                       const std::string& domain = "elementwise",
                                       std::vector<std::string> features = {}) {
  Sample sample;
  sample.track = "cuda2hip";
  sample.origin = origin;
  sample.language = "cuda";
  sample.text = text;
  sample.domain = domain;
  sample.features = std::move(features);
  sample.status = "verified";
  std::string id = insert_sample_if_absent(db, sample).value().id;
  std::string hip = text;
  for (size_t at = hip.find("cuda"); at != std::string::npos; at = hip.find("cuda", at)) hip.replace(at, 4, "hip");
  insert_artifact(db, id, {"translate.hip", "hip", "hip", "#include <hip/hip_runtime.h>\n" + hip}).value();
  return id;
}

}  // namespace tailforge
