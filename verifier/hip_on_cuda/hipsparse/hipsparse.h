// hipSPARSE for the HIP-on-NVIDIA build: cuSPARSE under the names a translation uses (HIP's own
// NVIDIA backend does the same); the AMD build uses ROCm's hipSPARSE.
#pragma once
#include <cusparse.h>
#include <library_types.h>
#include "hip/hip_on_cuda_library_names.h"
// hipDataType's values, as CUDA's (tailforge_hipblas.h defines them the same way).
#ifndef HIP_R_32F
typedef cudaDataType hipDataType;
#endif
#define HIP_R_16F CUDA_R_16F
#define HIP_R_32F CUDA_R_32F
#define HIP_R_64F CUDA_R_64F
#define HIP_C_32F CUDA_C_32F
#define HIP_C_64F CUDA_C_64F
