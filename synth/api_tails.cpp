#include "synth/api_tails.h"

#include <algorithm>
#include <cmath>

#include "synth/api_coverage.h"

namespace tailforge {
namespace {

constexpr size_t kUncoveredListed = 12;

// `weight`: the imported trees' or the floor's, on top of the signal's and the dimension's.
TailEntry api_entry(const SynthPolicy& policy, const std::string& dimension, const std::string& name, double severity,
                    double weight, nlohmann::json numbers) {
  severity = std::clamp(severity, 0.0, 1.0);
  numbers["severity"] = severity;
  if (weight != 1.0) numbers["weight"] = weight;
  double score = weight_of(policy.tails.signal_weights, "corpus_share") *
                 weight_of(policy.tails.dimension_weights, dimension) * weight * severity;
  return {dimension, name, "corpus_share", score, std::move(numbers)};
}

int64_t deficit(double target, double share, int64_t total) {
  return std::max<int64_t>(0, static_cast<int64_t>(std::ceil((target - share) * static_cast<double>(total))));
}

}  // namespace

Status add_api_tails(Database& db, const SynthPolicy& policy, std::vector<TailEntry>& out) {
  if (!policy.api.enabled) return {};
  Result<ApiCoverage> coverage = measure_api_coverage(db, policy.api, policy.track);
  if (!coverage) return coverage.error();
  const int64_t total = coverage->verified_total;
  const double prior_weight = coverage->prior.from_imported_trees ? policy.api.imported_weight : 1.0;

  // Names below target, the most used first: the uncovered names of each family, and api/ entries.
  std::vector<const NameCoverage*> below;
  double largest_target = 0;
  for (const NameCoverage& name : coverage->names) {
    if (name.target_share <= 0 || name.share >= name.target_share) continue;
    below.push_back(&name);
    largest_target = std::max(largest_target, name.target_share);
  }
  std::stable_sort(below.begin(), below.end(), [total](const NameCoverage* a, const NameCoverage* b) {
    int64_t da = deficit(a->target_share, a->share, total), db = deficit(b->target_share, b->share, total);
    if (da != db) return da > db;
    return a->target_share > b->target_share;
  });

  for (const FamilyCoverage& family : coverage->families) {
    if (!family.below_target || family.target_share <= 0) continue;
    nlohmann::json uncovered = nlohmann::json::array();
    for (const NameCoverage* name : below) {
      if (name->family == family.name && name->verified == 0 && uncovered.size() < kUncoveredListed) {
        uncovered.push_back(name->name);
      }
    }
    double weight = family.target_names > 0 ? prior_weight : policy.api.floor_weight;
    out.push_back(api_entry(policy, "api_family", family.name, (family.target_share - family.share) / family.target_share,
                            weight,
                            {{"verified", family.verified}, {"verified_total", total}, {"share", family.share},
                             {"target_share", family.target_share},
                             {"deficit", deficit(family.target_share, family.share, total)},
                             {"target_names", family.target_names}, {"covered_targets", family.covered_targets},
                             {"uncovered", uncovered}, {"prior", coverage->prior.source}}));
  }
  size_t listed = 0;
  for (const NameCoverage* name : below) {
    if (listed++ >= policy.api.max_identifier_tails) break;
    // Among names equally short of their targets, the ones more of the prior's files use rank higher.
    double severity = (name->target_share - name->share) / name->target_share *
                      (0.5 + 0.5 * name->target_share / std::max(largest_target, 1e-9));
    out.push_back(api_entry(policy, "api", name->name, severity, prior_weight,
                            {{"family", name->family}, {"verified", name->verified}, {"verified_total", total},
                             {"share", name->share}, {"target_share", name->target_share},
                             {"deficit", deficit(name->target_share, name->share, total)},
                             {"prior_files", name->prior.files}, {"header_files", name->prior.header_files},
                             {"prior", coverage->prior.source}}));
  }
  return {};
}

std::vector<std::string> api_tail_names(const TailEntry& entry) {
  if (entry.dimension == "api") return {entry.name};
  std::vector<std::string> names;
  if (entry.dimension != "api_family" || !entry.numbers.is_object() || !entry.numbers.contains("uncovered")) return names;
  for (const nlohmann::json& name : entry.numbers["uncovered"]) {
    if (name.is_string()) names.push_back(name.get<std::string>());
  }
  return names;
}

}  // namespace tailforge
