// The kernelopt track's long-tail synthesis: a tail's seeds (a task the model under test got
// wrong or slow, or a rare task; a candidate seed stands for its task) become new tasks near
// them, from the built-in generator's variants (agents/kernelopt/generated_tasks.h: other shapes
// of the family, fused neighbours of an elementwise chain), each with the tags the tail detector
// reads. The synthesizer drops exact and near-duplicate references and stores the rest with their
// lineage and verify jobs, as for any track.
#pragma once

#include <cstdint>

#include "synth/synthesizer.h"

namespace tailforge {

// `db` must outlive the source (a candidate seed is read back to its task).
CandidateSource kernel_task_candidate_source(Database& db);

// tail_report_for_cycle + kernel_task_candidate_source + synthesize_tails.
Result<SynthesisSummary> synthesize_kernelopt_for_cycle(Database& db, const SynthPolicy& policy, int64_t cycle_id,
                                                        uint64_t seed);

}  // namespace tailforge
