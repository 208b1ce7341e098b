// The renames of the HIP-on-NVIDIA shim (verifier/hip_on_cuda), derived from the translator's
// table: for each CUDA runtime name the translator renames to a HIP name, the shim maps the HIP
// name back, so whatever runtime API a translation uses builds with nvcc. The generated header is
// committed; a test keeps it in step with policies/hipify_rules.json and the generated identifier
// table it names (policies/hipify_names.json).
#pragma once

#include <string>

#include "agents/translate/hipify.h"

namespace tailforge {

// The rule kinds mapped back: the CUDA runtime's own names. Libraries (cuRAND, cuBLAS, NVRTC,
// NVTX), the driver API and names that HIP spells like CUDA are left out.
bool is_shim_renamed_kind(const std::string& kind);

// The header text: one `#ifndef hipX / #define hipX cudaX` per HIP name, the first rule winning
// when several CUDA names map to one HIP name; names that `handwritten_shim` mentions (it
// declares them with other signatures or defaults) are skipped, and so are names a rule takes from
// a compatibility header (its `header`), which defines them on both platforms.
std::string hip_on_cuda_names_header(const HipifyRules& rules, const std::string& handwritten_shim);

// The same for the libraries the shim maps back to CUDA's (hipRAND to cuRAND, hipSPARSE to
// cuSPARSE, hipRTC to NVRTC, as HIP's own NVIDIA backend does): one `#define hipX cuX` per library
// name of the table; verifier/hip_on_cuda/hiprand/, hipsparse/ and hip/hiprtc.h include it after
// the CUDA library's header.
std::string hip_on_cuda_library_names_header(const HipifyRules& rules);

}  // namespace tailforge
