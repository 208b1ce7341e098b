// HIP's driver-style API (what the translator writes for cu* calls: modules, contexts, device
// queries, hipDeviceptr_t copies) on NVIDIA, as thin wrappers over the CUDA driver API, for the
// HIP-on-NVIDIA build. hipDeviceptr_t is a pointer, as in HIP; CUresult codes become a
// hipError_t (success, or cudaErrorUnknown naming nothing more). A program calling one of these
// links libcuda (the chain links it when the CUDA original includes cuda.h); one that calls none
// references nothing of the driver.
#pragma once

#include <cuda.h>

typedef CUdevice hipDevice_t;
typedef CUcontext hipCtx_t;
typedef CUmodule hipModule_t;
typedef CUfunction hipFunction_t;
typedef void* hipDeviceptr_t;

inline hipError_t hip_on_cuda_result(CUresult result) { return result == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown; }
inline CUdeviceptr hip_on_cuda_pointer(const void* pointer) { return (CUdeviceptr)(uintptr_t)pointer; }

inline hipError_t hipInit(unsigned int flags) { return hip_on_cuda_result(cuInit(flags)); }
inline hipError_t hipDeviceGet(hipDevice_t* device, int ordinal) { return hip_on_cuda_result(cuDeviceGet(device, ordinal)); }
inline hipError_t hipDeviceGetName(char* name, int length, hipDevice_t device) {
  return hip_on_cuda_result(cuDeviceGetName(name, length, device));
}
inline hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) {
  return hip_on_cuda_result(cuDeviceTotalMem(bytes, device));
}
inline hipError_t hipDeviceComputeCapability(int* major, int* minor, hipDevice_t device) {
  CUresult first = cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
  if (first != CUDA_SUCCESS) return hip_on_cuda_result(first);
  return hip_on_cuda_result(cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device));
}
inline hipError_t hipDevicePrimaryCtxRetain(hipCtx_t* context, hipDevice_t device) {
  return hip_on_cuda_result(cuDevicePrimaryCtxRetain(context, device));
}
inline hipError_t hipDevicePrimaryCtxRelease(hipDevice_t device) {
  return hip_on_cuda_result(cuDevicePrimaryCtxRelease(device));
}
inline hipError_t hipCtxSetCurrent(hipCtx_t context) { return hip_on_cuda_result(cuCtxSetCurrent(context)); }
inline hipError_t hipCtxGetCurrent(hipCtx_t* context) { return hip_on_cuda_result(cuCtxGetCurrent(context)); }
inline hipError_t hipCtxPushCurrent(hipCtx_t context) { return hip_on_cuda_result(cuCtxPushCurrent(context)); }
inline hipError_t hipCtxPopCurrent(hipCtx_t* context) { return hip_on_cuda_result(cuCtxPopCurrent(context)); }
inline hipError_t hipCtxSynchronize() { return hip_on_cuda_result(cuCtxSynchronize()); }
inline hipError_t hipCtxGetDevice(hipDevice_t* device) { return hip_on_cuda_result(cuCtxGetDevice(device)); }

inline hipError_t hipMemAllocHost(void** pointer, size_t bytes) { return cudaMallocHost(pointer, bytes); }

inline hipError_t hipMemcpyHtoD(hipDeviceptr_t destination, const void* source, size_t bytes) {
  return hip_on_cuda_result(cuMemcpyHtoD(hip_on_cuda_pointer(destination), source, bytes));
}
inline hipError_t hipMemcpyDtoH(void* destination, hipDeviceptr_t source, size_t bytes) {
  return hip_on_cuda_result(cuMemcpyDtoH(destination, hip_on_cuda_pointer(source), bytes));
}
inline hipError_t hipMemcpyDtoD(hipDeviceptr_t destination, hipDeviceptr_t source, size_t bytes) {
  return hip_on_cuda_result(cuMemcpyDtoD(hip_on_cuda_pointer(destination), hip_on_cuda_pointer(source), bytes));
}
inline hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t destination, const void* source, size_t bytes, hipStream_t stream) {
  return hip_on_cuda_result(cuMemcpyHtoDAsync(hip_on_cuda_pointer(destination), source, bytes, (CUstream)stream));
}
inline hipError_t hipMemcpyDtoHAsync(void* destination, hipDeviceptr_t source, size_t bytes, hipStream_t stream) {
  return hip_on_cuda_result(cuMemcpyDtoHAsync(destination, hip_on_cuda_pointer(source), bytes, (CUstream)stream));
}
inline hipError_t hipMemsetD8(hipDeviceptr_t destination, unsigned char value, size_t count) {
  return hip_on_cuda_result(cuMemsetD8(hip_on_cuda_pointer(destination), value, count));
}
inline hipError_t hipMemsetD32(hipDeviceptr_t destination, int value, size_t count) {
  return hip_on_cuda_result(cuMemsetD32(hip_on_cuda_pointer(destination), (unsigned int)value, count));
}

inline hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  return hip_on_cuda_result(cuModuleLoadData(module, image));
}
inline hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name) {
  return hip_on_cuda_result(cuModuleGetFunction(function, module, name));
}
inline hipError_t hipModuleGetGlobal(hipDeviceptr_t* pointer, size_t* bytes, hipModule_t module, const char* name) {
  CUdeviceptr global = 0;
  CUresult result = cuModuleGetGlobal(&global, bytes, module, name);
  if (pointer) *pointer = (void*)(uintptr_t)global;
  return hip_on_cuda_result(result);
}
inline hipError_t hipModuleLaunchKernel(hipFunction_t function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                                        unsigned int block_x, unsigned int block_y, unsigned int block_z,
                                        unsigned int shared_bytes, hipStream_t stream, void** parameters, void** extra) {
  return hip_on_cuda_result(cuLaunchKernel(function, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes,
                                           (CUstream)stream, parameters, extra));
}
inline hipError_t hipModuleUnload(hipModule_t module) { return hip_on_cuda_result(cuModuleUnload(module)); }
