// Long-tail detection: ranks feature tags, domains, failure categories and CUDA API families and
// names (synth/api_tails.h) that the verified corpus, the pipeline or the model under test leave
// weak, with the figures that put each there. It reads the store and writes the cycle's
// tail_report (and keeps the samples' API counts current); it does not synthesize anything.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "synth/policy.h"
#include "synth/tail_entry.h"

namespace tailforge {

struct TailReport {
  int64_t cycle_id = 0;
  std::vector<TailEntry> entries;  // ranked, highest score first
};

// Computes the ranked tail list from the store now (no writes).
Result<std::vector<TailEntry>> detect_tails(Database& db, const SynthPolicy& policy);

// The cycle's stored report when one exists (so a re-run sees the same tails); otherwise detects
// and stores it in tail_report.
Result<TailReport> tail_report_for_cycle(Database& db, const SynthPolicy& policy, int64_t cycle_id);

// feature, domain, category, api_family or api.
bool is_tail_dimension(const std::string& dimension);

// The lineage reason a tail entry gives its synthesized samples.
std::string tail_reason(const TailEntry& entry);

nlohmann::json tail_report_to_json(const TailReport& report);
std::string format_tail_report(const TailReport& report);

// The share of a feature tag, domain or failure category (its synthesized verified samples) in
// the track's verified corpus after each cycle (the samples that cycle and the earlier ones
// made): the series that shows synthesis filling a tail.
struct TailSharePoint {
  int64_t cycle_id = 0;
  int64_t verified_total = 0;  // verified samples made up to and including this cycle
  int64_t matching = 0;        // of those, with the feature or domain
  double share = 0;
};
Result<std::vector<TailSharePoint>> tail_share_series(Database& db, const std::string& track,
                                                      const std::string& dimension, const std::string& name);
nlohmann::json tail_share_series_to_json(const std::vector<TailSharePoint>& series);
std::string format_tail_share_series(const std::string& track, const std::string& dimension,
                                     const std::string& name, const std::vector<TailSharePoint>& series);

// The feature tags of the track's verified corpus (the keyword long tail): every tag the policy
// tracks (or, tracking none, every tag seen), with its count, its share and the share the policy
// wants of it; below_target marks the ones under their target.
struct FeatureShare {
  std::string name;
  int64_t verified = 0;
  double share = 0;
  double target = 0;
  bool below_target = false;
};
Result<std::vector<FeatureShare>> feature_distribution(Database& db, const SynthPolicy& policy, const std::string& track);
nlohmann::json feature_distribution_to_json(const std::vector<FeatureShare>& shares, int64_t verified_total);
std::string format_feature_distribution(const std::string& track, const std::vector<FeatureShare>& shares,
                                        int64_t verified_total);

// What `tailforge tails` and GET /v1/tails show: a cycle's stored tail list (the newest one when
// no cycle is named), the share series of one entry (the list's top entry unless `dimension` and
// `name` are given) and the track's feature distribution. Without any tail list yet, only the
// distribution (`report` empty); with no verified sample either, an error.
struct TailsView {
  std::string track;
  std::optional<TailReport> report;
  std::string dimension, name;
  std::vector<TailSharePoint> series;
  std::vector<FeatureShare> distribution;
  int64_t verified_total = 0;
};
Result<TailsView> query_tails_view(Database& db, const SynthPolicy& policy, const std::string& track,
                                   std::optional<int64_t> cycle, const std::string& dimension,
                                   const std::string& name);
nlohmann::json tails_view_to_json(const TailsView& view);
std::string format_tails_view(const TailsView& view);

}  // namespace tailforge
