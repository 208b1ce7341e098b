// Storing a verifier chain's stages for a sample: a verification row per stage, its text
// artifacts, and a categorized failure per failed stage. Runs inside the caller's transaction.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "policies/categorizer.h"
#include "store/samples.h"
#include "verifier/stage.h"

namespace tailforge {

// Who made a failed stage's input, for the failure's agent column (nullopt: nobody recorded).
using StageAgent = std::function<std::optional<std::string>(const StageResult&)>;

Status store_stage_results(Database& db, const Sample& sample, const std::vector<StageResult>& stages,
                           const Taxonomy& taxonomy, const StageAgent& agent_of);

}  // namespace tailforge
