// The c2x86 track's built-in synthesis: candidates are C functions of the generator's kinds that
// write the tail's feature (a switch tail gets switch dispatchers, a float tail float blends), of
// the tail's kind for a domain tail, and of the seed's kind for a category tail, each from its own
// derived seed, so the synthesizer's dedup sees new functions rather than copies.
#pragma once

#include <cstdint>

#include "synth/synthesizer.h"

namespace tailforge {

CandidateSource c2x86_candidate_source();

// tail_report_for_cycle + c2x86_candidate_source + synthesize_tails.
Result<SynthesisSummary> synthesize_c2x86_for_cycle(Database& db, const SynthPolicy& policy, int64_t cycle_id,
                                                    uint64_t seed);

}  // namespace tailforge
