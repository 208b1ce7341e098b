// Stores a verified CUDA program's per-kernel SASS/RDNA3 pairs (agents/sass2rdna3/kernel_pairs.h)
// as samples of the sass2rdna3 track: the normalized SASS is the sample's text, the normalized
// RDNA3 its `rdna3_kernel` artifact, with both sides raw, their counts, the checks' rows and a
// `compiled_to` edge from the program. A kernel already stored (the same SASS from another
// program) only gains the edge. Runs inside the caller's transaction.
#pragma once

#include <cstdint>

#include "agents/sass2rdna3/kernel_pairs.h"
#include "daemon/verify/stage_records.h"
#include "policies/categorizer.h"
#include "store/samples.h"
#include "synth/artifact_kinds.h"

namespace tailforge {

Result<StoredDerivedSamples> store_kernel_pairs(Database& db, const Sample& program, const KernelPairing& pairing,
                                               const Taxonomy& taxonomy, const std::string& host);

}  // namespace tailforge
