// HIP on NVIDIA: half precision comes from CUDA's header.
#pragma once

#include <cuda_fp16.h>

#include "hip/hip_runtime.h"
