#include "verifier/stage_category.h"

namespace tailforge {

Categorization categorize_stage(const Taxonomy& taxonomy, const StageResult& stage,
                                const std::vector<std::string>& features) {
  FailureEvidence evidence{.stage = stage.name,
                           .diagnostics = stage.diagnostics,
                           .exit_code = stage.exit_code,
                           .signal = stage.signal ? std::optional<int>(stage.signal) : std::nullopt,
                           .timed_out = stage.status == "timeout",
                           .features = features,
                           .reason = stage.reason};
  Categorization category = categorize(taxonomy, evidence);
  if (stage.category && category.category.find("uncategorized") != std::string::npos) {
    category.category = *stage.category;
  }
  return category;
}

}  // namespace tailforge
