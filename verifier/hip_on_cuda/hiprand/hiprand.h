// hipRAND for the HIP-on-NVIDIA build: cuRAND under the names a translation uses (HIP's own NVIDIA
// backend does the same). The shim's folder comes first on the include path, so this is what
// `#include <hiprand/hiprand.h>` means there; the AMD build uses ROCm's hipRAND.
#pragma once
#include <curand.h>
#include "hip/hip_on_cuda_library_names.h"
