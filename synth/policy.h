// The synthesis policy: long-tail thresholds, synthesis sizes, dedup, resampling and export pairs,
// loaded and validated from policies/synth_policy.json. It decides nothing itself.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "synth/decontaminate.h"
#include "synth/minhash.h"

namespace tailforge {

// A tracked dimension (feature tags or domains) and the share each value should reach.
struct ShareTarget {
  std::vector<std::string> tracked;  // empty: every value seen among the track's samples
  double min_share = 0.05;           // of the verified corpus
  std::map<std::string, double> targets;  // per-value overrides of min_share
  // A value is also a tail below this fraction of the most common tracked value's share, so the
  // tail moves with the corpus instead of vanishing once the fixed targets are met. 0: off.
  double head_fraction = 0;
  // The larger of the value's fixed target and head_fraction x head_share.
  double target_for(const std::string& name, double head_share = 0) const;
};

struct TailThresholds {
  ShareTarget features;
  ShareTarget domains;
  int64_t category_min_failures = 2;      // a failure category needs this many failures to count
  double category_min_share = 0.02;       // verified samples synthesized for it, over the corpus
  // Categories that are never tails: failures more samples cannot fix (the built-in translator
  // refuses some constructs by design, so samples made for them cannot verify).
  std::vector<std::string> category_exclude_prefixes;
  int64_t yield_min_finished = 5;         // samples of a value that finished verification
  double yield_min_failure_rate = 0.3;
  double yield_excess_ratio = 1.5;        // failure rate over the track's overall rate
  int64_t model_min_evaluated = 5;
  double model_min_failure_rate = 0.3;
  // A feature, domain or API family is a model-failure tail only when the model fails its items
  // this many times more often than all items, or gets them right this many times less often:
  // what goes with the failures, not what is merely common.
  double model_excess_ratio = 1.5;
  // A model's failures outrank the corpus's gaps: they are what the loop retrains for.
  std::map<std::string, double> signal_weights = {
      {"corpus_share", 1.0}, {"pipeline_yield", 0.8}, {"model_failure", 3.0}};
  std::map<std::string, double> dimension_weights = {
      {"feature", 1.0}, {"domain", 0.9}, {"category", 0.7}, {"api_family", 1.0}, {"api", 1.2}};
  size_t max_entries = 50;
};

struct SynthesisSettings {
  size_t top_k = 3;             // tail entries synthesized for per cycle (distinct dimension/name)
  int multiplier = 10;          // candidates per seed
  int seeds_per_tail = 2;
  int proposal_factor = 4;      // proposals per wanted candidate, so near-duplicates can be replaced
  std::string agent = "builtin-synthesizer";
};

struct ResamplingSettings {
  double target_fraction_of_head = 0.25;  // no tracked value's weighted count below this x head
  double max_weight = 8.0;
  bool replicate = true;  // training files repeat samples by weight (LLaMA-Factory has no weights)
  // The weight of samples with a feature or domain that the model under test fails (a
  // model-failure tail of the cycle that exports the snapshot); 1: no boost.
  double model_failure_weight = 4.0;
};

// How one track's pairs are read: a source and a target, each the sample text ("text") or an
// artifact kind (see synth/artifact_kinds.h), and the instruction shown to the model.
struct ExportPair {
  std::vector<std::string> sample_tracks;
  std::string source_kind = "text";
  std::string target_kind;
  std::string source_normalization = "none";  // none, assembly (comments and whitespace removed)
  std::string instruction;
  // PtxDec's data filtering: keep one sample per near-duplicate cluster instead of keeping whole
  // clusters on one side of the split.
  bool drop_near_duplicates = false;
  // Manifest figures: name -> the two sample variables holding a length before and after a
  // pre-processing step ("rolled_ptx": ["ptx_chars", "rolled_ptx_chars"]).
  std::map<std::string, std::pair<std::string, std::string>> length_reductions;
  // Write each sample's recorded kernel launch under harness/<id>/ (ptx2cuda's test data).
  bool launch_harness = false;
  // Write each sample's function, driver and IO cases under io_tests/<id>.json (c2x86's test data).
  bool io_tests = false;
};

// The CUDA API as a tail (synth/api_coverage.h): the translation table whose names count, their
// families, the shipped usage prior, and how the prior sets targets. Off without an "api" section
// (tracks whose samples are not CUDA). File paths are absolute once loaded (relative to the policy).
struct ApiPolicy {
  bool enabled = false;
  std::string rules_file, families_file, prior_file;
  // Every family's target share of the verified corpus is at least this, used by a local tree or not.
  double family_floor_share = 0.02;
  // A name is a target when this many files of the prior use it: the shipped prior's trees, the
  // user's imported trees, and the CUDA headers (whose files count at header_weight).
  int64_t shipped_min_files = 2;
  int64_t imported_min_files = 1;
  int64_t header_min_files = 2;
  double header_weight = 0.5;
  size_t max_identifier_tails = 25;  // api/<name> entries in a tail list, the largest deficits first
  // With the user's imported trees as the prior, their names' tails weigh this much more: what the
  // user's code uses comes before the generator's own feature tags.
  double imported_weight = 2.0;
  // A family whose target is the floor alone (no prior file uses it) weighs this much.
  double floor_weight = 0.5;
};

struct SynthPolicy {
  std::string track = "cuda2hip";  // the track the built-in synthesizer grows
  std::string language = "cuda";
  MinHashOptions dedup;
  DecontaminationSettings decontamination;  // how an export is checked against benchmark files
  TailThresholds tails;
  SynthesisSettings synthesis;
  ResamplingSettings resampling;
  double eval_fraction = 0.1;
  std::map<std::string, ExportPair> export_pairs;  // by track
  ApiPolicy api;
  std::optional<std::string> model_under_test;     // model name; unset: synth/model_selection.h decides
};

// Reads the policy object; unknown keys and wrong types are errors naming "<source>: <key>".
Result<SynthPolicy> synth_policy_from_json(const nlohmann::json& root, const std::string& source);
Result<SynthPolicy> load_synth_policy(const std::string& path);
// <source_dir>/policies/synth_policy.json.
Result<SynthPolicy> load_default_synth_policy(const std::string& source_dir);
// Applies the config's "synth" section: policy_file, model_under_test, top_k, multiplier,
// eval_fraction ("enabled" is the daemon's). Loads the policy file relative to source_dir.
Result<SynthPolicy> synth_policy_from_config(const nlohmann::json& synth_section, const std::string& source_dir);
// The policy whose feature targets a track's distribution is measured against: `configured` for
// its own track, else `source_dir`/policies/synth_policy_<track>.json, else one with no targets
// (every tag seen). A track name other than letters, digits and '_' is an error.
Result<SynthPolicy> policy_for_track(const SynthPolicy& configured, const std::string& track,
                                     const std::string& source_dir);

}  // namespace tailforge
