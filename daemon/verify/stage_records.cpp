#include "daemon/verify/stage_records.h"

#include "store/failures.h"
#include "verifier/stage_category.h"

namespace tailforge {

VerificationRecord verification_record_of(const Sample& sample, const StageResult& stage, const std::string& host) {
  return VerificationRecord{.sample_id = sample.id,
                            .stage = stage.name,
                            .status = stage.status,
                            .exit_code = stage.exit_code ? std::optional<int64_t>(*stage.exit_code) : std::nullopt,
                            .signal = stage.signal ? std::optional<int64_t>(stage.signal) : std::nullopt,
                            .reason = stage.reason,
                            .diagnostics = stage.diagnostics,
                            .seconds = stage.seconds,
                            .cpu_seconds = stage.cpu_seconds,
                            .peak_rss_kb = stage.peak_rss_kb,
                            .host = host.empty() ? std::nullopt : std::optional(host),
                            .toolchain_version = stage.toolchain_version,
                            .cached = stage.cached};
}

Status store_stage_results(Database& db, const Sample& sample, const std::vector<StageResult>& stages,
                           const Taxonomy& taxonomy, const StageAgent& agent_of, const std::string& host) {
  for (const StageResult& stage : stages) {
    Result<int64_t> verification_id = upsert_verification(db, verification_record_of(sample, stage, host));
    if (!verification_id) return verification_id.error();
    for (const Artifact& artifact : stage.artifacts) {
      if (artifact.binary) continue;  // text artifacts are the dataset; binaries are rebuilt from them
      ArtifactRecord stored{.stage = stage.name, .name = artifact.kind + ":" + artifact.name, .kind = artifact.kind,
                            .content = artifact.content, .command = artifact.command,
                            .toolchain_version = artifact.toolchain_version};
      if (Result<std::string> id = insert_artifact(db, sample.id, stored); !id) return id.error();
    }
    if (stage.status != "fail" && stage.status != "timeout" && stage.status != "error") continue;
    Categorization category = categorize_stage(taxonomy, stage, sample.features);
    FailureRecord failure{.sample_id = sample.id,
                          .verification_id = *verification_id,
                          .stage = stage.name,
                          .category = category.category,
                          .message = category.message_line,
                          .evidence_file = category.evidence_file,
                          .evidence_line = category.evidence_line,
                          .track = sample.track,
                          .origin = sample.origin,
                          .domain = sample.domain,
                          .agent = agent_of(stage)};
    if (Status s = insert_failure(db, failure); !s) return s;
  }
  return {};
}

Sample sample_derived_from(const Sample& program, const std::string& track, const std::string& language,
                           const std::string& text) {
  Sample derived;
  derived.track = track;
  derived.origin = program.origin;
  derived.language = language;
  derived.text = text;
  derived.template_id = program.template_id;
  derived.seed = program.seed;
  derived.model = program.model;
  derived.domain = program.domain;
  derived.features = program.features;
  derived.cycle_id = program.cycle_id;
  return derived;
}

Status store_derived_sample(Database& db, const Sample& program, const DerivedSample& derived,
                            const Taxonomy& taxonomy, const std::string& host, StoredDerivedSamples& stored) {
  Result<InsertOutcome> inserted = insert_sample_if_absent(db, derived.sample);
  if (!inserted) return inserted.error();
  Sample sample = derived.sample;
  sample.id = inserted->id;
  LineageEdge edge{.parent_id = program.id,
                   .child_id = sample.id,
                   .relation = "compiled_to",
                   .agent = derived.edge_agent,
                   .reason = derived.reason};
  if (Status s = insert_lineage_edge(db, edge); !s) return s.error();
  if (!inserted->inserted) {
    ++stored.already_stored;
    return {};
  }
  ++stored.inserted;
  for (const ArtifactRecord& artifact : derived.artifacts) {
    if (Result<std::string> id = insert_artifact(db, sample.id, artifact); !id) return id.error();
  }
  const std::string& agent = derived.check_agent;
  StageAgent agent_of = [&agent](const StageResult&) { return std::optional<std::string>(agent); };
  if (Status s = store_stage_results(db, sample, derived.checks, taxonomy, agent_of, host); !s) return s.error();
  if (Status s = set_sample_status(db, sample.id, derived.ok ? "verified" : "failed"); !s) return s.error();
  if (derived.ok) ++stored.verified;
  return {};
}

}  // namespace tailforge
