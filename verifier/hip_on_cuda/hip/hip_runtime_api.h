// HIP on NVIDIA: the runtime API header, the same mapping as hip_runtime.h.
#pragma once

#include "hip/hip_runtime.h"
