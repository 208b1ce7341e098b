// Storing a verifier chain's stages for a sample: a verification row per stage, its text
// artifacts, and a categorized failure per failed stage. Runs inside the caller's transaction.
#pragma once

#include <cstdint>
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

// A sample derived from a program (a kernel pair) with what to store of it.
struct DerivedSample {
  Sample sample;                         // from sample_derived_from(); an id set here is kept
  std::string edge_agent;                // who made it: the compiled_to edge from the program
  std::string reason;                    // the edge's reason, e.g. "kernel _Z3addPfS_i"
  std::vector<ArtifactRecord> artifacts;
  std::vector<StageResult> checks;
  std::string check_agent;               // the agent of its failed checks
  bool ok = false;                       // verified, else failed
};

struct StoredDerivedSamples {
  int64_t inserted = 0;
  int64_t already_stored = 0;  // the same sample from another program: only the edge is added
  int64_t verified = 0;        // of the inserted
};

// Inserts the derived sample unless it is stored, links it to `program`, and when it is new
// stores its artifacts, checks and status; counts what happened into `stored`. `host`: where the
// checks ran, as for store_stage_results.
Status store_derived_sample(Database& db, const Sample& program, const DerivedSample& derived,
                            const Taxonomy& taxonomy, const std::string& host, StoredDerivedSamples& stored);

// `stage` as `sample`'s verification row (without artifacts and failure records).
VerificationRecord verification_record_of(const Sample& sample, const StageResult& stage, const std::string& host);

// `host`: the machine the stages ran on (the daemon's, or a remote worker's), stored with each
// verification row; empty when unknown.
Status store_stage_results(Database& db, const Sample& sample, const std::vector<StageResult>& stages,
                           const Taxonomy& taxonomy, const StageAgent& agent_of, const std::string& host);

}  // namespace tailforge
