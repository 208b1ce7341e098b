// Stores a verified CUDA program's per-kernel SASS/RDNA3 pairs (agents/sass2rdna3/kernel_pairs.h)
// as samples of the sass2rdna3 track: the normalized SASS is the sample's text, the normalized
// RDNA3 its `rdna3_kernel` artifact, with both sides raw, their counts, the checks' rows and a
// `compiled_to` edge from the program. A kernel already stored (the same SASS from another
// program) only gains the edge. Runs inside the caller's transaction. The steps every kernel-pair
// track takes (kernel_pair_sample, store_pair_samples) are shared with daemon/verify/ptx_pairs_store.h.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/sass2rdna3/kernel_pairs.h"
#include "daemon/verify/stage_records.h"
#include "policies/categorizer.h"
#include "store/samples.h"
#include "synth/artifact_kinds.h"

namespace tailforge {

// Who makes a track's kernel pairs: the sample's track and language, the agent of the compiled_to
// edge from the program and that of the pair's failed checks.
struct KernelPairTrack {
  const char* track;
  const char* language;
  const char* edge_agent;
  const char* check_agent;
};

// A kernel pair as a sample derived from `program`, as this store and daemon/ptx_pairs_store.h
// store theirs: `text` of the track with `artifacts` (of the stage "<track>.pair"), the edge
// reason "kernel <name>", the pair's checks and verdict, and the variables `kernel` and `program`
// beside `variables`.
template <typename Pair>  // KernelPair, PtxPair: kernel, checks, ok
DerivedSample kernel_pair_sample(const Sample& program, const KernelPairTrack& track, const Pair& pair,
                                 const std::string& text, std::vector<ArtifactRecord> artifacts,
                                 nlohmann::json variables) {
  DerivedSample derived{.sample = sample_derived_from(program, track.track, track.language, text),
                        .edge_agent = track.edge_agent,
                        .reason = "kernel " + pair.kernel,
                        .artifacts = std::move(artifacts),
                        .checks = pair.checks,
                        .check_agent = track.check_agent,
                        .ok = pair.ok};
  for (ArtifactRecord& artifact : derived.artifacts) artifact.stage = std::string(track.track) + ".pair";
  variables["kernel"] = pair.kernel;
  variables["program"] = program.id;
  derived.sample.variables = variables.dump();
  return derived;
}

// Stores `sample_of(pair)` (a DerivedSample) for each pair in turn, as store_derived_sample does.
template <typename Pair, typename SampleOf>
Result<StoredDerivedSamples> store_pair_samples(Database& db, const Sample& program, const std::vector<Pair>& pairs,
                                                const Taxonomy& taxonomy, const std::string& host, SampleOf sample_of) {
  StoredDerivedSamples stored;
  for (const Pair& pair : pairs) {
    if (Status s = store_derived_sample(db, program, sample_of(pair), taxonomy, host, stored); !s) return s.error();
  }
  return stored;
}

Result<StoredDerivedSamples> store_kernel_pairs(Database& db, const Sample& program, const KernelPairing& pairing,
                                               const Taxonomy& taxonomy, const std::string& host);

}  // namespace tailforge
