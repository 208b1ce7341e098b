// hipRAND's device API for the HIP-on-NVIDIA build: cuRAND's, under hipRAND's names.
#pragma once
#include <curand_kernel.h>
#include "hiprand/hiprand.h"
