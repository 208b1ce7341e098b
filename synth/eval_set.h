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
#include "synth/held_out.h"
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
  // Templates, trees and API families reserved for evaluation (synth/held_out.h): their verified
  // samples become items whatever `fraction` says, and no export trains on them.
  HeldOutSplit held_out;
  // The set spans the CUDA API and the user's code: each API family (with the synth policy's api
  // section) and each imported tree gets at least this many items before `fraction` draws the
  // rest, taking at most half of a group's verified candidates (the rest stays for training).
  int64_t min_items_per_family = 3;
  int64_t min_items_per_tree = 2;
  // kernelopt: a model's right candidate below this speedup over the reference is a failure,
  // kernelopt.slower (1: fast_1; 2: fast_2). Untimed candidates (no GPU) are judged on the rest.
  double kernelopt_speedup_target = 1.0;
};

// Reads the "eval" section; errors name "eval.<key>".
Result<EvalPolicy> eval_policy_from_json(const nlohmann::json& section);

struct EvalSetRefresh {
  int64_t version = 0;       // the set's version after the refresh
  int64_t added = 0;
  int64_t size = 0;
  int64_t near_duplicates = 0;  // selected candidates skipped as near-duplicates of trained samples
  int64_t retired = 0;          // items retired by the refresh's re-judgement (rejudge_eval_set)
  int64_t held_out_added = 0;   // of `added`, items of a reserved template, tree or family
  int64_t spanning_added = 0;   // of `added`, items taken for a family or tree short of its minimum
};

struct EvalSetRejudge {
  int64_t judged = 0;          // items that were active
  int64_t retired = 0;         // of them, retired now
  int64_t retired_before = 0;  // retired by an earlier judgement
};

// Judges the set's membership again under the exact rule: an active item whose text is a
// near-duplicate (exact Jaccard of the shingle sets at or above synth.dedup's threshold) of a
// sample a training export held is retired, with the trained sample and the similarity as its
// reason; its evaluations are kept but no longer asked for or counted. Items drawn before the rule
// was exact (or before a later snapshot trained on a near-copy) are corrected this way. One
// transaction; a second run retires nothing more.
Result<EvalSetRejudge> rejudge_eval_set(Database& db, const SynthPolicy& synth, const std::string& track);

// Re-judges the set (rejudge_eval_set), then adds the selected candidates: verified, never
// trained, not a near-duplicate of a trained sample, and either of a reserved template, tree or
// family (eval.held_out_*, marked so), or of an API family or imported tree with fewer than its
// minimum of items (candidates in the order of the hash below), or chosen by a hash of their id
// below `fraction` (so the same candidate always gets the same answer). Deterministic.
Result<EvalSetRefresh> refresh_eval_set(Database& db, const EvalPolicy& eval, const SynthPolicy& synth,
                                        const std::string& track);

// Whether a sample id is one the set would take (the hash rule alone).
bool selected_for_evaluation(const std::string& sample_id, double fraction);

}  // namespace tailforge
