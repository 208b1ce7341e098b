// A self-checking program for tailforge_hipblas.h: the cuBLAS calls real programs make beyond
// fp32 GEMM (strided vector and matrix transfers, level 1 in host and device pointer mode, GEMV,
// GER and GEMM in double, status strings). Prints one line per check; exits 0 only when every
// result is right, with cuBLAS or with its HIP translation.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#define CHECK_CUBLAS(call)                                                                               \
  do {                                                                                                   \
    cublasStatus_t status = (call);                                                                      \
    if (status != CUBLAS_STATUS_SUCCESS) {                                                               \
      printf("%s failed: %s (%s)\n", #call, cublasGetStatusName(status), cublasGetStatusString(status)); \
      return 1;                                                                                          \
    }                                                                                                    \
  } while (0)

#define CHECK_CUDA(call)                                           \
  do {                                                             \
    cudaError_t error = (call);                                    \
    if (error != cudaSuccess) {                                    \
      printf("%s failed: %s\n", #call, cudaGetErrorString(error)); \
      return 1;                                                    \
    }                                                              \
  } while (0)

static int failures = 0;

static void expect(bool right, const char* what) {
  printf("%s: %s\n", what, right ? "ok" : "WRONG");
  if (!right) ++failures;
}

static bool near(double actual, double expected, double tolerance) {
  return fabs(actual - expected) <= tolerance * (1.0 + fabs(expected));
}

int main() {
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  CHECK_CUBLAS(cublasSetStream(handle, stream));

  // A 3x2 block of a host matrix with 4 rows, A(r, c) = r + 4c + 1, into a device matrix with 5.
  double host_a[4 * 2];
  for (int i = 0; i < 8; ++i) host_a[i] = i + 1;
  double* dev_a;
  CHECK_CUDA(cudaMalloc(&dev_a, 5 * 2 * sizeof(double)));
  CHECK_CUDA(cudaMemset(dev_a, 0, 5 * 2 * sizeof(double)));
  CHECK_CUBLAS(cublasSetMatrix(3, 2, sizeof(double), host_a, 4, dev_a, 5));
  double block[3 * 2], padding[2] = {-1, -1};
  CHECK_CUBLAS(cublasGetMatrix(3, 2, sizeof(double), dev_a, 5, block, 3));
  CHECK_CUBLAS(cublasGetVector(2, sizeof(double), dev_a + 3, 5, padding, 1));  // row 3: never written
  bool same = true;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c) same = same && block[r + 3 * c] == host_a[r + 4 * c];
  expect(same && padding[0] == 0 && padding[1] == 0, "set/get matrix with leading dimensions");

  float host_m[4] = {1.5f, -2, 8, 0.25f}, back_m[4] = {0, 0, 0, 0};
  float* dev_m;
  CHECK_CUDA(cudaMalloc(&dev_m, 4 * sizeof(float)));
  CHECK_CUBLAS(cublasSetMatrixAsync(2, 2, sizeof(float), host_m, 2, dev_m, 2, stream));
  CHECK_CUBLAS(cublasGetMatrixAsync(2, 2, sizeof(float), dev_m, 2, back_m, 2, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  expect(memcmp(host_m, back_m, sizeof(host_m)) == 0, "set/get matrix async");

  // Every second host element, into every third device element, then back contiguous.
  float host_x[8] = {3, -1, 4, -1, -5, 9, 2, -6}, got[4] = {0, 0, 0, 0}, got_async[4] = {0, 0, 0, 0};
  float *dev_strided, *u, *w;
  CHECK_CUDA(cudaMalloc(&dev_strided, 12 * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&u, 4 * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&w, 4 * sizeof(float)));
  CHECK_CUBLAS(cublasSetVector(4, sizeof(float), host_x, 2, dev_strided, 3));
  CHECK_CUBLAS(cublasGetVector(4, sizeof(float), dev_strided, 3, got, 1));
  expect(got[0] == 3 && got[1] == 4 && got[2] == -5 && got[3] == 2, "set/get vector with increments");
  CHECK_CUBLAS(cublasSetVectorAsync(4, sizeof(float), got, 1, u, 1, stream));
  CHECK_CUBLAS(cublasGetVectorAsync(4, sizeof(float), u, 1, got_async, 1, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  expect(memcmp(got, got_async, sizeof(got)) == 0, "set/get vector async");
  expect(cublasSetVector(4, sizeof(float), host_x, 0, u, 1) == CUBLAS_STATUS_INVALID_VALUE,
         "a zero increment is refused");
  expect(cublasSetMatrix(3, 2, sizeof(double), host_a, 2, dev_a, 5) != CUBLAS_STATUS_SUCCESS,
         "a leading dimension below the rows is refused");

  // Level 1 in host pointer mode on u = {3, 4, -5, 2}: each result is ready when the call returns.
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_DEVICE;
  CHECK_CUBLAS(cublasGetPointerMode(handle, &mode));
  expect(mode == CUBLAS_POINTER_MODE_HOST, "host pointer mode is the default");
  float dot = 0, reversed = 0, norm = 0, sum = 0;
  int largest = 0, least = 0;
  CHECK_CUBLAS(cublasSdot(handle, 4, u, 1, u, 1, &dot));
  CHECK_CUBLAS(cublasSdot(handle, 4, u, 1, u, -1, &reversed));
  CHECK_CUBLAS(cublasSnrm2(handle, 4, u, 1, &norm));
  CHECK_CUBLAS(cublasSasum(handle, 4, u, 1, &sum));
  CHECK_CUBLAS(cublasIsamax(handle, 4, u, 1, &largest));
  CHECK_CUBLAS(cublasIsamin(handle, 4, u, 1, &least));
  expect(dot == 54 && reversed == -28, "sdot, forwards and with a negative increment");
  expect(near(norm, sqrt(54.0), 1e-6) && sum == 14, "snrm2 and sasum");
  expect(largest == 3 && least == 4, "isamax and isamin count from 1");
  float two = 2, half = 0.5f, after_u[4], after_w[4];
  CHECK_CUBLAS(cublasScopy(handle, 4, u, 1, w, 1));
  CHECK_CUBLAS(cublasSaxpy(handle, 4, &two, u, 1, w, 1));  // w = 3u
  CHECK_CUBLAS(cublasSscal(handle, 4, &half, w, 1));       // w = 1.5u
  CHECK_CUBLAS(cublasSswap(handle, 4, u, 1, w, 1));
  CHECK_CUBLAS(cublasGetVector(4, sizeof(float), u, 1, after_u, 1));
  CHECK_CUBLAS(cublasGetVector(4, sizeof(float), w, 1, after_w, 1));
  same = true;
  for (int i = 0; i < 4; ++i) same = same && after_u[i] == 1.5f * got[i] && after_w[i] == got[i];
  expect(same, "scopy, saxpy, sscal and sswap");

  // Level 1 in device pointer mode on p = {1, -2, 3, -4, 5}: scalars and results in device memory.
  double host_p[5] = {1, -2, 3, -4, 5}, three = 3;
  double *p, *q, *dev_scalars;
  int* dev_indices;
  CHECK_CUDA(cudaMalloc(&p, 5 * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&q, 5 * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&dev_scalars, 4 * sizeof(double)));
  CHECK_CUDA(cudaMalloc(&dev_indices, 2 * sizeof(int)));
  CHECK_CUBLAS(cublasSetVector(5, sizeof(double), host_p, 1, p, 1));
  CHECK_CUDA(cudaMemcpy(dev_scalars, &three, sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUBLAS(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE));
  CHECK_CUBLAS(cublasGetPointerMode(handle, &mode));
  expect(mode == CUBLAS_POINTER_MODE_DEVICE, "device pointer mode is kept");
  CHECK_CUBLAS(cublasDdot(handle, 5, p, 1, p, 1, dev_scalars + 1));
  CHECK_CUBLAS(cublasDnrm2(handle, 5, p, 1, dev_scalars + 2));
  CHECK_CUBLAS(cublasDasum(handle, 5, p, 1, dev_scalars + 3));
  CHECK_CUBLAS(cublasIdamax(handle, 5, p, 1, dev_indices));
  CHECK_CUBLAS(cublasIdamin(handle, 5, p, 1, dev_indices + 1));
  CHECK_CUBLAS(cublasDcopy(handle, 5, p, 1, q, 1));
  CHECK_CUBLAS(cublasDaxpy(handle, 5, dev_scalars, p, 1, q, 1));  // q = 4p
  CHECK_CUBLAS(cublasDscal(handle, 5, dev_scalars, q, 1));        // q = 12p
  CHECK_CUBLAS(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST));
  double results[4], host_q[5];
  int indices[2];
  CHECK_CUDA(cudaMemcpy(results, dev_scalars, sizeof(results), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(indices, dev_indices, sizeof(indices), cudaMemcpyDeviceToHost));
  CHECK_CUBLAS(cublasGetVector(5, sizeof(double), q, 1, host_q, 1));
  expect(results[1] == 55 && near(results[2], sqrt(55.0), 1e-12) && results[3] == 15,
         "ddot, dnrm2 and dasum into device memory");
  expect(indices[0] == 5 && indices[1] == 1, "idamax and idamin into device memory");
  same = true;
  for (int i = 0; i < 5; ++i) same = same && host_q[i] == 12 * host_p[i];
  expect(same, "daxpy and dscal with a device alpha");

  // Dgemv on the 3x2 block A = [1 5; 2 6; 3 7] (lda 5), plain and transposed.
  double x2[2] = {1, 2}, ones[3] = {1, 1, 1}, y3[3], y2[2], alpha = 2, beta = 1, one = 1, zero = 0;
  double *dev_x2, *dev_ones, *dev_y3, *dev_y2;
  CHECK_CUDA(cudaMalloc(&dev_x2, sizeof(x2)));
  CHECK_CUDA(cudaMalloc(&dev_ones, sizeof(ones)));
  CHECK_CUDA(cudaMalloc(&dev_y3, sizeof(ones)));
  CHECK_CUDA(cudaMalloc(&dev_y2, sizeof(x2)));
  CHECK_CUBLAS(cublasSetVector(2, sizeof(double), x2, 1, dev_x2, 1));
  CHECK_CUBLAS(cublasSetVector(3, sizeof(double), ones, 1, dev_ones, 1));
  CHECK_CUBLAS(cublasSetVector(3, sizeof(double), ones, 1, dev_y3, 1));
  CHECK_CUBLAS(cublasDgemv(handle, CUBLAS_OP_N, 3, 2, &alpha, dev_a, 5, dev_x2, 1, &beta, dev_y3, 1));
  CHECK_CUBLAS(cublasDgemv(handle, CUBLAS_OP_T, 3, 2, &one, dev_a, 5, dev_ones, 1, &zero, dev_y2, 1));
  CHECK_CUBLAS(cublasGetVector(3, sizeof(double), dev_y3, 1, y3, 1));
  CHECK_CUBLAS(cublasGetVector(2, sizeof(double), dev_y2, 1, y2, 1));
  expect(y3[0] == 23 && y3[1] == 29 && y3[2] == 35 && y2[0] == 6 && y2[1] == 18, "dgemv, plain and transposed");

  // Dgemm: C = A * A^T (3x3), then Dger: C += x y^T with x = (1, 1, 1), y = (1, 2, 3).
  double c[9], expected[9], y_ger[3] = {1, 2, 3};
  double *dev_c, *dev_y_ger;
  CHECK_CUDA(cudaMalloc(&dev_c, sizeof(c)));
  CHECK_CUDA(cudaMalloc(&dev_y_ger, sizeof(y_ger)));
  CHECK_CUBLAS(cublasSetVector(3, sizeof(double), y_ger, 1, dev_y_ger, 1));
  CHECK_CUBLAS(cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, 3, 3, 2, &one, dev_a, 5, dev_a, 5, &zero, dev_c, 3));
  CHECK_CUBLAS(cublasDger(handle, 3, 3, &one, dev_ones, 1, dev_y_ger, 1, dev_c, 3));
  CHECK_CUBLAS(cublasGetMatrix(3, 3, sizeof(double), dev_c, 3, c, 3));
  same = true;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      expected[i + 3 * j] = host_a[i] * host_a[j] + host_a[i + 4] * host_a[j + 4] + y_ger[j];
      same = same && c[i + 3 * j] == expected[i + 3 * j];
    }
  expect(same, "dgemm with a transposed operand, then dger");

  // Two 2x2 products at once: C[b] = A[b] * I for A[0] = (1..4), A[1] = (5..8).
  double batch_a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, identity[4] = {1, 0, 0, 1}, batch_c[8];
  double *dev_batch_a, *dev_identity, *dev_batch_c;
  CHECK_CUDA(cudaMalloc(&dev_batch_a, sizeof(batch_a)));
  CHECK_CUDA(cudaMalloc(&dev_identity, sizeof(identity)));
  CHECK_CUDA(cudaMalloc(&dev_batch_c, sizeof(batch_c)));
  CHECK_CUBLAS(cublasSetVector(8, sizeof(double), batch_a, 1, dev_batch_a, 1));
  CHECK_CUBLAS(cublasSetVector(4, sizeof(double), identity, 1, dev_identity, 1));
  CHECK_CUBLAS(cublasDgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, dev_batch_a, 2, 4,
                                         dev_identity, 2, 0, &zero, dev_batch_c, 2, 4, 2));
  CHECK_CUBLAS(cublasGetVector(8, sizeof(double), dev_batch_c, 1, batch_c, 1));
  expect(memcmp(batch_a, batch_c, sizeof(batch_a)) == 0, "dgemm strided batched");

  const char* name = cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE);
  const char* text = cublasGetStatusString(CUBLAS_STATUS_SUCCESS);
  expect(name && strstr(name, "INVALID_VALUE") && text && text[0] != '\0', "status name and string");

  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaStreamDestroy(stream));
  for (void* memory :
       {(void*)dev_a, (void*)dev_m, (void*)dev_strided, (void*)u, (void*)w, (void*)p, (void*)q, (void*)dev_scalars,
        (void*)dev_indices, (void*)dev_x2, (void*)dev_ones, (void*)dev_y3, (void*)dev_y2, (void*)dev_c,
        (void*)dev_y_ger, (void*)dev_batch_a, (void*)dev_identity, (void*)dev_batch_c})
    CHECK_CUDA(cudaFree(memory));
  printf("%s\n", failures == 0 ? "all results right" : "some results WRONG");
  return failures == 0 ? 0 : 1;
}
