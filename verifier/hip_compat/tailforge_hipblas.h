// The hipBLAS subset real CUDA programs call, for a ROCm without hipBLAS (Debian 12), as
// straightforward HIP kernels in cuBLAS's column-major convention: handles, streams, math and
// pointer modes, status strings, the vector and matrix transfers (Set/Get Vector/Matrix and their
// Async forms), level 1 (copy, swap, scal, axpy, dot, nrm2, asum, iamax/iamin), GEMV, GER and GEMM
// (plain and strided-batched) in float and double, and the GEMM *Ex forms when every type is
// 32-bit float. Scalars (alpha, beta) and reduction results are read and written where the
// handle's pointer mode says, host by default. Correct, not fast. hipBLASLt: handle creation
// only; its matmuls are reported by the translator, never faked.
#pragma once
#ifndef TAILFORGE_HIPBLAS_H
#define TAILFORGE_HIPBLAS_H

#include <hip/hip_runtime.h>
#if defined(__HIP_PLATFORM_AMD__) || defined(__HIP_PLATFORM_HCC__)
#include <hip/library_types.h>
// HIP 5.2's hipDataType has only the 16/32/64-bit float kinds; the others, with the values later
// releases give them (and CUDA gives cudaDataType).
#if HIP_VERSION_MAJOR < 6
#define HIP_R_16BF static_cast<hipDataType>(14)
#define HIP_R_8I static_cast<hipDataType>(3)
#define HIP_R_8U static_cast<hipDataType>(8)
#define HIP_R_32I static_cast<hipDataType>(10)
#endif
#else
#include <library_types.h>
typedef cudaDataType hipDataType;
#define HIP_R_16F CUDA_R_16F
#define HIP_R_32F CUDA_R_32F
#define HIP_R_64F CUDA_R_64F
#define HIP_R_16BF CUDA_R_16BF
#define HIP_R_8I CUDA_R_8I
#define HIP_R_32I CUDA_R_32I
#endif

#include <stdint.h>

typedef enum {
  HIPBLAS_STATUS_SUCCESS = 0,
  HIPBLAS_STATUS_NOT_INITIALIZED = 1,
  HIPBLAS_STATUS_ALLOC_FAILED = 2,
  HIPBLAS_STATUS_INVALID_VALUE = 3,
  HIPBLAS_STATUS_MAPPING_ERROR = 4,
  HIPBLAS_STATUS_EXECUTION_FAILED = 5,
  HIPBLAS_STATUS_INTERNAL_ERROR = 6,
  HIPBLAS_STATUS_NOT_SUPPORTED = 7,
  HIPBLAS_STATUS_ARCH_MISMATCH = 8,
} hipblasStatus_t;

typedef enum { HIPBLAS_OP_N = 111, HIPBLAS_OP_T = 112, HIPBLAS_OP_C = 113 } hipblasOperation_t;
typedef enum { HIPBLAS_POINTER_MODE_HOST = 0, HIPBLAS_POINTER_MODE_DEVICE = 1 } hipblasPointerMode_t;
typedef enum {
  HIPBLAS_DEFAULT_MATH = 0,
  HIPBLAS_TENSOR_OP_MATH = 1,
  HIPBLAS_PEDANTIC_MATH = 2,
  HIPBLAS_TF32_TENSOR_OP_MATH = 3,
} hipblasMath_t;
typedef enum {
  HIPBLAS_COMPUTE_16F = 0,
  HIPBLAS_COMPUTE_32F = 2,
  HIPBLAS_COMPUTE_32F_FAST_16F = 3,
  HIPBLAS_COMPUTE_32F_FAST_TF32 = 5,
  HIPBLAS_COMPUTE_64F = 6,
} hipblasComputeType_t;
typedef enum { HIPBLAS_GEMM_DEFAULT = 160 } hipblasGemmAlgo_t;
typedef int64_t hipblasStride;

struct tailforge_hipblas_context {
  hipStream_t stream = 0;
  hipblasMath_t math = HIPBLAS_DEFAULT_MATH;
  hipblasPointerMode_t pointer_mode = HIPBLAS_POINTER_MODE_HOST;
  void* result_scratch = nullptr;  // device memory a reduction writes in host pointer mode; owned
};
typedef tailforge_hipblas_context* hipblasHandle_t;

struct tailforge_hipblaslt_context {};
typedef tailforge_hipblaslt_context* hipblasLtHandle_t;

inline hipblasStatus_t hipblasCreate(hipblasHandle_t* handle) {
  if (!handle) return HIPBLAS_STATUS_INVALID_VALUE;
  *handle = new tailforge_hipblas_context();
  return HIPBLAS_STATUS_SUCCESS;
}
inline hipblasStatus_t hipblasDestroy(hipblasHandle_t handle) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (handle->result_scratch) (void)hipFree(handle->result_scratch);
  delete handle;
  return HIPBLAS_STATUS_SUCCESS;
}
inline hipblasStatus_t hipblasSetStream(hipblasHandle_t handle, hipStream_t stream) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return HIPBLAS_STATUS_SUCCESS;
}
inline hipblasStatus_t hipblasGetStream(hipblasHandle_t handle, hipStream_t* stream) {
  if (!handle || !stream) return HIPBLAS_STATUS_NOT_INITIALIZED;
  *stream = handle->stream;
  return HIPBLAS_STATUS_SUCCESS;
}
// The mode is kept and reported back; every product here is computed in full precision.
inline hipblasStatus_t hipblasSetMathMode(hipblasHandle_t handle, hipblasMath_t mode) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return HIPBLAS_STATUS_SUCCESS;
}
inline hipblasStatus_t hipblasGetMathMode(hipblasHandle_t handle, hipblasMath_t* mode) {
  if (!handle || !mode) return HIPBLAS_STATUS_NOT_INITIALIZED;
  *mode = handle->math;
  return HIPBLAS_STATUS_SUCCESS;
}
inline hipblasStatus_t hipblasSetPointerMode(hipblasHandle_t handle, hipblasPointerMode_t mode) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (mode != HIPBLAS_POINTER_MODE_HOST && mode != HIPBLAS_POINTER_MODE_DEVICE) return HIPBLAS_STATUS_INVALID_VALUE;
  handle->pointer_mode = mode;
  return HIPBLAS_STATUS_SUCCESS;
}
inline hipblasStatus_t hipblasGetPointerMode(hipblasHandle_t handle, hipblasPointerMode_t* mode) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (!mode) return HIPBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pointer_mode;
  return HIPBLAS_STATUS_SUCCESS;
}
inline hipblasStatus_t hipblasLtCreate(hipblasLtHandle_t* handle) {
  if (!handle) return HIPBLAS_STATUS_INVALID_VALUE;
  *handle = new tailforge_hipblaslt_context();
  return HIPBLAS_STATUS_SUCCESS;
}
inline hipblasStatus_t hipblasLtDestroy(hipblasLtHandle_t handle) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return HIPBLAS_STATUS_SUCCESS;
}

// The enumerator's name, as hipBLAS gives it ("HIPBLAS_STATUS_INVALID_VALUE").
inline const char* hipblasStatusToString(hipblasStatus_t status) {
  static const char* const names[] = {
      "HIPBLAS_STATUS_SUCCESS",        "HIPBLAS_STATUS_NOT_INITIALIZED", "HIPBLAS_STATUS_ALLOC_FAILED",
      "HIPBLAS_STATUS_INVALID_VALUE",  "HIPBLAS_STATUS_MAPPING_ERROR",   "HIPBLAS_STATUS_EXECUTION_FAILED",
      "HIPBLAS_STATUS_INTERNAL_ERROR", "HIPBLAS_STATUS_NOT_SUPPORTED",   "HIPBLAS_STATUS_ARCH_MISMATCH"};
  unsigned index = static_cast<unsigned>(status);
  return index < sizeof(names) / sizeof(names[0]) ? names[index] : "<undefined hipblasStatus_t value>";
}
// cublasGetStatusName, which hipBLAS lacks: hipblasStatusToString already gives the name.
inline const char* tailforge_hipblasGetStatusName(hipblasStatus_t status) { return hipblasStatusToString(status); }

// `height` rows of `width` bytes, `from_pitch` and `to_pitch` bytes apart: queued on `stream`
// when `async`, else finished on return. A failed copy is a mapping error, as in cuBLAS.
inline hipblasStatus_t tailforge_copy_rows(void* to, size_t to_pitch, const void* from, size_t from_pitch, size_t width,
                                           size_t height, hipMemcpyKind kind, bool async, hipStream_t stream) {
  hipError_t error = async ? hipMemcpy2DAsync(to, to_pitch, from, from_pitch, width, height, kind, stream)
                           : hipMemcpy2D(to, to_pitch, from, from_pitch, width, height, kind);
  return error == hipSuccess ? HIPBLAS_STATUS_SUCCESS : HIPBLAS_STATUS_MAPPING_ERROR;
}

inline hipblasStatus_t tailforge_copy_vector(int n, int elem_size, const void* x, int incx, void* y, int incy,
                                             hipMemcpyKind kind, bool async, hipStream_t stream) {
  if (n < 0 || elem_size <= 0 || incx <= 0 || incy <= 0) return HIPBLAS_STATUS_INVALID_VALUE;
  if (n == 0) return HIPBLAS_STATUS_SUCCESS;
  if (!x || !y) return HIPBLAS_STATUS_INVALID_VALUE;
  size_t size = elem_size;
  if (incx == 1 && incy == 1) return tailforge_copy_rows(y, size * n, x, size * n, size * n, 1, kind, async, stream);
  return tailforge_copy_rows(y, size * incy, x, size * incx, size, n, kind, async, stream);
}

inline hipblasStatus_t tailforge_copy_matrix(int rows, int cols, int elem_size, const void* a, int lda, void* b,
                                             int ldb, hipMemcpyKind kind, bool async, hipStream_t stream) {
  if (rows < 0 || cols < 0 || elem_size <= 0 || lda <= 0 || ldb <= 0 || lda < rows || ldb < rows)
    return HIPBLAS_STATUS_INVALID_VALUE;
  if (rows == 0 || cols == 0) return HIPBLAS_STATUS_SUCCESS;
  if (!a || !b) return HIPBLAS_STATUS_INVALID_VALUE;
  size_t size = elem_size;
  return tailforge_copy_rows(b, size * ldb, a, size * lda, size * rows, cols, kind, async, stream);
}

inline hipblasStatus_t hipblasSetVector(int n, int elem_size, const void* x, int incx, void* y, int incy) {
  return tailforge_copy_vector(n, elem_size, x, incx, y, incy, hipMemcpyHostToDevice, false, 0);
}
inline hipblasStatus_t hipblasGetVector(int n, int elem_size, const void* x, int incx, void* y, int incy) {
  return tailforge_copy_vector(n, elem_size, x, incx, y, incy, hipMemcpyDeviceToHost, false, 0);
}
inline hipblasStatus_t hipblasSetVectorAsync(int n, int elem_size, const void* x, int incx, void* y, int incy,
                                             hipStream_t stream) {
  return tailforge_copy_vector(n, elem_size, x, incx, y, incy, hipMemcpyHostToDevice, true, stream);
}
inline hipblasStatus_t hipblasGetVectorAsync(int n, int elem_size, const void* x, int incx, void* y, int incy,
                                             hipStream_t stream) {
  return tailforge_copy_vector(n, elem_size, x, incx, y, incy, hipMemcpyDeviceToHost, true, stream);
}
inline hipblasStatus_t hipblasSetMatrix(int rows, int cols, int elem_size, const void* a, int lda, void* b, int ldb) {
  return tailforge_copy_matrix(rows, cols, elem_size, a, lda, b, ldb, hipMemcpyHostToDevice, false, 0);
}
inline hipblasStatus_t hipblasGetMatrix(int rows, int cols, int elem_size, const void* a, int lda, void* b, int ldb) {
  return tailforge_copy_matrix(rows, cols, elem_size, a, lda, b, ldb, hipMemcpyDeviceToHost, false, 0);
}
inline hipblasStatus_t hipblasSetMatrixAsync(int rows, int cols, int elem_size, const void* a, int lda, void* b,
                                             int ldb, hipStream_t stream) {
  return tailforge_copy_matrix(rows, cols, elem_size, a, lda, b, ldb, hipMemcpyHostToDevice, true, stream);
}
inline hipblasStatus_t hipblasGetMatrixAsync(int rows, int cols, int elem_size, const void* a, int lda, void* b,
                                             int ldb, hipStream_t stream) {
  return tailforge_copy_matrix(rows, cols, elem_size, a, lda, b, ldb, hipMemcpyDeviceToHost, true, stream);
}

// A scalar argument as a kernel reads it: the value itself in host pointer mode, the caller's
// device pointer in device pointer mode.
template <typename T>
struct tailforge_scalar {
  T value;
  const T* device;
  __device__ T get() const { return device ? *device : value; }
};
template <typename T>
tailforge_scalar<T> tailforge_scalar_of(hipblasHandle_t handle, const T* scalar) {
  if (handle->pointer_mode == HIPBLAS_POINTER_MODE_DEVICE) return {T(0), scalar};
  return {*scalar, nullptr};
}

// Where the i-th of n elements of a vector with increment inc lies; a negative increment walks
// the vector from its end, as in BLAS.
__host__ __device__ inline int64_t tailforge_offset(int i, int n, int inc) {
  return inc >= 0 ? (int64_t)i * inc : (int64_t)(n - 1 - i) * -(int64_t)inc;
}
template <typename T>
__device__ T tailforge_abs(T value) {
  return value < T(0) ? -value : value;
}
__device__ inline float tailforge_sqrt(float value) { return sqrtf(value); }
__device__ inline double tailforge_sqrt(double value) { return sqrt(value); }

inline dim3 tailforge_blocks_for(int n) { return dim3((n + 255) / 256); }
inline hipblasStatus_t tailforge_launched() {
  return hipGetLastError() == hipSuccess ? HIPBLAS_STATUS_SUCCESS : HIPBLAS_STATUS_EXECUTION_FAILED;
}

// Level 1, one thread per element.
template <typename T>
__global__ void tailforge_copy_kernel(int n, const T* x, int incx, T* y, int incy) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[tailforge_offset(i, n, incy)] = x[tailforge_offset(i, n, incx)];
}
template <typename T>
__global__ void tailforge_swap_kernel(int n, T* x, int incx, T* y, int incy) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T& left = x[tailforge_offset(i, n, incx)];
  T& right = y[tailforge_offset(i, n, incy)];
  T held = left;
  left = right;
  right = held;
}
template <typename T>
__global__ void tailforge_scal_kernel(int n, tailforge_scalar<T> alpha, T* x, int incx) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[(int64_t)i * incx] *= alpha.get();
}
template <typename T>
__global__ void tailforge_axpy_kernel(int n, tailforge_scalar<T> alpha, const T* x, int incx, T* y, int incy) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[tailforge_offset(i, n, incy)] += alpha.get() * x[tailforge_offset(i, n, incx)];
}

template <typename T>
hipblasStatus_t tailforge_copy(hipblasHandle_t handle, int n, const T* x, int incx, T* y, int incy) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (n <= 0) return HIPBLAS_STATUS_SUCCESS;
  hipLaunchKernelGGL(tailforge_copy_kernel<T>, tailforge_blocks_for(n), dim3(256), 0, handle->stream, n, x, incx, y,
                     incy);
  return tailforge_launched();
}
template <typename T>
hipblasStatus_t tailforge_swap(hipblasHandle_t handle, int n, T* x, int incx, T* y, int incy) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (n <= 0) return HIPBLAS_STATUS_SUCCESS;
  hipLaunchKernelGGL(tailforge_swap_kernel<T>, tailforge_blocks_for(n), dim3(256), 0, handle->stream, n, x, incx, y,
                     incy);
  return tailforge_launched();
}
// A non-positive increment leaves x as it is, as in cuBLAS.
template <typename T>
hipblasStatus_t tailforge_scal(hipblasHandle_t handle, int n, const T* alpha, T* x, int incx) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (!alpha) return HIPBLAS_STATUS_INVALID_VALUE;
  if (n <= 0 || incx <= 0) return HIPBLAS_STATUS_SUCCESS;
  hipLaunchKernelGGL(tailforge_scal_kernel<T>, tailforge_blocks_for(n), dim3(256), 0, handle->stream, n,
                     tailforge_scalar_of(handle, alpha), x, incx);
  return tailforge_launched();
}
template <typename T>
hipblasStatus_t tailforge_axpy(hipblasHandle_t handle, int n, const T* alpha, const T* x, int incx, T* y, int incy) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (!alpha) return HIPBLAS_STATUS_INVALID_VALUE;
  if (n <= 0) return HIPBLAS_STATUS_SUCCESS;
  hipLaunchKernelGGL(tailforge_axpy_kernel<T>, tailforge_blocks_for(n), dim3(256), 0, handle->stream, n,
                     tailforge_scalar_of(handle, alpha), x, incx, y, incy);
  return tailforge_launched();
}

inline hipblasStatus_t hipblasScopy(hipblasHandle_t handle, int n, const float* x, int incx, float* y, int incy) {
  return tailforge_copy(handle, n, x, incx, y, incy);
}
inline hipblasStatus_t hipblasDcopy(hipblasHandle_t handle, int n, const double* x, int incx, double* y, int incy) {
  return tailforge_copy(handle, n, x, incx, y, incy);
}
inline hipblasStatus_t hipblasSswap(hipblasHandle_t handle, int n, float* x, int incx, float* y, int incy) {
  return tailforge_swap(handle, n, x, incx, y, incy);
}
inline hipblasStatus_t hipblasDswap(hipblasHandle_t handle, int n, double* x, int incx, double* y, int incy) {
  return tailforge_swap(handle, n, x, incx, y, incy);
}
inline hipblasStatus_t hipblasSscal(hipblasHandle_t handle, int n, const float* alpha, float* x, int incx) {
  return tailforge_scal(handle, n, alpha, x, incx);
}
inline hipblasStatus_t hipblasDscal(hipblasHandle_t handle, int n, const double* alpha, double* x, int incx) {
  return tailforge_scal(handle, n, alpha, x, incx);
}
inline hipblasStatus_t hipblasSaxpy(hipblasHandle_t handle, int n, const float* alpha, const float* x, int incx,
                                    float* y, int incy) {
  return tailforge_axpy(handle, n, alpha, x, incx, y, incy);
}
inline hipblasStatus_t hipblasDaxpy(hipblasHandle_t handle, int n, const double* alpha, const double* x, int incx,
                                    double* y, int incy) {
  return tailforge_axpy(handle, n, alpha, x, incx, y, incy);
}

// Level 1 reductions: one block of tailforge_reduction_threads threads, its result written by
// thread 0.
constexpr int tailforge_reduction_threads = 256;

struct tailforge_add {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct tailforge_larger {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};

// Every thread's `value` combined; every thread of the block gets the result.
template <typename T, typename Combine>
__device__ T tailforge_block_reduce(T value, Combine combine) {
  __shared__ T partial[tailforge_reduction_threads];
  int thread = threadIdx.x;
  partial[thread] = value;
  __syncthreads();
  for (int half = tailforge_reduction_threads / 2; half > 0; half /= 2) {
    if (thread < half) partial[thread] = combine(partial[thread], partial[thread + half]);
    __syncthreads();
  }
  T result = partial[0];
  __syncthreads();
  return result;
}

// dot: the sum of x[i] * y[i]; asum (y null): the sum of |x[i]|.
template <typename T>
__global__ void tailforge_sum_kernel(int n, const T* x, int incx, const T* y, int incy, T* result) {
  T sum = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    T value = x[tailforge_offset(i, n, incx)];
    sum += y ? value * y[tailforge_offset(i, n, incy)] : tailforge_abs(value);
  }
  sum = tailforge_block_reduce(sum, tailforge_add());
  if (threadIdx.x == 0) *result = sum;
}

// The Euclidean norm, scaled by the largest magnitude so that squares neither overflow nor vanish.
template <typename T>
__global__ void tailforge_nrm2_kernel(int n, const T* x, int incx, T* result) {
  T largest = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    T magnitude = tailforge_abs(x[(int64_t)i * incx]);
    if (magnitude > largest) largest = magnitude;
  }
  largest = tailforge_block_reduce(largest, tailforge_larger());
  T sum = 0;
  if (largest > T(0)) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      T scaled = x[(int64_t)i * incx] / largest;
      sum += scaled * scaled;
    }
  }
  sum = tailforge_block_reduce(sum, tailforge_add());
  if (threadIdx.x == 0) *result = largest * tailforge_sqrt(sum);
}

// The 1-based index of the first element of largest (`smallest`: least) magnitude; 0 for n <= 0.
template <typename T>
__global__ void tailforge_iamax_kernel(bool smallest, int n, const T* x, int incx, int* result) {
  __shared__ T best_magnitude[tailforge_reduction_threads];
  __shared__ int best_index[tailforge_reduction_threads];
  int thread = threadIdx.x;
  T best = 0;
  int index = 0;
  for (int i = thread; i < n; i += blockDim.x) {
    T magnitude = tailforge_abs(x[(int64_t)i * incx]);
    if (index == 0 || (smallest ? magnitude < best : magnitude > best)) {
      best = magnitude;
      index = i + 1;
    }
  }
  best_magnitude[thread] = best;
  best_index[thread] = index;
  __syncthreads();
  for (int half = tailforge_reduction_threads / 2; half > 0; half /= 2) {
    if (thread < half) {
      T mine = best_magnitude[thread], other = best_magnitude[thread + half];
      int other_index = best_index[thread + half];
      bool better = smallest ? other < mine : other > mine;
      bool earlier_tie = other == mine && other_index < best_index[thread];
      if (other_index != 0 && (best_index[thread] == 0 || better || earlier_tie)) {
        best_magnitude[thread] = other;
        best_index[thread] = other_index;
      }
    }
    __syncthreads();
  }
  if (thread == 0) *result = best_index[0];
}

// Runs `launch(target)`, a reduction kernel writing one Result to the device pointer `target`. In
// device pointer mode that is `result` itself; in host pointer mode it is the handle's scratch,
// copied to `*result` before returning, after the handle's stream has finished.
template <typename Result, typename Launch>
hipblasStatus_t tailforge_reduce(hipblasHandle_t handle, Result* result, Launch launch) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (!result) return HIPBLAS_STATUS_INVALID_VALUE;
  bool on_host = handle->pointer_mode == HIPBLAS_POINTER_MODE_HOST;
  if (on_host && !handle->result_scratch && hipMalloc(&handle->result_scratch, sizeof(double)) != hipSuccess)
    return HIPBLAS_STATUS_ALLOC_FAILED;
  Result* target = on_host ? static_cast<Result*>(handle->result_scratch) : result;
  launch(target);
  if (hipGetLastError() != hipSuccess) return HIPBLAS_STATUS_EXECUTION_FAILED;
  if (!on_host) return HIPBLAS_STATUS_SUCCESS;
  if (hipMemcpyAsync(result, target, sizeof(Result), hipMemcpyDeviceToHost, handle->stream) != hipSuccess ||
      hipStreamSynchronize(handle->stream) != hipSuccess)
    return HIPBLAS_STATUS_EXECUTION_FAILED;
  return HIPBLAS_STATUS_SUCCESS;
}

template <typename T>
hipblasStatus_t tailforge_dot(hipblasHandle_t handle, int n, const T* x, int incx, const T* y, int incy, T* result) {
  return tailforge_reduce(handle, result, [&](T* target) {
    hipLaunchKernelGGL(tailforge_sum_kernel<T>, dim3(1), dim3(tailforge_reduction_threads), 0, handle->stream, n, x,
                       incx, y, incy, target);
  });
}
// asum, nrm2 and iamax/iamin of a vector with a non-positive increment are 0, as in cuBLAS.
template <typename T>
hipblasStatus_t tailforge_asum(hipblasHandle_t handle, int n, const T* x, int incx, T* result) {
  if (incx <= 0) n = 0;
  return tailforge_reduce(handle, result, [&](T* target) {
    hipLaunchKernelGGL(tailforge_sum_kernel<T>, dim3(1), dim3(tailforge_reduction_threads), 0, handle->stream, n, x,
                       incx, static_cast<const T*>(nullptr), 0, target);
  });
}
template <typename T>
hipblasStatus_t tailforge_nrm2(hipblasHandle_t handle, int n, const T* x, int incx, T* result) {
  if (incx <= 0) n = 0;
  return tailforge_reduce(handle, result, [&](T* target) {
    hipLaunchKernelGGL(tailforge_nrm2_kernel<T>, dim3(1), dim3(tailforge_reduction_threads), 0, handle->stream, n, x,
                       incx, target);
  });
}
template <typename T>
hipblasStatus_t tailforge_iamax(hipblasHandle_t handle, bool smallest, int n, const T* x, int incx, int* result) {
  if (incx <= 0) n = 0;
  return tailforge_reduce(handle, result, [&](int* target) {
    hipLaunchKernelGGL(tailforge_iamax_kernel<T>, dim3(1), dim3(tailforge_reduction_threads), 0, handle->stream,
                       smallest, n, x, incx, target);
  });
}

inline hipblasStatus_t hipblasSdot(hipblasHandle_t handle, int n, const float* x, int incx, const float* y, int incy,
                                   float* result) {
  return tailforge_dot(handle, n, x, incx, y, incy, result);
}
inline hipblasStatus_t hipblasDdot(hipblasHandle_t handle, int n, const double* x, int incx, const double* y, int incy,
                                   double* result) {
  return tailforge_dot(handle, n, x, incx, y, incy, result);
}
inline hipblasStatus_t hipblasSasum(hipblasHandle_t handle, int n, const float* x, int incx, float* result) {
  return tailforge_asum(handle, n, x, incx, result);
}
inline hipblasStatus_t hipblasDasum(hipblasHandle_t handle, int n, const double* x, int incx, double* result) {
  return tailforge_asum(handle, n, x, incx, result);
}
inline hipblasStatus_t hipblasSnrm2(hipblasHandle_t handle, int n, const float* x, int incx, float* result) {
  return tailforge_nrm2(handle, n, x, incx, result);
}
inline hipblasStatus_t hipblasDnrm2(hipblasHandle_t handle, int n, const double* x, int incx, double* result) {
  return tailforge_nrm2(handle, n, x, incx, result);
}
inline hipblasStatus_t hipblasIsamax(hipblasHandle_t handle, int n, const float* x, int incx, int* result) {
  return tailforge_iamax(handle, false, n, x, incx, result);
}
inline hipblasStatus_t hipblasIdamax(hipblasHandle_t handle, int n, const double* x, int incx, int* result) {
  return tailforge_iamax(handle, false, n, x, incx, result);
}
inline hipblasStatus_t hipblasIsamin(hipblasHandle_t handle, int n, const float* x, int incx, int* result) {
  return tailforge_iamax(handle, true, n, x, incx, result);
}
inline hipblasStatus_t hipblasIdamin(hipblasHandle_t handle, int n, const double* x, int incx, int* result) {
  return tailforge_iamax(handle, true, n, x, incx, result);
}

// C[batch] = alpha * op(A[batch]) * op(B[batch]) + beta * C[batch], column-major; one thread per
// element of C, blockIdx.z the batch.
template <typename T>
__global__ void tailforge_gemm_kernel(bool transpose_a, bool transpose_b, int m, int n, int k,
                                      tailforge_scalar<T> alpha, const T* a, int lda, hipblasStride stride_a,
                                      const T* b, int ldb, hipblasStride stride_b, tailforge_scalar<T> beta, T* c,
                                      int ldc, hipblasStride stride_c) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  int column = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || column >= n) return;
  a += blockIdx.z * stride_a;
  b += blockIdx.z * stride_b;
  c += blockIdx.z * stride_c;
  T sum = 0;
  for (int i = 0; i < k; ++i) {
    T left = transpose_a ? a[i + (int64_t)row * lda] : a[row + (int64_t)i * lda];
    T right = transpose_b ? b[column + (int64_t)i * ldb] : b[i + (int64_t)column * ldb];
    sum += left * right;
  }
  T scale = beta.get();
  T* out = &c[row + (int64_t)column * ldc];
  *out = scale == T(0) ? alpha.get() * sum : alpha.get() * sum + scale * *out;
}

template <typename T>
hipblasStatus_t tailforge_gemm(hipblasHandle_t handle, hipblasOperation_t transa, hipblasOperation_t transb, int m,
                               int n, int k, const T* alpha, const T* a, int lda, hipblasStride stride_a, const T* b,
                               int ldb, hipblasStride stride_b, const T* beta, T* c, int ldc, hipblasStride stride_c,
                               int batches) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || batches < 0 || !alpha || !beta) return HIPBLAS_STATUS_INVALID_VALUE;
  int rows_a = transa == HIPBLAS_OP_N ? m : k, rows_b = transb == HIPBLAS_OP_N ? k : n;
  if (lda < rows_a || lda < 1 || ldb < rows_b || ldb < 1 || ldc < m || ldc < 1) return HIPBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0 || batches == 0) return HIPBLAS_STATUS_SUCCESS;
  dim3 block(16, 16);
  dim3 grid((m + 15) / 16, (n + 15) / 16, batches);
  hipLaunchKernelGGL(tailforge_gemm_kernel<T>, grid, block, 0, handle->stream, transa != HIPBLAS_OP_N,
                     transb != HIPBLAS_OP_N, m, n, k, tailforge_scalar_of(handle, alpha), a, lda, stride_a, b, ldb,
                     stride_b, tailforge_scalar_of(handle, beta), c, ldc, stride_c);
  return tailforge_launched();
}

inline hipblasStatus_t hipblasSgemm(hipblasHandle_t handle, hipblasOperation_t transa, hipblasOperation_t transb, int m,
                                    int n, int k, const float* alpha, const float* a, int lda, const float* b, int ldb,
                                    const float* beta, float* c, int ldc) {
  return tailforge_gemm(handle, transa, transb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}
inline hipblasStatus_t hipblasDgemm(hipblasHandle_t handle, hipblasOperation_t transa, hipblasOperation_t transb, int m,
                                    int n, int k, const double* alpha, const double* a, int lda, const double* b,
                                    int ldb, const double* beta, double* c, int ldc) {
  return tailforge_gemm(handle, transa, transb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

inline hipblasStatus_t hipblasSgemmStridedBatched(hipblasHandle_t handle, hipblasOperation_t transa,
                                                  hipblasOperation_t transb, int m, int n, int k, const float* alpha,
                                                  const float* a, int lda, hipblasStride stride_a, const float* b,
                                                  int ldb, hipblasStride stride_b, const float* beta, float* c, int ldc,
                                                  hipblasStride stride_c, int batches) {
  return tailforge_gemm(handle, transa, transb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
                        stride_c, batches);
}
inline hipblasStatus_t hipblasDgemmStridedBatched(hipblasHandle_t handle, hipblasOperation_t transa,
                                                  hipblasOperation_t transb, int m, int n, int k, const double* alpha,
                                                  const double* a, int lda, hipblasStride stride_a, const double* b,
                                                  int ldb, hipblasStride stride_b, const double* beta, double* c,
                                                  int ldc, hipblasStride stride_c, int batches) {
  return tailforge_gemm(handle, transa, transb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
                        stride_c, batches);
}

inline bool tailforge_all_fp32(hipDataType a, hipDataType b, hipDataType c) {
  return a == HIP_R_32F && b == HIP_R_32F && c == HIP_R_32F;
}
inline bool tailforge_fp32_compute(hipblasComputeType_t compute) {
  return compute == HIPBLAS_COMPUTE_32F || compute == HIPBLAS_COMPUTE_32F_FAST_TF32 ||
         compute == HIPBLAS_COMPUTE_32F_FAST_16F;
}
inline bool tailforge_fp32_compute(hipDataType compute) { return compute == HIP_R_32F; }

// The *Ex forms for fp32 operands with an fp32 compute type; other types are not supported here.
template <typename Compute>
hipblasStatus_t hipblasGemmStridedBatchedEx(hipblasHandle_t handle, hipblasOperation_t transa,
                                            hipblasOperation_t transb, int m, int n, int k, const void* alpha,
                                            const void* a, hipDataType a_type, int lda, hipblasStride stride_a,
                                            const void* b, hipDataType b_type, int ldb, hipblasStride stride_b,
                                            const void* beta, void* c, hipDataType c_type, int ldc,
                                            hipblasStride stride_c, int batches, Compute compute, hipblasGemmAlgo_t) {
  if (!tailforge_all_fp32(a_type, b_type, c_type) || !tailforge_fp32_compute(compute))
    return HIPBLAS_STATUS_NOT_SUPPORTED;
  return tailforge_gemm(handle, transa, transb, m, n, k, static_cast<const float*>(alpha), static_cast<const float*>(a),
                        lda, stride_a, static_cast<const float*>(b), ldb, stride_b, static_cast<const float*>(beta),
                        static_cast<float*>(c), ldc, stride_c, batches);
}

template <typename Compute>
hipblasStatus_t hipblasGemmEx(hipblasHandle_t handle, hipblasOperation_t transa, hipblasOperation_t transb, int m,
                              int n, int k, const void* alpha, const void* a, hipDataType a_type, int lda,
                              const void* b, hipDataType b_type, int ldb, const void* beta, void* c, hipDataType c_type,
                              int ldc, Compute compute, hipblasGemmAlgo_t algo) {
  return hipblasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, a, a_type, lda, 0, b, b_type, ldb, 0, beta,
                                     c, c_type, ldc, 0, 1, compute, algo);
}

// y = alpha * op(A) * x + beta * y, A m-by-n column-major; one thread per element of y.
template <typename T>
__global__ void tailforge_gemv_kernel(bool transpose, int m, int n, tailforge_scalar<T> alpha, const T* a, int lda,
                                      const T* x, int incx, tailforge_scalar<T> beta, T* y, int incy) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int length = transpose ? n : m;
  int inner = transpose ? m : n;
  if (i >= length) return;
  T sum = 0;
  for (int j = 0; j < inner; ++j)
    sum += (transpose ? a[j + (int64_t)i * lda] : a[i + (int64_t)j * lda]) * x[tailforge_offset(j, inner, incx)];
  T scale = beta.get();
  T* out = &y[tailforge_offset(i, length, incy)];
  *out = scale == T(0) ? alpha.get() * sum : alpha.get() * sum + scale * *out;
}

template <typename T>
hipblasStatus_t tailforge_gemv(hipblasHandle_t handle, hipblasOperation_t trans, int m, int n, const T* alpha,
                               const T* a, int lda, const T* x, int incx, const T* beta, T* y, int incy) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || lda < m || lda < 1 || incx == 0 || incy == 0 || !alpha || !beta)
    return HIPBLAS_STATUS_INVALID_VALUE;
  int length = trans == HIPBLAS_OP_N ? m : n;
  if (length == 0) return HIPBLAS_STATUS_SUCCESS;
  hipLaunchKernelGGL(tailforge_gemv_kernel<T>, tailforge_blocks_for(length), dim3(256), 0, handle->stream,
                     trans != HIPBLAS_OP_N, m, n, tailforge_scalar_of(handle, alpha), a, lda, x, incx,
                     tailforge_scalar_of(handle, beta), y, incy);
  return tailforge_launched();
}

inline hipblasStatus_t hipblasSgemv(hipblasHandle_t handle, hipblasOperation_t trans, int m, int n, const float* alpha,
                                    const float* a, int lda, const float* x, int incx, const float* beta, float* y,
                                    int incy) {
  return tailforge_gemv(handle, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}
inline hipblasStatus_t hipblasDgemv(hipblasHandle_t handle, hipblasOperation_t trans, int m, int n, const double* alpha,
                                    const double* a, int lda, const double* x, int incx, const double* beta, double* y,
                                    int incy) {
  return tailforge_gemv(handle, trans, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

// A += alpha * x * y^T, A m-by-n column-major; one thread per element of A.
template <typename T>
__global__ void tailforge_ger_kernel(int m, int n, tailforge_scalar<T> alpha, const T* x, int incx, const T* y,
                                     int incy, T* a, int lda) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  int column = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || column >= n) return;
  T scaled = alpha.get() * y[tailforge_offset(column, n, incy)];
  a[row + (int64_t)column * lda] += x[tailforge_offset(row, m, incx)] * scaled;
}

template <typename T>
hipblasStatus_t tailforge_ger(hipblasHandle_t handle, int m, int n, const T* alpha, const T* x, int incx, const T* y,
                              int incy, T* a, int lda) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || incx == 0 || incy == 0 || lda < m || lda < 1 || !alpha) return HIPBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0) return HIPBLAS_STATUS_SUCCESS;
  dim3 block(16, 16);
  dim3 grid((m + 15) / 16, (n + 15) / 16);
  hipLaunchKernelGGL(tailforge_ger_kernel<T>, grid, block, 0, handle->stream, m, n, tailforge_scalar_of(handle, alpha),
                     x, incx, y, incy, a, lda);
  return tailforge_launched();
}

inline hipblasStatus_t hipblasSger(hipblasHandle_t handle, int m, int n, const float* alpha, const float* x, int incx,
                                   const float* y, int incy, float* a, int lda) {
  return tailforge_ger(handle, m, n, alpha, x, incx, y, incy, a, lda);
}
inline hipblasStatus_t hipblasDger(hipblasHandle_t handle, int m, int n, const double* alpha, const double* x, int incx,
                                   const double* y, int incy, double* a, int lda) {
  return tailforge_ger(handle, m, n, alpha, x, incx, y, incy, a, lda);
}

#endif  // TAILFORGE_HIPBLAS_H
