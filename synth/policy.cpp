#include "synth/policy.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "synth/artifact_kinds.h"

namespace tailforge {
namespace {

using nlohmann::json;

// Reads typed keys of one JSON object, remembering the first error with its key path.
class ObjectReader {
 public:
  ObjectReader(const json& object, std::string path, std::string* error)
      : object_(object), path_(std::move(path)), error_(error) {
    if (!object_.is_object()) fail(path_, "must be an object");
  }

  void allow_only(std::initializer_list<const char*> keys) {
    if (!object_.is_object()) return;
    for (const auto& item : object_.items()) {
      if (std::none_of(keys.begin(), keys.end(), [&](const char* k) { return item.key() == k; })) {
        fail(path_ + "." + item.key(), "is not a known key");
      }
    }
  }

  template <typename T>
  void read(const char* key, T& out) {
    if (!object_.is_object() || !object_.contains(key)) return;
    const json& value = object_.at(key);
    try {
      if constexpr (std::is_same_v<T, bool>) {
        if (!value.is_boolean()) throw std::runtime_error("must be true or false");
      } else if constexpr (std::is_arithmetic_v<T>) {
        if (!value.is_number()) throw std::runtime_error("must be a number");
        if (std::is_integral_v<T> && !value.is_number_integer() && !value.is_number_unsigned()) {
          throw std::runtime_error("must be an integer");
        }
        if (value.get<double>() < 0) throw std::runtime_error("must not be negative");
      }
      out = value.get<T>();
    } catch (const std::exception& e) {
      fail(path_ + "." + key, e.what());
    }
  }

  const json& child(const char* key) const {
    static const json empty = json::object();
    return object_.is_object() && object_.contains(key) ? object_.at(key) : empty;
  }
  std::string child_path(const char* key) const { return path_ + "." + key; }
  std::string* error() const { return error_; }

  void fail(const std::string& where, const std::string& what) {
    if (error_->empty()) *error_ = where + " " + what;
  }

 private:
  const json& object_;
  std::string path_;
  std::string* error_;
};

void read_share_target(const ObjectReader& parent, const char* key, ShareTarget& target) {
  ObjectReader reader(parent.child(key), parent.child_path(key), parent.error());
  reader.allow_only({"tracked", "min_share", "targets", "head_fraction"});
  reader.read("head_fraction", target.head_fraction);
  reader.read("tracked", target.tracked);
  reader.read("min_share", target.min_share);
  reader.read("targets", target.targets);
}

void read_pairs(const ObjectReader& parent, std::map<std::string, ExportPair>& pairs) {
  const json& object = parent.child("pairs");
  if (!object.is_object()) return;
  std::vector<std::string> kinds = known_export_kinds();
  for (const auto& [track, value] : object.items()) {
    ObjectReader reader(value, parent.child_path("pairs") + "." + track, parent.error());
    reader.allow_only({"sample_tracks", "source_kind", "target_kind", "source_normalization", "instruction",
                       "drop_near_duplicates", "length_reductions", "launch_harness", "io_tests"});
    ExportPair pair;
    pair.sample_tracks = {track};
    reader.read("sample_tracks", pair.sample_tracks);
    reader.read("source_kind", pair.source_kind);
    reader.read("target_kind", pair.target_kind);
    reader.read("source_normalization", pair.source_normalization);
    reader.read("instruction", pair.instruction);
    reader.read("drop_near_duplicates", pair.drop_near_duplicates);
    reader.read("launch_harness", pair.launch_harness);
    reader.read("io_tests", pair.io_tests);
    const json& lengths = reader.child("length_reductions");
    if (lengths.is_object()) {
      for (const auto& [name, variables] : lengths.items()) {
        if (!variables.is_array() || variables.size() != 2 || !variables[0].is_string() || !variables[1].is_string()) {
          reader.fail(parent.child_path("pairs") + "." + track + ".length_reductions." + name,
                      "must be [\"<variable before>\", \"<variable after>\"]");
          continue;
        }
        pair.length_reductions[name] = {variables[0].get<std::string>(), variables[1].get<std::string>()};
      }
    } else if (!lengths.is_null()) {
      reader.fail(parent.child_path("pairs") + "." + track + ".length_reductions", "must be an object");
    }
    for (const std::string& kind : {pair.source_kind, pair.target_kind}) {
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) {
        reader.fail(parent.child_path("pairs") + "." + track, "names unknown artifact kind '" + kind + "'");
      }
    }
    if (pair.source_normalization != "none" && pair.source_normalization != "assembly") {
      reader.fail(parent.child_path("pairs") + "." + track + ".source_normalization", "must be none or assembly");
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

  ObjectReader dedup(top.child("dedup"), top.child_path("dedup"), &error);
  dedup.allow_only({"shingle_tokens", "permutations", "threshold", "mask_numbers", "mask_identifiers", "seed"});
  dedup.read("shingle_tokens", policy.dedup.shingle_tokens);
  dedup.read("permutations", policy.dedup.permutations);
  dedup.read("threshold", policy.dedup.threshold);
  dedup.read("mask_numbers", policy.dedup.mask_numbers);
  dedup.read("mask_identifiers", policy.dedup.mask_identifiers);
  dedup.read("seed", policy.dedup.seed);

  ObjectReader decontamination(top.child("decontamination"), top.child_path("decontamination"), &error);
  decontamination.allow_only({"run_tokens", "mask_identifiers", "mask_numbers", "extensions", "max_file_bytes"});
  decontamination.read("run_tokens", policy.decontamination.run_tokens);
  decontamination.read("mask_identifiers", policy.decontamination.mask_identifiers);
  decontamination.read("mask_numbers", policy.decontamination.mask_numbers);
  decontamination.read("extensions", policy.decontamination.extensions);
  decontamination.read("max_file_bytes", policy.decontamination.max_file_bytes);

  ObjectReader tails(top.child("tails"), top.child_path("tails"), &error);
  tails.allow_only({"features", "domains", "categories", "yield", "model", "signal_weights", "dimension_weights", "max_entries"});
  read_share_target(tails, "features", policy.tails.features);
  read_share_target(tails, "domains", policy.tails.domains);
  ObjectReader categories(tails.child("categories"), tails.child_path("categories"), &error);
  categories.allow_only({"min_failures", "min_share", "exclude_prefixes"});
  categories.read("exclude_prefixes", policy.tails.category_exclude_prefixes);
  categories.read("min_failures", policy.tails.category_min_failures);
  categories.read("min_share", policy.tails.category_min_share);
  ObjectReader yield(tails.child("yield"), tails.child_path("yield"), &error);
  yield.allow_only({"min_finished", "min_failure_rate", "excess_ratio"});
  yield.read("min_finished", policy.tails.yield_min_finished);
  yield.read("min_failure_rate", policy.tails.yield_min_failure_rate);
  yield.read("excess_ratio", policy.tails.yield_excess_ratio);
  ObjectReader model(tails.child("model"), tails.child_path("model"), &error);
  model.allow_only({"min_evaluated", "min_failure_rate", "excess_ratio"});
  model.read("min_evaluated", policy.tails.model_min_evaluated);
  model.read("min_failure_rate", policy.tails.model_min_failure_rate);
  model.read("excess_ratio", policy.tails.model_excess_ratio);
  tails.read("signal_weights", policy.tails.signal_weights);
  tails.read("dimension_weights", policy.tails.dimension_weights);
  tails.read("max_entries", policy.tails.max_entries);

  ObjectReader synthesis(top.child("synthesis"), top.child_path("synthesis"), &error);
  synthesis.allow_only({"top_k", "multiplier", "seeds_per_tail", "proposal_factor", "agent"});
  synthesis.read("top_k", policy.synthesis.top_k);
  synthesis.read("multiplier", policy.synthesis.multiplier);
  synthesis.read("seeds_per_tail", policy.synthesis.seeds_per_tail);
  synthesis.read("proposal_factor", policy.synthesis.proposal_factor);
  synthesis.read("agent", policy.synthesis.agent);

  ObjectReader resampling(top.child("resampling"), top.child_path("resampling"), &error);
  resampling.allow_only({"target_fraction_of_head", "max_weight", "replicate", "model_failure_weight"});
  resampling.read("target_fraction_of_head", policy.resampling.target_fraction_of_head);
  resampling.read("max_weight", policy.resampling.max_weight);
  resampling.read("replicate", policy.resampling.replicate);
  resampling.read("model_failure_weight", policy.resampling.model_failure_weight);

  ObjectReader export_section(top.child("export"), top.child_path("export"), &error);
  export_section.allow_only({"eval_fraction", "pairs"});
  export_section.read("eval_fraction", policy.eval_fraction);
  read_pairs(export_section, policy.export_pairs);

  if (root.is_object() && root.contains("api")) {
    ObjectReader api(top.child("api"), top.child_path("api"), &error);
    api.allow_only({"rules_file", "families_file", "prior_file", "family_floor_share", "shipped_min_files",
                    "imported_min_files", "header_min_files", "header_weight", "max_identifier_tails",
                    "imported_weight", "floor_weight"});
    policy.api.enabled = true;
    policy.api.rules_file = "hipify_rules.json";
    policy.api.families_file = "api_families.json";
    policy.api.prior_file = "api_prior.json";
    api.read("rules_file", policy.api.rules_file);
    api.read("families_file", policy.api.families_file);
    api.read("prior_file", policy.api.prior_file);
    api.read("family_floor_share", policy.api.family_floor_share);
    api.read("shipped_min_files", policy.api.shipped_min_files);
    api.read("imported_min_files", policy.api.imported_min_files);
    api.read("header_min_files", policy.api.header_min_files);
    api.read("header_weight", policy.api.header_weight);
    api.read("max_identifier_tails", policy.api.max_identifier_tails);
    api.read("imported_weight", policy.api.imported_weight);
    api.read("floor_weight", policy.api.floor_weight);
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
