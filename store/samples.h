// Samples, artifacts, verifications and lineage: the content-addressed records of the dataset.
// A sample's id is the SHA-256 of its normalized text, so the same program is stored once.
// Failures (categorized) live in store/failures.h; the job queue in store/queue.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

struct Sample {
  std::string id;  // filled by insert_sample_if_absent when empty
  std::string track;   // cuda2hip, sass2rdna3, ptx2cuda, c2x86, kernelopt
  std::string origin;  // template, llm, synthesized, imported, mutated
  std::string language;  // cuda, hip, c, ptx, sass, rdna3
  std::string text;
  std::optional<std::string> template_id;
  std::optional<std::string> persona;    // JSON object text
  std::optional<std::string> variables;  // JSON object text
  std::optional<int64_t> seed;
  std::optional<std::string> model;
  std::optional<std::string> prompt_hash;
  std::optional<std::string> domain;
  std::vector<std::string> features;
  std::string status = "pending";  // pending, verified, failed
  std::optional<int64_t> cycle_id;
  int64_t created_ms = 0;
};

// Normalizes program text for content addressing: CRLF to LF, trailing spaces and trailing
// blank lines removed. Two texts with the same normalized form are the same sample.
std::string normalize_program_text(const std::string& text);
std::string sample_id_for(const std::string& text);

struct InsertOutcome {
  std::string id;
  bool inserted;  // false: a sample with this id was already stored
};

// Inserts the sample (and its feature tags) unless its content is already stored.
Result<InsertOutcome> insert_sample_if_absent(Database& db, Sample sample);
Result<std::optional<Sample>> find_sample(Database& db, const std::string& id);
// The sample's template id alone (none: no template, or no such sample).
Result<std::optional<std::string>> sample_template_id(Database& db, const std::string& id);
// The newest samples (by creation), optionally of one status and track: what a browser lists to
// pick a sample from.
struct SampleHeader {
  std::string id, track, origin, status, domain;
  int64_t created_ms = 0;
};
Result<std::vector<SampleHeader>> newest_samples(Database& db, const std::string& status, const std::string& track,
                                                 int limit);
// Ids starting with `prefix` (at most `limit`), for commands that take a shortened id.
Result<std::vector<std::string>> sample_ids_with_prefix(Database& db, const std::string& prefix, int limit);
// Sets a sample's status; a verdict for a sample of a cycle that started while an earlier cycle
// was still running is deferred (the sample stays 'pending') until every earlier cycle has
// finished (release_deferred_statuses), so that an earlier cycle's steps never see it.
Status set_sample_status(Database& db, const std::string& id, const std::string& status);

struct ArtifactRecord {
  std::string stage;  // the verifier stage that made it
  std::string name;   // ptx, sass, rdna3_asm, ptx:<kernel>, ...
  std::string kind;
  std::string content;
  std::optional<std::string> command;  // JSON array of argv
  std::optional<std::string> toolchain_version;
  std::string id;  // filled on insert: SHA-256 of content
};

// Stores the artifact's content once (by hash) and links it to the sample under (stage, name).
Result<std::string> insert_artifact(Database& db, const std::string& sample_id, ArtifactRecord artifact);
Result<std::vector<ArtifactRecord>> artifacts_of(Database& db, const std::string& sample_id);

struct VerificationRecord {
  int64_t id = 0;
  std::string sample_id;
  std::string stage;
  std::string status;  // ok, fail, timeout, skipped, error
  std::optional<int64_t> exit_code;
  std::optional<int64_t> signal;
  std::string reason;
  std::string diagnostics;
  double seconds = 0;
  double cpu_seconds = 0;  // user + system CPU of the stage's processes
  std::optional<int64_t> peak_rss_kb;
  std::optional<std::string> host;
  std::optional<std::string> toolchain_version;
  bool cached = false;
  int64_t created_ms = 0;
};

// Records one stage's result; a second result for the same (sample, stage) replaces the first.
// Returns the verification id.
Result<int64_t> upsert_verification(Database& db, VerificationRecord verification);
Result<std::vector<VerificationRecord>> verifications_of(Database& db, const std::string& sample_id);
// The reason of the newest `skipped` result of a stage, over all samples (nullopt: never skipped).
Result<std::optional<std::string>> latest_skip_reason(Database& db, const std::string& stage);

struct LineageEdge {
  std::string parent_id;
  std::string child_id;
  std::string relation;  // synthesized_from, mutated_from, translated_by, compiled_to, evaluated_by
  std::optional<std::string> agent;
  std::optional<std::string> model;
  std::optional<std::string> prompt_hash;
  std::optional<std::string> reason;
  int64_t created_ms = 0;
};

Status insert_lineage_edge(Database& db, LineageEdge edge);
// The parents of `child_id` by edges of `relation` (e.g. the programs a kernel pair was compiled_to from).
Result<std::vector<std::string>> lineage_parent_ids(Database& db, const std::string& child_id,
                                                    const std::string& relation);
// Edges reachable from `id` upwards (ancestors) and downwards (descendants), nearest first.
Result<std::vector<LineageEdge>> ancestors_of(Database& db, const std::string& id, int max_depth = 16);
Result<std::vector<LineageEdge>> descendants_of(Database& db, const std::string& id, int max_depth = 16);

}  // namespace tailforge
