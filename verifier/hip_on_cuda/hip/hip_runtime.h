// HIP on NVIDIA: maps the HIP runtime onto the CUDA runtime, so nvcc compiles a .hip file
// (`nvcc -I verifier/hip_on_cuda -x cu`). This file holds what needs more than a rename (HIP's
// defaults, the non-_sync warp functions, AMDGPU builtins the translator writes);
// hip_on_cuda_names.h, generated from the translator's table, renames the rest;
// hip_driver_on_cuda.h wraps the driver-style calls. Not a full HIP port: hipRAND, hipSPARSE and
// hipRTC are cuRAND, cuSPARSE and NVRTC under other names (hiprand/, hipsparse/, hip/hiprtc.h),
// hipBLAS is verifier/hip_compat's.
#pragma once

#include <cuda_runtime.h>
// Included before the warp-vote macros below: CUDA's C++ library (which cooperative groups,
// Thrust and CUB include) declares a function named __any, which the __any macro would rewrite
// if that header came after it. Only the header that declares it is included: all of
// cooperative groups costs more than a second of every HIP-on-NVIDIA compile.
#if __has_include(<cuda/std/__functional/invoke.h>)
#include <cuda/std/__functional/invoke.h>
#else
#include <cooperative_groups.h>
#endif

#include <cstddef>

#define __HIP_PLATFORM_NVIDIA__ 1
#define __HIP_PLATFORM_NVCC__ 1
#define HIP_SYMBOL(symbol) symbol

typedef cudaError_t hipError_t;
typedef cudaStream_t hipStream_t;
typedef cudaEvent_t hipEvent_t;
typedef cudaDeviceProp hipDeviceProp_t;
typedef cudaMemcpyKind hipMemcpyKind;

#define hipSuccess cudaSuccess
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipErrorOutOfMemory cudaErrorMemoryAllocation
#define hipErrorMemoryAllocation cudaErrorMemoryAllocation
#define hipErrorNotReady cudaErrorNotReady
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemcpyHostToHost cudaMemcpyHostToHost
#define hipMemcpyDefault cudaMemcpyDefault
#define hipMemAttachGlobal cudaMemAttachGlobal
#define hipStreamDefault cudaStreamDefault
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipEventDefault cudaEventDefault
#define hipHostMallocDefault cudaHostAllocDefault

#define hipMalloc cudaMalloc
#define hipMallocManaged cudaMallocManaged
#define hipFree cudaFree
#define hipHostFree cudaFreeHost
#define hipMallocHost cudaMallocHost
#define hipFreeHost cudaFreeHost
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemcpy2D cudaMemcpy2D
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipMemcpyToSymbol cudaMemcpyToSymbol
#define hipMemcpyFromSymbol cudaMemcpyFromSymbol
#define hipMemcpyToSymbolAsync cudaMemcpyToSymbolAsync
#define hipMemcpyFromSymbolAsync cudaMemcpyFromSymbolAsync
#define hipGetSymbolAddress cudaGetSymbolAddress
#define hipGetSymbolSize cudaGetSymbolSize
#define hipMemGetInfo cudaMemGetInfo
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipDeviceReset cudaDeviceReset
#define hipGetLastError cudaGetLastError
#define hipPeekAtLastError cudaPeekAtLastError
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipGetDevice cudaGetDevice
#define hipSetDevice cudaSetDevice
#define hipGetDeviceCount cudaGetDeviceCount
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipEventCreate cudaEventCreate
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipEventDestroy cudaEventDestroy
#define hipEventQuery cudaEventQuery
#define hipStreamCreate cudaStreamCreate
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamWaitEvent cudaStreamWaitEvent
#define hipFuncSetCacheConfig cudaFuncSetCacheConfig
#define hipOccupancyMaxPotentialBlockSize cudaOccupancyMaxPotentialBlockSize

// hipHostMalloc's flags default to hipHostMallocDefault; cudaHostAlloc's have no default.
template <typename T>
inline cudaError_t hipHostMalloc(T** pointer, size_t bytes, unsigned int flags = cudaHostAllocDefault) {
  return cudaHostAlloc(reinterpret_cast<void**>(pointer), bytes, flags);
}

// HIP names a device (or the host, as device -1) by number where CUDA 13 takes a cudaMemLocation.
inline cudaMemLocation hip_on_cuda_location(int device) {
  cudaMemLocation location{};
  location.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
  location.id = device == cudaCpuDeviceId ? 0 : device;
  return location;
}
inline cudaError_t hipMemAdvise(const void* pointer, size_t bytes, cudaMemoryAdvise advice, int device) {
#if CUDART_VERSION >= 13000
  return cudaMemAdvise(pointer, bytes, advice, hip_on_cuda_location(device));
#else
  return cudaMemAdvise(pointer, bytes, advice, device);
#endif
}
inline cudaError_t hipMemPrefetchAsync(const void* pointer, size_t bytes, int device, cudaStream_t stream = 0) {
#if CUDART_VERSION >= 13000
  return cudaMemPrefetchAsync(pointer, bytes, hip_on_cuda_location(device), 0, stream);
#else
  return cudaMemPrefetchAsync(pointer, bytes, device, stream);
#endif
}
#if CUDART_VERSION >= 13000
// A program that picks CUDA 13's forms by CUDART_VERSION (which this shim defines) passes a
// cudaMemLocation: the calls take it as CUDA does.
inline cudaError_t hipMemAdvise(const void* pointer, size_t bytes, cudaMemoryAdvise advice, cudaMemLocation location) {
  return cudaMemAdvise(pointer, bytes, advice, location);
}
inline cudaError_t hipMemPrefetchAsync(const void* pointer, size_t bytes, cudaMemLocation location, unsigned int flags,
                                       cudaStream_t stream = 0) {
  return cudaMemPrefetchAsync(pointer, bytes, location, flags, stream);
}
#endif

// hipLaunchKernelGGL(kernel, grid, block, shared_bytes, stream, args...)
#define hipLaunchKernelGGL(kernel, grid, block, shared_bytes, stream, ...) \
  kernel<<<(grid), (block), (shared_bytes), (stream)>>>(__VA_ARGS__)

#define hipThreadIdx_x threadIdx.x
#define hipThreadIdx_y threadIdx.y
#define hipThreadIdx_z threadIdx.z
#define hipBlockIdx_x blockIdx.x
#define hipBlockIdx_y blockIdx.y
#define hipBlockIdx_z blockIdx.z
#define hipBlockDim_x blockDim.x
#define hipBlockDim_y blockDim.y
#define hipBlockDim_z blockDim.z
#define hipGridDim_x gridDim.x
#define hipGridDim_y gridDim.y
#define hipGridDim_z gridDim.z

// HIP's non-_sync warp shuffles and votes: every lane of the (32-wide) warp takes part.
#define HIP_ON_CUDA_FULL_MASK 0xffffffffu
template <typename T> __device__ inline T __shfl(T value, int lane, int width = warpSize) {
  return __shfl_sync(HIP_ON_CUDA_FULL_MASK, value, lane, width);
}
template <typename T> __device__ inline T __shfl_up(T value, unsigned delta, int width = warpSize) {
  return __shfl_up_sync(HIP_ON_CUDA_FULL_MASK, value, delta, width);
}
template <typename T> __device__ inline T __shfl_down(T value, unsigned delta, int width = warpSize) {
  return __shfl_down_sync(HIP_ON_CUDA_FULL_MASK, value, delta, width);
}
template <typename T> __device__ inline T __shfl_xor(T value, int mask, int width = warpSize) {
  return __shfl_xor_sync(HIP_ON_CUDA_FULL_MASK, value, mask, width);
}
// CUDA declares legacy __ballot/__any/__all; HIP code calling them gets the _sync forms.
#define __ballot(predicate) __ballot_sync(HIP_ON_CUDA_FULL_MASK, (predicate))
#define __any(predicate) __any_sync(HIP_ON_CUDA_FULL_MASK, (predicate))
#define __all(predicate) __all_sync(HIP_ON_CUDA_FULL_MASK, (predicate))

// The translator writes __syncwarp() as the AMDGPU wave barrier.
#define __builtin_amdgcn_wave_barrier() __syncwarp()

#include "hip_on_cuda_names.h"
#include "hip_driver_on_cuda.h"
