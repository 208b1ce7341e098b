// Stores a verified CUDA program's per-kernel PTX/CUDA pairs (agents/ptx2cuda/ptx_pairs.h) as
// samples of the ptx2cuda track: the refactored kernel unit is the sample's text; the PTX entry,
// its Rolled-PTX, the unit before refactoring, and a captured launch (launch.txt and its buffers,
// before and after) are its artifacts, with the checks' rows and a `compiled_to` edge from the
// program. A pair already stored only gains the edge. Runs inside the caller's transaction.
#pragma once

#include "agents/ptx2cuda/ptx_pairs.h"
#include "daemon/verify/stage_records.h"
#include "policies/categorizer.h"
#include "store/samples.h"

namespace tailforge {

Result<StoredDerivedSamples> store_ptx_pairs(Database& db, const Sample& program, const PtxPairing& pairing,
                                       const Taxonomy& taxonomy, const std::string& host);

}  // namespace tailforge
