// hipSPARSE's status strings, which releases before hipSPARSE 3 (Debian 12 packages 2.3) lack:
// the translation of cusparseGetErrorString / cusparseGetErrorName. On the NVIDIA platform the
// hipSPARSE names are cuSPARSE's (verifier/hip_on_cuda), so the same switch serves both.
#pragma once
#ifndef TAILFORGE_HIPSPARSE_H
#define TAILFORGE_HIPSPARSE_H

#include <hipsparse/hipsparse.h>

#if !defined(hipsparseVersionMajor) || hipsparseVersionMajor < 3
inline const char* hipsparseGetErrorName(hipsparseStatus_t status) {
  switch (status) {
    case HIPSPARSE_STATUS_SUCCESS: return "HIPSPARSE_STATUS_SUCCESS";
    case HIPSPARSE_STATUS_NOT_INITIALIZED: return "HIPSPARSE_STATUS_NOT_INITIALIZED";
    case HIPSPARSE_STATUS_ALLOC_FAILED: return "HIPSPARSE_STATUS_ALLOC_FAILED";
    case HIPSPARSE_STATUS_INVALID_VALUE: return "HIPSPARSE_STATUS_INVALID_VALUE";
    case HIPSPARSE_STATUS_ARCH_MISMATCH: return "HIPSPARSE_STATUS_ARCH_MISMATCH";
    case HIPSPARSE_STATUS_MAPPING_ERROR: return "HIPSPARSE_STATUS_MAPPING_ERROR";
    case HIPSPARSE_STATUS_EXECUTION_FAILED: return "HIPSPARSE_STATUS_EXECUTION_FAILED";
    case HIPSPARSE_STATUS_INTERNAL_ERROR: return "HIPSPARSE_STATUS_INTERNAL_ERROR";
    case HIPSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "HIPSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case HIPSPARSE_STATUS_ZERO_PIVOT: return "HIPSPARSE_STATUS_ZERO_PIVOT";
    case HIPSPARSE_STATUS_NOT_SUPPORTED: return "HIPSPARSE_STATUS_NOT_SUPPORTED";
    case HIPSPARSE_STATUS_INSUFFICIENT_RESOURCES: return "HIPSPARSE_STATUS_INSUFFICIENT_RESOURCES";
    default: return "Unrecognized status code";
  }
}

inline const char* hipsparseGetErrorString(hipsparseStatus_t status) {
  switch (status) {
    case HIPSPARSE_STATUS_SUCCESS: return "success";
    case HIPSPARSE_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case HIPSPARSE_STATUS_ALLOC_FAILED: return "resource allocation failed";
    case HIPSPARSE_STATUS_INVALID_VALUE: return "an invalid value was passed";
    case HIPSPARSE_STATUS_ARCH_MISMATCH: return "the device architecture is not supported";
    case HIPSPARSE_STATUS_MAPPING_ERROR: return "access to GPU memory failed";
    case HIPSPARSE_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case HIPSPARSE_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case HIPSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "the matrix type is not supported";
    case HIPSPARSE_STATUS_ZERO_PIVOT: return "a zero pivot was found";
    case HIPSPARSE_STATUS_NOT_SUPPORTED: return "the operation is not supported";
    case HIPSPARSE_STATUS_INSUFFICIENT_RESOURCES: return "resources are insufficient";
    default: return "Unrecognized status code";
  }
}
#endif

#endif  // TAILFORGE_HIPSPARSE_H
