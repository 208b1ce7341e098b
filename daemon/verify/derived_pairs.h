// The derived tracks' pairs a verified CUDA program yields (Track::Verified::
// chain_after_hip_translation): sass2rdna3's SASS/RDNA3 kernel pairs and ptx2cuda's PTX/CUDA kernel
// pairs, cut from the chain's outputs where the program was verified (on the worker that ran the
// chain), then stored as samples of their tracks with the program (where the job completes). The
// pipeline and the sample verifier call these two and know no derived track by name; a new
// derived track adds its pairing to VerifyOutput and its two cases here.
#pragma once

#include <string>

#include "daemon/verify/verify_io.h"
#include "policies/categorizer.h"

namespace tailforge {

// Sets `output`'s pairings from a verified program's chain `result`, run with `options` on
// `program_file`. The kernel pairing works under `work_dir`; the ptx2cuda pairing, which runs programs
// in the sandbox, in a scratch directory (verifier.scratch_root) that the sandbox user reaches.
void derive_pairs(const std::string& program_file, const ChainOptions& options, const std::string& work_dir,
                  VerifyOutput& output);

// Stores `output`'s pairings as samples of their tracks, each with a `compiled_to` edge from
// `program`, inside the caller's transaction.
Status store_derived_pairs(Database& db, const Sample& program, const VerifyOutput& output, const Taxonomy& taxonomy,
                           const std::string& host);

}  // namespace tailforge
