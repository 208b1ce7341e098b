// The hipBLAS subset real CUDA programs call, for a ROCm without hipBLAS (Debian 12): handles,
// streams, math mode, and single-precision GEMM/GEMV (plain, strided-batched, and the *Ex forms
// when every type is 32-bit float) as straightforward HIP kernels in cuBLAS's column-major
// convention. Scalars (alpha, beta) are host pointers, cuBLAS's default pointer mode. hipBLASLt:
// handle creation only; its matmuls are reported by the translator, never faked.
#pragma once

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
// The mode is kept and reported back; every product here is computed in full fp32.
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

// C[batch] = alpha * op(A[batch]) * op(B[batch]) + beta * C[batch], column-major; one thread per
// element of C, blockIdx.z the batch.
__global__ void tailforge_sgemm_kernel(bool transpose_a, bool transpose_b, int m, int n, int k, float alpha,
                                       const float* a, int lda, hipblasStride stride_a, const float* b, int ldb,
                                       hipblasStride stride_b, float beta, float* c, int ldc,
                                       hipblasStride stride_c) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  int column = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || column >= n) return;
  a += blockIdx.z * stride_a;
  b += blockIdx.z * stride_b;
  c += blockIdx.z * stride_c;
  float sum = 0.0f;
  for (int i = 0; i < k; ++i) {
    float left = transpose_a ? a[i + (int64_t)row * lda] : a[row + (int64_t)i * lda];
    float right = transpose_b ? b[column + (int64_t)i * ldb] : b[i + (int64_t)column * ldb];
    sum += left * right;
  }
  float* out = &c[row + (int64_t)column * ldc];
  *out = beta == 0.0f ? alpha * sum : alpha * sum + beta * *out;
}

inline hipblasStatus_t tailforge_sgemm(hipblasHandle_t handle, hipblasOperation_t transa, hipblasOperation_t transb,
                                       int m, int n, int k, const float* alpha, const float* a, int lda,
                                       hipblasStride stride_a, const float* b, int ldb, hipblasStride stride_b,
                                       const float* beta, float* c, int ldc, hipblasStride stride_c, int batches) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || batches < 0 || !alpha || !beta) return HIPBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0 || batches == 0) return HIPBLAS_STATUS_SUCCESS;
  dim3 block(16, 16);
  dim3 grid((m + 15) / 16, (n + 15) / 16, batches);
  hipLaunchKernelGGL(tailforge_sgemm_kernel, grid, block, 0, handle->stream, transa != HIPBLAS_OP_N,
                     transb != HIPBLAS_OP_N, m, n, k, *alpha, a, lda, stride_a, b, ldb, stride_b, *beta, c, ldc,
                     stride_c);
  return hipGetLastError() == hipSuccess ? HIPBLAS_STATUS_SUCCESS : HIPBLAS_STATUS_EXECUTION_FAILED;
}

inline hipblasStatus_t hipblasSgemm(hipblasHandle_t handle, hipblasOperation_t transa, hipblasOperation_t transb,
                                    int m, int n, int k, const float* alpha, const float* a, int lda, const float* b,
                                    int ldb, const float* beta, float* c, int ldc) {
  return tailforge_sgemm(handle, transa, transb, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

inline hipblasStatus_t hipblasSgemmStridedBatched(hipblasHandle_t handle, hipblasOperation_t transa,
                                                  hipblasOperation_t transb, int m, int n, int k, const float* alpha,
                                                  const float* a, int lda, hipblasStride stride_a, const float* b,
                                                  int ldb, hipblasStride stride_b, const float* beta, float* c,
                                                  int ldc, hipblasStride stride_c, int batches) {
  return tailforge_sgemm(handle, transa, transb, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc,
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
  return tailforge_sgemm(handle, transa, transb, m, n, k, static_cast<const float*>(alpha),
                         static_cast<const float*>(a), lda, stride_a, static_cast<const float*>(b), ldb, stride_b,
                         static_cast<const float*>(beta), static_cast<float*>(c), ldc, stride_c, batches);
}

template <typename Compute>
hipblasStatus_t hipblasGemmEx(hipblasHandle_t handle, hipblasOperation_t transa, hipblasOperation_t transb, int m,
                              int n, int k, const void* alpha, const void* a, hipDataType a_type, int lda,
                              const void* b, hipDataType b_type, int ldb, const void* beta, void* c,
                              hipDataType c_type, int ldc, Compute compute, hipblasGemmAlgo_t algo) {
  return hipblasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, a, a_type, lda, 0, b, b_type, ldb, 0,
                                     beta, c, c_type, ldc, 0, 1, compute, algo);
}

// y = alpha * op(A) * x + beta * y, A m-by-n column-major; one thread per element of y.
__global__ void tailforge_sgemv_kernel(bool transpose, int m, int n, float alpha, const float* a, int lda,
                                       const float* x, int incx, float beta, float* y, int incy) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int length = transpose ? n : m;
  int inner = transpose ? m : n;
  if (i >= length) return;
  float sum = 0.0f;
  for (int j = 0; j < inner; ++j)
    sum += (transpose ? a[j + (int64_t)i * lda] : a[i + (int64_t)j * lda]) * x[(int64_t)j * incx];
  float* out = &y[(int64_t)i * incy];
  *out = beta == 0.0f ? alpha * sum : alpha * sum + beta * *out;
}

inline hipblasStatus_t hipblasSgemv(hipblasHandle_t handle, hipblasOperation_t trans, int m, int n,
                                    const float* alpha, const float* a, int lda, const float* x, int incx,
                                    const float* beta, float* y, int incy) {
  if (!handle) return HIPBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || incx <= 0 || incy <= 0 || !alpha || !beta) return HIPBLAS_STATUS_INVALID_VALUE;
  int length = trans == HIPBLAS_OP_N ? m : n;
  if (length == 0) return HIPBLAS_STATUS_SUCCESS;
  hipLaunchKernelGGL(tailforge_sgemv_kernel, dim3((length + 255) / 256), dim3(256), 0, handle->stream,
                     trans != HIPBLAS_OP_N, m, n, *alpha, a, lda, x, incx, *beta, y, incy);
  return hipGetLastError() == hipSuccess ? HIPBLAS_STATUS_SUCCESS : HIPBLAS_STATUS_EXECUTION_FAILED;
}
