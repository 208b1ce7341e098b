#include "synth/policy.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "policies/config_section.h"
#include "synth/artifact_kinds.h"

namespace tailforge {

// The policy file's plain sections: their keys are the structs' field names (policies/config_section.h).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(MinHashOptions, shingle_tokens, permutations, threshold, mask_numbers,
                                                mask_identifiers, seed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DecontaminationSettings, run_tokens, mask_identifiers, mask_numbers,
                                                extensions, max_file_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ShareTarget, tracked, min_share, targets, head_fraction)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SynthesisSettings, top_k, multiplier, seeds_per_tail, proposal_factor,
                                                agent)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ResamplingSettings, target_fraction_of_head, max_weight, replicate,
                                                model_failure_weight)
// length_reductions is read apart, for its own message.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExportPair, sample_tracks, source_kind, target_kind,
                                                source_normalization, instruction, drop_near_duplicates,
                                                launch_harness, io_tests)
// `enabled` is not a key: the section is there or not.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ApiPolicy, rules_file, families_file, prior_file, family_floor_share,
                                                shipped_min_files, imported_min_files, header_min_files,
                                                header_weight, max_identifier_tails, imported_weight, floor_weight)

namespace {

using nlohmann::json;

// Every number of a policy is a count, a share or a weight.
const SectionRules kPolicyNumbers{.refuse_negative_numbers = true};

// One object of a policy file whose keys are not one struct's fields: its keys are checked and
// read in turn, and the first error is kept, with its key path.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string path, std::string* error)
      : object_(object), path_(std::move(path)), error_(error) {
    if (!object_.is_object()) fail(path_, "must be an object");
  }

  void allow_only(std::initializer_list<const char*> keys) { keep(check_config_keys(object_, path_, keys)); }

  template <typename T>
  void read(const char* key, T& out) {
    if (has(key)) keep(read_config_value(object_.at(key), child_path(key), out, kPolicyNumbers));
  }

  // The whole object as a plain section (policies/config_section.h).
  template <typename T>
  void read_all(T& out, const SectionRules& rules = kPolicyNumbers) {
    keep(read_config_section(object_, path_, out, rules));
  }
  // A nested plain section; an absent one leaves `out` as it is.
  template <typename T>
  void read_section(const char* key, T& out) {
    if (has(key)) keep(read_config_section(object_.at(key), child_path(key), out, kPolicyNumbers));
  }

  // The reader of a nested object (an absent one is empty).
  ObjectReader object(const char* key) const { return ObjectReader(child(key), child_path(key), error_); }

  const json& child(const char* key) const {
    static const json empty = json::object();
    return has(key) ? object_.at(key) : empty;
  }
  std::string child_path(const char* key) const { return path_ + "." + key; }

  void fail(const std::string& where, const std::string& what) {
    if (error_->empty()) *error_ = where + " " + what;
  }

 private:
  bool has(const char* key) const { return object_.is_object() && object_.contains(key); }
  void keep(const Status& status) {
    if (!status && error_->empty()) *error_ = status.message();
  }

  const json& object_;
  std::string path_;
  std::string* error_;
};

// tails.yield and tails.model: the failure rate that makes a tail, and the least count it needs.
void read_failure_thresholds(const ObjectReader& tails, const char* key, const char* count_key, int64_t& min_count,
                             double& min_failure_rate, double& excess_ratio) {
  ObjectReader reader = tails.object(key);
  reader.allow_only({count_key, "min_failure_rate", "excess_ratio"});
  reader.read(count_key, min_count);
  reader.read("min_failure_rate", min_failure_rate);
  reader.read("excess_ratio", excess_ratio);
}

void read_tails(const ObjectReader& top, TailThresholds& tails) {
  ObjectReader reader = top.object("tails");
  reader.allow_only(
      {"features", "domains", "categories", "yield", "model", "signal_weights", "dimension_weights", "max_entries"});
  reader.read_section("features", tails.features);
  reader.read_section("domains", tails.domains);
  ObjectReader categories = reader.object("categories");
  categories.allow_only({"min_failures", "min_share", "exclude_prefixes"});
  categories.read("exclude_prefixes", tails.category_exclude_prefixes);
  categories.read("min_failures", tails.category_min_failures);
  categories.read("min_share", tails.category_min_share);
  read_failure_thresholds(reader, "yield", "min_finished", tails.yield_min_finished, tails.yield_min_failure_rate,
                          tails.yield_excess_ratio);
  read_failure_thresholds(reader, "model", "min_evaluated", tails.model_min_evaluated, tails.model_min_failure_rate,
                          tails.model_excess_ratio);
  reader.read("signal_weights", tails.signal_weights);
  reader.read("dimension_weights", tails.dimension_weights);
  reader.read("max_entries", tails.max_entries);
}

// export.pairs: one pair a track, whose sample_tracks are the track's own unless it says otherwise.
void read_pairs(const ObjectReader& export_section, std::map<std::string, ExportPair>& pairs) {
  const json& object = export_section.child("pairs");
  if (!object.is_object()) return;
  ObjectReader by_track = export_section.object("pairs");
  const SectionRules rules{.refuse_negative_numbers = true, .other_keys = {"length_reductions"}};
  std::vector<std::string> kinds = known_export_kinds();
  for (const auto& [track, value] : object.items()) {
    std::string path = by_track.child_path(track.c_str());
    ExportPair pair;
    pair.sample_tracks = {track};
    ObjectReader reader = by_track.object(track.c_str());
    reader.read_all(pair, rules);
    const json& lengths = reader.child("length_reductions");
    if (lengths.is_object()) {
      for (const auto& [name, variables] : lengths.items()) {
        if (!variables.is_array() || variables.size() != 2 || !variables[0].is_string() || !variables[1].is_string()) {
          reader.fail(path + ".length_reductions." + name, "must be [\"<variable before>\", \"<variable after>\"]");
          continue;
        }
        pair.length_reductions[name] = {variables[0].get<std::string>(), variables[1].get<std::string>()};
      }
    } else if (!lengths.is_null()) {
      reader.fail(path + ".length_reductions", "must be an object");
    }
    for (const std::string& kind : {pair.source_kind, pair.target_kind}) {
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
        reader.fail(path, "names unknown artifact kind '" + kind + "'");
      }
    }
    if (pair.source_normalization != "none" && pair.source_normalization != "assembly") {
      reader.fail(path + ".source_normalization", "must be none or assembly");
    }
    pairs[track] = std::move(pair);
  }
}

}  // namespace

double ShareTarget::target_for(const std::string& name, double head_share) const {
  auto found = targets.find(name);
  double fixed = found == targets.end() ? min_share : found->second;
  return std::max(fixed, head_fraction * head_share);
}

Result<SynthPolicy> synth_policy_from_json(const json& root, const std::string& source) {
  SynthPolicy policy;
  std::string error;
  ObjectReader top(root, source + ":", &error);
  top.allow_only(
      {"comment", "track", "language", "dedup", "decontamination", "tails", "synthesis", "resampling", "export", "api"});
  top.read("track", policy.track);
  top.read("language", policy.language);

  top.read_section("dedup", policy.dedup);
  top.read_section("decontamination", policy.decontamination);
  read_tails(top, policy.tails);
  top.read_section("synthesis", policy.synthesis);
  top.read_section("resampling", policy.resampling);

  ObjectReader export_section = top.object("export");
  export_section.allow_only({"eval_fraction", "pairs"});
  export_section.read("eval_fraction", policy.eval_fraction);
  read_pairs(export_section, policy.export_pairs);

  if (root.is_object() && root.contains("api")) {
    policy.api.enabled = true;
    policy.api.rules_file = "hipify_rules.json";
    policy.api.families_file = "api_families.json";
    policy.api.prior_file = "api_prior.json";
    top.read_section("api", policy.api);
    std::string folder = std::filesystem::path(source).parent_path().string();
    for (std::string* file : {&policy.api.rules_file, &policy.api.families_file, &policy.api.prior_file}) {
      if (!file->empty() && (*file)[0] != '/') *file = (folder.empty() ? "." : folder) + "/" + *file;
    }
    if (error.empty() && policy.api.family_floor_share > 1) error = source + ": api.family_floor_share must be at most 1";
  }
  if (error.empty() && (policy.dedup.threshold <= 0 || policy.dedup.threshold > 1)) {
    error = source + ": dedup.threshold must be in (0, 1]";
  }
  if (error.empty() && (policy.eval_fraction < 0 || policy.eval_fraction >= 1)) {
    error = source + ": export.eval_fraction must be in [0, 1)";
  }
  if (error.empty() && (policy.dedup.permutations < 1 || policy.dedup.shingle_tokens < 1)) {
    error = source + ": dedup.permutations and dedup.shingle_tokens must be at least 1";
  }
  if (error.empty() && (policy.decontamination.run_tokens < 1 || policy.decontamination.max_file_bytes < 1)) {
    error = source + ": decontamination.run_tokens and decontamination.max_file_bytes must be at least 1";
  }
  if (error.empty() && policy.resampling.model_failure_weight < 1) {
    error = source + ": resampling.model_failure_weight must be at least 1";
  }
  if (error.empty() && policy.resampling.max_weight < 1) {
    error = source + ": resampling.max_weight must be at least 1";
  }
  if (!error.empty()) return make_error(error);
  return policy;
}

Result<SynthPolicy> load_synth_policy(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error("cannot read synth policy " + path);
  std::stringstream text;
  text << in.rdbuf();
  json root = json::parse(text.str(), nullptr, false);
  if (root.is_discarded()) return make_error(path + ": not valid JSON");
  return synth_policy_from_json(root, path);
}

Result<SynthPolicy> load_default_synth_policy(const std::string& source_dir) {
  return load_synth_policy(source_dir + "/policies/synth_policy.json");
}

Result<SynthPolicy> synth_policy_from_config(const json& section, const std::string& source_dir) {
  std::string error;
  ObjectReader reader(section, "config synth", &error);
  reader.allow_only(
      {"enabled", "policy_file", "model_under_test", "top_k", "multiplier", "seeds_per_tail", "eval_fraction"});
  std::string policy_file = "policies/synth_policy.json";
  std::string model;
  reader.read("policy_file", policy_file);
  reader.read("model_under_test", model);
  if (!error.empty()) return make_error(error);
  std::string path = !policy_file.empty() && policy_file[0] == '/' ? policy_file : source_dir + "/" + policy_file;
  Result<SynthPolicy> policy = load_synth_policy(path);
  if (!policy) return policy;
  reader.read("top_k", policy->synthesis.top_k);
  reader.read("multiplier", policy->synthesis.multiplier);
  reader.read("seeds_per_tail", policy->synthesis.seeds_per_tail);
  reader.read("eval_fraction", policy->eval_fraction);
  if (!error.empty()) return make_error(error);
  if (!model.empty()) policy->model_under_test = model;
  return policy;
}

Result<SynthPolicy> policy_for_track(const SynthPolicy& configured, const std::string& track,
                                     const std::string& source_dir) {
  if (configured.track == track) return configured;
  if (track.empty() || track.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
    return make_error("unknown track '" + track + "'");
  std::string file = source_dir + "/policies/synth_policy_" + track + ".json";
  if (std::filesystem::exists(file)) return load_synth_policy(file);
  SynthPolicy policy;
  policy.track = track;
  policy.tails.features = ShareTarget{};
  policy.tails.features.min_share = 0;
  return policy;
}

}  // namespace tailforge
