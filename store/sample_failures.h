// The categorized failures of one sample, as the verifier stored them: what a synthesis seed
// shows of its difficulty. SQL only; storing and counting failures is store/failures.h.
#pragma once

#include <string>
#include <vector>

#include "store/failures.h"

namespace tailforge {

// The sample's failures, one per failing stage, in the order they were first stored (the
// verification chain's order). No failure: an empty list.
Result<std::vector<FailureRecord>> failures_of_sample(Database& db, const std::string& sample_id);

}  // namespace tailforge
