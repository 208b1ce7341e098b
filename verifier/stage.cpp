#include "verifier/stage.h"

namespace tailforge {

const Artifact* StageResult::artifact(const std::string& kind) const {
  for (const auto& item : artifacts) {
    if (item.kind == kind) return &item;
  }
  return nullptr;
}

StageResult skipped_stage(const std::string& name, const std::string& reason) {
  StageResult stage;
  stage.name = name;
  stage.status = "skipped";
  stage.reason = reason;
  return stage;
}

StageResult error_stage(const std::string& name, const std::string& reason) {
  StageResult stage = skipped_stage(name, reason);
  stage.status = "error";
  return stage;
}

}  // namespace tailforge
