// The failure category of a failed stage: its evidence (stage name, diagnostics, exit code,
// signal, timeout, the sample's features, the reason) matched against the taxonomy's rules
// (policies/categorizer.h), or the category the stage named itself when no rule knows it. The
// same for a verification of the dataset and for a model's answer under evaluation.
#pragma once

#include <string>
#include <vector>

#include "policies/categorizer.h"
#include "verifier/stage.h"

namespace tailforge {

Categorization categorize_stage(const Taxonomy& taxonomy, const StageResult& stage,
                                const std::vector<std::string>& features);

}  // namespace tailforge
