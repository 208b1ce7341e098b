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

// A sample of another track made from `program` (a kernel pair): the program's origin,
// generator inputs, domain, features and cycle, with its own track, language and text.
Sample sample_derived_from(const Sample& program, const std::string& track, const std::string& language,
                           const std::string& text);

// Stores a derived sample's artifacts and checks, and sets it verified when `ok`, else failed.
Status store_derived_checks(Database& db, const Sample& derived, const std::vector<ArtifactRecord>& artifacts,
                            const std::vector<StageResult>& checks, bool ok, const Taxonomy& taxonomy,
                            const std::string& agent);

Status store_stage_results(Database& db, const Sample& sample, const std::vector<StageResult>& stages,
                           const Taxonomy& taxonomy, const StageAgent& agent_of);

}  // namespace tailforge
