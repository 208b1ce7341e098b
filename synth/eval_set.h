// The frozen evaluation set of a track: verified samples held out of every training export,
// each with its reference (the oracle's answer and, where it ran, the program's stdout). It only
// grows: a refresh adds new items at the next version and never drops or changes an old one.
// An item is never a sample a training export held, nor a near-duplicate (MinHash) of one;
// exports keep the other direction (synth/export.h drops items and their near-duplicates).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "synth/policy.h"

namespace tailforge {

// The "eval" section of the configuration.
struct EvalPolicy {
  bool enabled = true;
  double fraction = 0.3;               // share of newly verified samples frozen into the set
  int64_t max_items = 400;             // per track; the set stops growing here
  double command_timeout_seconds = 300;  // a command model's time to answer one item
  int64_t keep_versions = 3;  // newest versions per lineage evaluated each cycle (synth/model_versions.h); 0: all
  // After an endpoint fault, no request to that model for this long (or a 429's Retry-After).
  double endpoint_pause_seconds = 60;
};

// Reads the "eval" section; errors name "eval.<key>".
Result<EvalPolicy> eval_policy_from_json(const nlohmann::json& section);

struct EvalSetRefresh {
  int64_t version = 0;       // the set's version after the refresh
  int64_t added = 0;
  int64_t size = 0;
  int64_t near_duplicates = 0;  // selected candidates skipped as near-duplicates of trained samples
};

// Adds the selected candidates: verified, never trained, not a near-duplicate of a trained
// sample, and chosen by a hash of their id below `fraction` (so the same candidate always gets
// the same answer). Deterministic; one transaction.
Result<EvalSetRefresh> refresh_eval_set(Database& db, const EvalPolicy& eval, const SynthPolicy& synth,
                                        const std::string& track);

// Whether a sample id is one the set would take (the hash rule alone).
bool selected_for_evaluation(const std::string& sample_id, double fraction);

}  // namespace tailforge
