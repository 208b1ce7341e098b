// API tails: the families and names of the CUDA API whose share of the verified corpus is below
// the usage prior's target (synth/api_coverage.h), as corpus_share tail entries. The
// model-failure signal per family comes with the other dimensions (synth/tails.cpp). Reads only.
#pragma once

#include <vector>

#include "store/database.h"
#include "synth/policy.h"
#include "synth/tail_entry.h"

namespace tailforge {

// Appends api_family/<family> entries for every family below its target and api/<name> entries
// for the names below theirs (at most policy.api.max_identifier_tails, the largest deficits
// first). A family's numbers list its uncovered target names, most used first ("uncovered").
// With imported trees as the prior their tails weigh api.imported_weight more; a family whose
// target is the floor alone weighs api.floor_weight. Nothing when the policy has no api section.
Status add_api_tails(Database& db, const SynthPolicy& policy, std::vector<TailEntry>& out);

// The names an API tail asks for: the name itself, or a family's uncovered names (its "uncovered"
// numbers), most used first. Empty for other dimensions.
std::vector<std::string> api_tail_names(const TailEntry& entry);

}  // namespace tailforge
