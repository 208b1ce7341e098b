#include "daemon/http/views.h"


namespace tailforge {

bool looks_like_sample_id(const std::string& id) {
  return id.size() == 64 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

namespace {

// The value as JSON, or null when there is none.
template <typename T>
nlohmann::json value_or_null(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

// Text stored as JSON, parsed; the text itself when it does not parse; null when there is none.
nlohmann::json parsed_or_text(const std::optional<std::string>& text) {
  if (!text) return nlohmann::json(nullptr);
  nlohmann::json value = nlohmann::json::parse(*text, nullptr, false);
  return value.is_discarded() ? nlohmann::json(*text) : value;
}

nlohmann::json artifact_entry(const ArtifactRecord& artifact) {
  return {{"id", artifact.id},
          {"stage", artifact.stage},
          {"name", artifact.name},
          {"kind", artifact.kind},
          {"size", artifact.content.size()},
          {"command", artifact.command.value_or("")},
          {"toolchain_version", artifact.toolchain_version.value_or("")},
          {"content", artifact.content}};
}

nlohmann::json verification_entry(const VerificationRecord& verification) {
  return {{"stage", verification.stage},         {"status", verification.status},
          {"seconds", verification.seconds},     {"reason", verification.reason},
          {"diagnostics", verification.diagnostics}, {"exit_code", value_or_null(verification.exit_code)},
          {"cached", verification.cached},       {"host", value_or_null(verification.host)}};
}

}  // namespace

nlohmann::json sample_json(Database& db, const Sample& sample) {
  nlohmann::json j = {{"id", sample.id},           {"track", sample.track},   {"origin", sample.origin},
                      {"language", sample.language}, {"status", sample.status}, {"domain", sample.domain.value_or("")},
                      {"features", sample.features}, {"created_ms", sample.created_ms}, {"text", sample.text}};
  j["template_id"] = value_or_null(sample.template_id);
  j["persona"] = parsed_or_text(sample.persona);
  j["variables"] = parsed_or_text(sample.variables);
  j["seed"] = value_or_null(sample.seed);
  j["cycle_id"] = value_or_null(sample.cycle_id);
  j["artifacts"] = nlohmann::json::array();
  if (Result<std::vector<ArtifactRecord>> artifacts = artifacts_of(db, sample.id); artifacts) {
    for (const ArtifactRecord& artifact : *artifacts) j["artifacts"].push_back(artifact_entry(artifact));
  }
  j["verifications"] = nlohmann::json::array();
  if (Result<std::vector<VerificationRecord>> verifications = verifications_of(db, sample.id); verifications) {
    for (const VerificationRecord& verification : *verifications) {
      j["verifications"].push_back(verification_entry(verification));
    }
  }
  return j;
}

nlohmann::json job_json(const Job& job) {
  nlohmann::json payload = nlohmann::json::parse(job.payload, nullptr, false);
  return {{"id", job.id},         {"kind", job.kind},
          {"state", job.state},   {"priority", job.priority},
          {"attempts", job.attempts}, {"max_attempts", job.max_attempts},
          {"payload", payload.is_discarded() ? nlohmann::json(job.payload) : payload},
          {"idempotency_key", value_or_null(job.idempotency_key)},
          {"lease_owner", value_or_null(job.lease_owner)},
          {"next_attempt_ms", job.next_attempt_ms},
          {"last_error", value_or_null(job.last_error)}};
}

}  // namespace tailforge
