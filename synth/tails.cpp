#include "synth/tails.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "store/corpus.h"
#include "synth/api_tails.h"
#include "synth/model_selection.h"

namespace tailforge {
namespace {

using nlohmann::json;

double ratio(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

TailEntry make_entry(const SynthPolicy& policy, std::string dimension, std::string name, std::string signal,
                     double severity, json numbers) {
  severity = std::clamp(severity, 0.0, 1.0);
  double score = weight_of(policy.tails.signal_weights, signal) *
                 weight_of(policy.tails.dimension_weights, dimension) * severity;
  numbers["severity"] = severity;
  return {std::move(dimension), std::move(name), std::move(signal), score, std::move(numbers)};
}

// Signal (a): values below their target share of the verified corpus.
void add_share_tails(const SynthPolicy& policy, const std::string& dimension, const ShareTarget& target,
                     const std::vector<std::string>& tracked, const std::map<std::string, int64_t>& counts,
                     int64_t total, std::vector<TailEntry>& out) {
  auto count_of = [&counts](const std::string& name) {
    auto found = counts.find(name);
    return found == counts.end() ? int64_t{0} : found->second;
  };
  std::string head;
  for (const std::string& name : tracked) {
    if (head.empty() || count_of(name) > count_of(head)) head = name;
  }
  double head_share = head.empty() ? 0.0 : ratio(count_of(head), total);
  for (const std::string& name : tracked) {
    int64_t count = count_of(name);
    double share = ratio(count, total);
    double wanted = target.target_for(name, head_share);
    if (wanted <= 0 || share >= wanted) continue;
    int64_t deficit = static_cast<int64_t>(std::ceil(wanted * static_cast<double>(total))) - count;
    json numbers = {{"verified", count}, {"verified_total", total}, {"share", share}, {"target_share", wanted},
                    {"deficit", std::max<int64_t>(deficit, 0)}};
    if (target.head_fraction > 0) {
      numbers["head"] = head;
      numbers["head_share"] = head_share;
    }
    out.push_back(make_entry(policy, dimension, name, "corpus_share", (wanted - share) / wanted, numbers));
  }
}

// Signal (b): values whose samples fail verification well above the track's rate.
void add_yield_tails(const SynthPolicy& policy, const std::string& dimension,
                     const std::map<std::string, YieldCounts>& yields, const std::vector<std::string>& tracked,
                     const YieldCounts& overall, std::vector<TailEntry>& out) {
  const TailThresholds& t = policy.tails;
  double base = ratio(overall.failed, overall.finished);
  for (const auto& [name, counts] : yields) {
    if (!tracked.empty() && std::find(tracked.begin(), tracked.end(), name) == tracked.end()) continue;
    if (counts.finished < t.yield_min_finished) continue;
    double rate = ratio(counts.failed, counts.finished);
    if (rate < t.yield_min_failure_rate || rate < base * t.yield_excess_ratio) continue;
    double severity = base < 1.0 ? (rate - base) / (1.0 - base) : 0.0;
    out.push_back(make_entry(policy, dimension, name, "pipeline_yield", severity,
                             {{"finished", counts.finished}, {"failed", counts.failed}, {"failure_rate", rate},
                              {"track_failure_rate", base}, {"failed_by_stage", counts.failed_by_stage}}));
  }
}

// Whether a value's items fail well above the model's overall rate: `ratio` times as often, or,
// where the model fails nearly everything and no rate can be that much higher, right `ratio`
// times less often (0 of 11 texture items right stands out when 10% of all items are right;
// nothing stands out when the model gets nothing right).
bool fails_well_above(double rate, double overall, double ratio) {
  return rate >= overall * ratio || (1.0 - rate) * ratio < 1.0 - overall;
}

// Signal (c): what the model under test fails. A feature, domain or API family counts when its
// items fail well above the model's overall rate; a category always stands for itself.
Status add_model_tails(Database& db, const SynthPolicy& policy, std::vector<TailEntry>& out) {
  Result<UnderTest> tested = model_under_test(db, policy.model_under_test, policy.track);
  if (!tested) return tested.error();
  if (!tested->model) return {};
  const int64_t model_id = tested->model->id;
  Result<std::map<std::string, EvaluationCounts>> counts = evaluation_counts(db, model_id);
  if (!counts) return counts.error();
  int64_t evaluated = 0, failed = 0;
  for (const auto& [key, c] : *counts) {
    if (key.rfind("category:", 0) != 0) continue;
    evaluated = c.evaluated;  // every category row carries the model's evaluation count
    failed += c.failed;
  }
  double overall = ratio(failed, evaluated);
  for (const auto& [key, c] : *counts) {
    if (c.evaluated < policy.tails.model_min_evaluated) continue;
    double rate = ratio(c.failed, c.evaluated);
    if (rate < policy.tails.model_min_failure_rate) continue;
    size_t colon = key.find(':');
    std::string dimension = key.substr(0, colon);
    if (dimension != "category" && !fails_well_above(rate, overall, policy.tails.model_excess_ratio)) continue;
    out.push_back(make_entry(policy, dimension, key.substr(colon + 1), "model_failure", rate,
                             {{"model_id", model_id}, {"evaluated", c.evaluated}, {"failed", c.failed},
                              {"failure_rate", rate}, {"model_failure_rate", overall}}));
  }
  return {};
}

std::vector<std::string> tracked_or_seen(const ShareTarget& target, const std::vector<std::string>& seen) {
  return target.tracked.empty() ? seen : target.tracked;
}

}  // namespace

Result<std::vector<TailEntry>> detect_tails(Database& db, const SynthPolicy& policy) {
  const std::string& track = policy.track;
  std::vector<TailEntry> entries;
  Result<int64_t> total = verified_count(db, track);
  Result<std::vector<std::string>> features = features_seen(db, track);
  Result<std::vector<std::string>> domains = domains_seen(db, track);
  Result<std::map<std::string, int64_t>> by_feature = verified_count_by_feature(db, track);
  Result<std::map<std::string, int64_t>> by_domain = verified_count_by_domain(db, track);
  for (const Error* error : {total ? nullptr : &total.error(), features ? nullptr : &features.error(),
                             domains ? nullptr : &domains.error(), by_feature ? nullptr : &by_feature.error(),
                             by_domain ? nullptr : &by_domain.error()}) {
    if (error) return make_error("detecting tails: " + error->message);
  }
  std::vector<std::string> tracked_features = tracked_or_seen(policy.tails.features, *features);
  std::vector<std::string> tracked_domains = tracked_or_seen(policy.tails.domains, *domains);
  add_share_tails(policy, "feature", policy.tails.features, tracked_features, *by_feature, *total, entries);
  add_share_tails(policy, "domain", policy.tails.domains, tracked_domains, *by_domain, *total, entries);

  Result<std::vector<FailureCategoryCoverage>> categories = failure_category_coverage(db, track);
  if (!categories) return make_error("detecting tails: " + categories.message());
  for (const FailureCategoryCoverage& c : *categories) {
    if (c.failed_samples < policy.tails.category_min_failures) continue;
    const std::vector<std::string>& excluded = policy.tails.category_exclude_prefixes;
    if (std::any_of(excluded.begin(), excluded.end(),
                    [&c](const std::string& prefix) { return c.category.rfind(prefix, 0) == 0; })) {
      continue;
    }
    double share = ratio(c.covered_verified, *total);
    double wanted = policy.tails.category_min_share;
    if (wanted <= 0 || share >= wanted) continue;
    entries.push_back(make_entry(policy, "category", c.category, "corpus_share", (wanted - share) / wanted,
                                 {{"failed_samples", c.failed_samples}, {"covered_verified", c.covered_verified},
                                  {"verified_total", *total}, {"share", share}, {"target_share", wanted}}));
  }

  // Failures the policy excludes from the tails do not lower a value's yield either.
  const std::vector<std::string>& excluded = policy.tails.category_exclude_prefixes;
  Result<YieldCounts> overall = overall_yield(db, track, excluded);
  Result<std::map<std::string, YieldCounts>> feature_yields = yield_by_feature(db, track, excluded);
  Result<std::map<std::string, YieldCounts>> domain_yields = yield_by_domain(db, track, excluded);
  if (!overall || !feature_yields || !domain_yields) {
    return make_error("detecting tails: " + (!overall         ? overall.message()
                                             : !feature_yields ? feature_yields.message()
                                                               : domain_yields.message()));
  }
  add_yield_tails(policy, "feature", *feature_yields, tracked_features, *overall, entries);
  add_yield_tails(policy, "domain", *domain_yields, tracked_domains, *overall, entries);
  if (Status s = add_model_tails(db, policy, entries); !s) return make_error("detecting tails: " + s.message());
  if (Status s = add_api_tails(db, policy, entries); !s) return make_error("detecting tails: " + s.message());

  std::stable_sort(entries.begin(), entries.end(), [](const TailEntry& a, const TailEntry& b) {
    if (a.score != b.score) return a.score > b.score;
    return std::tie(a.signal, a.dimension, a.name) < std::tie(b.signal, b.dimension, b.name);
  });
  if (entries.size() > policy.tails.max_entries) entries.resize(policy.tails.max_entries);
  return entries;
}

Result<TailReport> tail_report_for_cycle(Database& db, const SynthPolicy& policy, int64_t cycle_id) {
  TailReport report{cycle_id, {}};
  Result<bool> exists = tail_report_exists(db, cycle_id);
  if (!exists) return exists.error();
  if (*exists) {
    Result<std::vector<TailReportRow>> rows = tail_report_rows(db, cycle_id);
    if (!rows) return rows.error();
    for (const TailReportRow& row : *rows) {
      json numbers = json::parse(row.numbers, nullptr, false);
      if (numbers.is_discarded()) numbers = json::object();
      report.entries.push_back({row.dimension, row.name, row.signal, row.score, std::move(numbers)});
    }
    return report;
  }
  Result<std::vector<TailEntry>> entries = detect_tails(db, policy);
  if (!entries) return entries.error();
  report.entries = std::move(*entries);
  std::vector<TailReportRow> rows;
  for (size_t i = 0; i < report.entries.size(); ++i) {
    const TailEntry& e = report.entries[i];
    rows.push_back({static_cast<int64_t>(i + 1), e.dimension, e.name, e.signal, e.score, e.numbers.dump()});
  }
  if (Status s = replace_tail_report(db, cycle_id, rows); !s) return s.error();
  return report;
}

bool is_tail_dimension(const std::string& dimension) {
  return dimension == "feature" || dimension == "domain" || dimension == "category" || dimension == "api_family" ||
         dimension == "api";
}

std::string tail_reason(const TailEntry& entry) {
  return json{{"dimension", entry.dimension}, {"name", entry.name}, {"signal", entry.signal}, {"score", entry.score}}
      .dump();
}

json tail_report_to_json(const TailReport& report) {
  json entries = json::array();
  for (size_t i = 0; i < report.entries.size(); ++i) {
    const TailEntry& e = report.entries[i];
    entries.push_back({{"rank", i + 1}, {"dimension", e.dimension}, {"name", e.name}, {"signal", e.signal},
                       {"score", e.score}, {"numbers", e.numbers}});
  }
  return {{"cycle_id", report.cycle_id}, {"entries", entries}};
}

std::string format_tail_report(const TailReport& report) {
  std::ostringstream out;
  out << "tails of cycle " << report.cycle_id << " (" << report.entries.size() << ")\n";
  for (size_t i = 0; i < report.entries.size(); ++i) {
    const TailEntry& e = report.entries[i];
    std::string label = e.dimension + "/" + e.name;
    out << std::setw(3) << i + 1 << "  " << std::left << std::setw(std::max<int>(34, label.size() + 2)) << label
        << std::setw(16) << e.signal << std::right << std::fixed << std::setprecision(3) << e.score << "  "
        << e.numbers.dump() << "\n";
  }
  return out.str();
}

Result<std::vector<TailSharePoint>> tail_share_series(Database& db, const std::string& track,
                                                      const std::string& dimension, const std::string& name) {
  Result<std::vector<CycleVerifiedCounts>> rows = verified_by_cycle(db, track, dimension, name);
  if (!rows) return rows.error();
  std::vector<TailSharePoint> series;
  int64_t total = 0, matching = 0;
  for (const CycleVerifiedCounts& row : *rows) {
    total += row.verified;
    matching += row.matching;
    series.push_back({row.cycle_id, total, matching, ratio(matching, total)});
  }
  return series;
}

json tail_share_series_to_json(const std::vector<TailSharePoint>& series) {
  json points = json::array();
  for (const TailSharePoint& point : series) {
    points.push_back({{"cycle_id", point.cycle_id}, {"verified_total", point.verified_total},
                      {"matching", point.matching}, {"share", point.share}});
  }
  return points;
}

std::string format_tail_share_series(const std::string& track, const std::string& dimension,
                                     const std::string& name, const std::vector<TailSharePoint>& series) {
  std::ostringstream out;
  out << "share of " << dimension << "/" << name << " in the verified " << track << " corpus after each cycle\n";
  out << "  cycle  verified  " << std::setw(10) << "matching" << "   share\n";
  for (const TailSharePoint& point : series) {
    out << std::setw(7) << point.cycle_id << std::setw(10) << point.verified_total << std::setw(12) << point.matching
        << std::fixed << std::setprecision(3) << std::setw(8) << point.share << "\n";
  }
  return out.str();
}

Result<std::vector<FeatureShare>> feature_distribution(Database& db, const SynthPolicy& policy, const std::string& track) {
  Result<int64_t> total = verified_count(db, track);
  if (!total) return total.error();
  Result<std::map<std::string, int64_t>> counts = verified_count_by_feature(db, track);
  if (!counts) return counts.error();
  std::vector<std::string> names = policy.tails.features.tracked;
  if (names.empty()) {
    for (const auto& [name, count] : *counts) names.push_back(name);
  }
  auto count_of = [&](const std::string& name) {
    auto found = counts->find(name);
    return found == counts->end() ? int64_t{0} : found->second;
  };
  int64_t head = 0;
  for (const std::string& name : names) head = std::max(head, count_of(name));
  std::vector<FeatureShare> shares;
  for (const std::string& name : names) {
    FeatureShare share{name, count_of(name), ratio(count_of(name), *total), 0, false};
    share.target = policy.tails.features.target_for(name, ratio(head, *total));
    share.below_target = share.target > 0 && share.share < share.target;
    shares.push_back(share);
  }
  std::stable_sort(shares.begin(), shares.end(), [](const FeatureShare& a, const FeatureShare& b) { return a.verified > b.verified; });
  return shares;
}

json feature_distribution_to_json(const std::vector<FeatureShare>& shares, int64_t verified_total) {
  json features = json::array();
  for (const FeatureShare& f : shares) {
    features.push_back({{"name", f.name}, {"verified", f.verified}, {"share", f.share}, {"target_share", f.target},
                        {"below_target", f.below_target}});
  }
  return {{"verified_total", verified_total}, {"features", features}};
}

std::string format_feature_distribution(const std::string& track, const std::vector<FeatureShare>& shares,
                                        int64_t verified_total) {
  std::ostringstream out;
  out << "feature tags of the " << verified_total << " verified " << track << " samples\n";
  out << "  " << std::left << std::setw(20) << "feature" << std::right << std::setw(9) << "verified" << std::setw(9)
      << "share" << std::setw(9) << "target" << "\n";
  for (const FeatureShare& f : shares) {
    out << "  " << std::left << std::setw(20) << f.name << std::right << std::setw(9) << f.verified << std::fixed
        << std::setprecision(3) << std::setw(9) << f.share << std::setw(9) << f.target
        << (f.below_target ? "  below target" : "") << "\n";
  }
  return out.str();
}

Result<TailsView> query_tails_view(Database& db, const SynthPolicy& policy, const std::string& track,
                                   std::optional<int64_t> cycle, const std::string& dimension,
                                   const std::string& name) {
  TailsView view;
  view.track = track;
  Result<std::vector<FeatureShare>> distribution = feature_distribution(db, policy, track);
  if (!distribution) return distribution.error();
  view.distribution = std::move(*distribution);
  Result<int64_t> verified_total = verified_count(db, track);
  if (!verified_total) return verified_total.error();
  view.verified_total = *verified_total;
  if (!cycle) {
    Result<std::optional<int64_t>> latest = latest_tail_report_cycle(db);
    if (!latest) return latest.error();
    if (!*latest) {
      if (view.verified_total == 0) return make_error("no cycle has a tail list yet");
      return view;
    }
    cycle = **latest;
  }
  Result<std::vector<TailReportRow>> rows = tail_report_rows(db, *cycle);
  if (!rows) return rows.error();
  if (rows->empty()) return make_error("cycle " + std::to_string(*cycle) + " has no tail list");
  TailReport report{*cycle, {}};
  for (const TailReportRow& row : *rows) {
    nlohmann::json numbers = nlohmann::json::parse(row.numbers, nullptr, false);
    report.entries.push_back(
        {row.dimension, row.name, row.signal, row.score, numbers.is_discarded() ? nlohmann::json::object() : numbers});
  }
  view.dimension = dimension.empty() ? report.entries.front().dimension : dimension;
  view.name = dimension.empty() ? report.entries.front().name : name;
  view.report = std::move(report);
  Result<std::vector<TailSharePoint>> series = tail_share_series(db, track, view.dimension, view.name);
  if (!series) return series.error();
  view.series = std::move(*series);
  return view;
}

nlohmann::json tails_view_to_json(const TailsView& view) {
  nlohmann::json out = view.report ? tail_report_to_json(*view.report) : nlohmann::json::object();
  if (view.report) {
    out["series"] = {{"track", view.track}, {"dimension", view.dimension}, {"name", view.name},
                     {"points", tail_share_series_to_json(view.series)}};
  }
  out["distribution"] = feature_distribution_to_json(view.distribution, view.verified_total);
  return out;
}

std::string format_tails_view(const TailsView& view) {
  std::string distribution = format_feature_distribution(view.track, view.distribution, view.verified_total);
  if (!view.report) return distribution + "\nno cycle has a tail list yet\n";
  return format_tail_report(*view.report) + "\n" +
         format_tail_share_series(view.track, view.dimension, view.name, view.series) + "\n" + distribution;
}

}  // namespace tailforge
