// hipRTC for the HIP-on-NVIDIA build: NVRTC under the names a translation uses (hiprtcGetCode is
// NVRTC's PTX, which the driver's module loader takes); the AMD build uses ROCm's hipRTC.
#pragma once
#include <nvrtc.h>
#include "hip/hip_on_cuda_library_names.h"
