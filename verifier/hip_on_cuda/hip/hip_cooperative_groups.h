// HIP on NVIDIA: HIP's cooperative groups are CUDA's (same namespace and names).
#pragma once

#include <cooperative_groups.h>

#include "hip/hip_runtime.h"
