#include "daemon/http/views.h"


namespace tailforge {

bool looks_like_sample_id(const std::string& id) {
  return id.size() == 64 && id.find_first_not_of("0123456789abcdef") == std::string::npos;
}

nlohmann::json sample_json(Database& db, const Sample& sample) {
  nlohmann::json j = {{"id", sample.id},           {"track", sample.track},   {"origin", sample.origin},
                      {"language", sample.language}, {"status", sample.status}, {"domain", sample.domain.value_or("")},
                      {"features", sample.features}, {"created_ms", sample.created_ms}, {"text", sample.text}};
  auto parsed = [](const std::optional<std::string>& text) {
    if (!text) return nlohmann::json(nullptr);
    nlohmann::json value = nlohmann::json::parse(*text, nullptr, false);
    return value.is_discarded() ? nlohmann::json(*text) : value;
  };
  j["template_id"] = sample.template_id ? nlohmann::json(*sample.template_id) : nlohmann::json(nullptr);
  j["persona"] = parsed(sample.persona);
  j["variables"] = parsed(sample.variables);
  j["seed"] = sample.seed ? nlohmann::json(*sample.seed) : nlohmann::json(nullptr);
  j["cycle_id"] = sample.cycle_id ? nlohmann::json(*sample.cycle_id) : nlohmann::json(nullptr);
  j["artifacts"] = nlohmann::json::array();
  if (Result<std::vector<ArtifactRecord>> artifacts = artifacts_of(db, sample.id); artifacts) {
    for (const ArtifactRecord& a : *artifacts) {
      j["artifacts"].push_back({{"id", a.id},
                                {"stage", a.stage},
                                {"name", a.name},
                                {"kind", a.kind},
                                {"size", a.content.size()},
                                {"command", a.command.value_or("")},
                                {"toolchain_version", a.toolchain_version.value_or("")},
                                {"content", a.content}});
    }
  }
  j["verifications"] = nlohmann::json::array();
  if (Result<std::vector<VerificationRecord>> verifications = verifications_of(db, sample.id); verifications) {
    for (const VerificationRecord& v : *verifications) {
      j["verifications"].push_back({{"stage", v.stage},
                                    {"status", v.status},
                                    {"seconds", v.seconds},
                                    {"reason", v.reason},
                                    {"diagnostics", v.diagnostics},
                                    {"exit_code", v.exit_code ? nlohmann::json(*v.exit_code) : nlohmann::json(nullptr)},
                                    {"cached", v.cached},
                                    {"host", v.host ? nlohmann::json(*v.host) : nlohmann::json(nullptr)}});
    }
  }
  return j;
}

nlohmann::json job_json(const Job& job) {
  nlohmann::json payload = nlohmann::json::parse(job.payload, nullptr, false);
  return {{"id", job.id},
          {"kind", job.kind},
          {"state", job.state},
          {"priority", job.priority},
          {"attempts", job.attempts},
          {"max_attempts", job.max_attempts},
          {"payload", payload.is_discarded() ? nlohmann::json(job.payload) : payload},
          {"idempotency_key", job.idempotency_key ? nlohmann::json(*job.idempotency_key) : nlohmann::json(nullptr)},
          {"lease_owner", job.lease_owner ? nlohmann::json(*job.lease_owner) : nlohmann::json(nullptr)},
          {"next_attempt_ms", job.next_attempt_ms},
          {"last_error", job.last_error ? nlohmann::json(*job.last_error) : nlohmann::json(nullptr)}};
}

}  // namespace tailforge
