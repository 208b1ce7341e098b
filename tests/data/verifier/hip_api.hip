// Uses much of the HIP runtime subset the HIP-on-CUDA header maps; it only has to compile.
#include <hip/hip_runtime.h>
#include <hip/hip_cooperative_groups.h>  // cooperative_groups:: needs it, as on AMD
#include <cstdio>
__constant__ float scale;
__global__ void k(float* out, int n) {
  int i = hipBlockIdx_x * hipBlockDim_x + hipThreadIdx_x;
  float v = i * scale;
  v += __shfl_down(v, 1);
  v += __shfl_xor_sync(0xffffffff, v, 2); if (__ballot(v > 1) == 0 && __any(1)) v = 0;
  if (i < n) { out[i] = v; atomicAdd(out, 1.0f); }
  __builtin_amdgcn_wave_barrier();
}
// Names that real programs (llm.c) use, mapped by the generated renames.
__global__ void grid_k(float* out) { cooperative_groups::this_grid().sync(); out[0] = 1; }
void real_code_names(float* d, hipStream_t st) {
  hipFuncSetAttribute(reinterpret_cast<const void*>(k), hipFuncAttributeMaxDynamicSharedMemorySize, 65536);
  int blocks = 0; hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, grid_k, 128, 0);
  void* args[] = {&d}; hipLaunchCooperativeKernel((void*)grid_k, dim3(1), dim3(128), args, 0, st);
  float* m; hipMallocManaged(&m, 64); hipMemAdvise(m, 64, hipMemAdviseSetPreferredLocation, hipCpuDeviceId);
  hipMemPrefetchAsync(m, 64, 0, st);
  void* wc; hipHostMalloc(&wc, 64, hipHostMallocWriteCombined); hipHostFree(wc);
}
int main() {
  float *d; hipMalloc(&d, 1024 * sizeof(float)); float s = 2; hipMemcpyToSymbol(HIP_SYMBOL(scale), &s, sizeof s);
  hipStream_t st; hipStreamCreate(&st); hipEvent_t a, b; hipEventCreate(&a); hipEventCreate(&b);
  hipEventRecord(a, st); hipLaunchKernelGGL(k, dim3(4), dim3(256), 0, st, d, 1024); hipEventRecord(b, st);
  hipEventSynchronize(b); float ms; hipEventElapsedTime(&ms, a, b);
  hipDeviceProp_t p; hipGetDeviceProperties(&p, 0); float* m; hipMallocManaged(&m, 4); hipMemset(d, 0, 4);
  hipMemcpyAsync(m, d, 4, hipMemcpyDeviceToHost, st); hipStreamSynchronize(st);
  void* pinned; hipHostMalloc(&pinned, 64); hipHostFree(pinned); float* flagged; hipHostMalloc(&flagged, 64, 0);
  hipHostFree(flagged);
  printf("%s %d %s\n", p.name, p.warpSize, hipGetErrorString(hipGetLastError())); hipFree(d); hipFree(m); return 0; }
