// The printable forms of a TaxonomyReport (JSON and a human table) and the parsing of the
// taxonomy query options; the queries themselves are in failures.cpp and model_taxonomy.cpp.
#include <cstdio>
#include <sstream>

#include "store/failures.h"

namespace tailforge {

namespace {

using json = nlohmann::json;

std::string percent(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%5.1f%%", share * 100.0);
  return buffer;
}

std::string plain_percent(double share) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", share * 100.0);
  return buffer;
}


std::string format_time(int64_t ms) {
  time_t seconds = static_cast<time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M", &tm);
  return buffer;
}

}  // namespace

Result<int64_t> parse_time_bound(const std::string& key, const std::string& text, int64_t now) {
  if (text.empty()) return make_error(key + ": empty time");
  size_t used = 0;
  int64_t number = 0;
  try {
    number = std::stoll(text, &used);
  } catch (const std::exception&) {
    return make_error(key + "=" + text + ": expected a duration like 48h, 30m, 7d or Unix milliseconds");
  }
  if (used == text.size()) return number;
  std::string unit = text.substr(used);
  static const std::map<std::string, int64_t> units = {
      {"s", 1000LL}, {"m", 60000LL}, {"h", 3600000LL}, {"d", 86400000LL}, {"w", 604800000LL}};
  auto it = units.find(unit);
  if (it == units.end() || number < 0) {
    return make_error(key + "=" + text + ": expected a duration like 48h, 30m, 7d or Unix milliseconds");
  }
  int64_t before = 0, time = 0;
  if (__builtin_mul_overflow(number, it->second, &before) || __builtin_sub_overflow(now, before, &time)) {
    return make_error(key + "=" + text + ": the duration is too long");
  }
  return time;
}

Result<TaxonomyQuery> taxonomy_query_from_args(const std::map<std::string, std::string>& args, int64_t now) {
  static const std::vector<std::string> known = {"since", "until", "stage", "track", "model", "origin", "domain",
                                                 "feature", "trend", "examples", "compare_since", "compare_until",
                                                 "compare_model", "clusters"};
  TaxonomyQuery q;
  for (const auto& [key, value] : args) {
    if (std::find(known.begin(), known.end(), key) == known.end()) return make_error("unknown taxonomy option '" + key + "'");
    if (key == "since" || key == "until" || key == "compare_since" || key == "compare_until") {
      Result<int64_t> time = parse_time_bound(key, value, now);
      if (!time) return time.error();
      (key == "since" ? q.since_ms : key == "until" ? q.until_ms : key == "compare_since" ? q.compare_since_ms : q.compare_until_ms) =
          *time;
    } else if (key == "examples" || key == "clusters") {
      try {
        size_t used = 0;
        int n = std::stoi(value, &used);
        if (used != value.size() || n < 0 || n > 1000) throw std::out_of_range(value);
        (key == "examples" ? q.examples : q.clusters) = n;
      } catch (const std::exception&) {
        return make_error(key + "=" + value + ": expected a count from 0 to 1000");
      }
    } else if (key == "trend") {
      if (value != "hour" && value != "day") return make_error("trend=" + value + ": expected hour or day");
      q.trend = value;
    } else {
      std::string& field = key == "stage"           ? q.stage_prefix
                           : key == "track"         ? q.track
                           : key == "model"         ? q.model
                           : key == "compare_model" ? q.compare_model
                           : key == "origin"        ? q.origin
                           : key == "domain"        ? q.domain
                                                    : q.feature;
      if (value.empty() && (key == "model" || key == "compare_model")) return make_error(key + ": empty model name");
      field = value;
    }
  }
  if (!q.compare_model.empty() && q.model.empty()) {
    return make_error("compare_model=" + q.compare_model + " needs model: the comparison is of model A with model B");
  }
  if (!q.compare_model.empty() && (q.compare_since_ms || q.compare_until_ms)) {
    return make_error("compare_model and compare_since/compare_until exclude each other");
  }
  return q;
}

json taxonomy_report_to_json(const TaxonomyReport& report) {
  const TaxonomyQuery& q = report.query;
  bool by_model = !q.model.empty();
  json filters = json::object();
  if (q.since_ms) filters["since_ms"] = *q.since_ms;
  if (q.until_ms) filters["until_ms"] = *q.until_ms;
  for (const auto& [key, value] : std::map<std::string, std::string>{{"stage", q.stage_prefix}, {"track", q.track},
                                                                     {"model", q.model}, {"origin", q.origin},
                                                                     {"domain", q.domain}, {"feature", q.feature},
                                                                     {"compare_model", q.compare_model}}) {
    if (!value.empty()) filters[key] = value;
  }
  json out = {{"source", by_model ? "model" : "corpus"},
              {"counting", by_model ? "failed evaluations of model " + q.model +
                                          ", one per item; rate is of evaluated items, share of failed evaluations"
                                    : "distinct (sample, category) failures, each at its first stage row; shares are "
                                      "of failures"},
              {"total", report.total},
              {"failed_samples", report.failed_samples},
              {"filters", filters},
              {"categories", json::array()}};
  if (by_model) {
    out["model"] = q.model;
    out["evaluated"] = report.evaluated;
    out["passed"] = report.passed;
    out["accuracy"] = report.evaluated ? double(report.passed) / double(report.evaluated) : 0.0;
  }
  for (const CategoryNode& node : report.tree) {
    json category = {{"path", node.path}, {"description", node.description}, {"depth", node.depth},
                     {"count", node.count}, {"share_of_parent", node.share_of_parent}};
    if (by_model) {
      category["rate"] = node.rate;
      category["share_of_failed_evaluations"] = node.share_of_all;
    } else {
      category["share_of_failures"] = node.share_of_all;
    }
    if (!node.stages.empty()) category["stages"] = node.stages;
    out["categories"].push_back(category);
  }
  if (!q.trend.empty()) {
    out["trend"] = {{"bucket", q.trend}, {"points", json::array()}};
    for (const TrendPoint& p : report.trend) {
      out["trend"]["points"].push_back({{"bucket_ms", p.bucket_ms}, {"top_category", p.top_category}, {"count", p.count}});
    }
  }
  if (q.examples > 0) {
    out["examples"] = json::object();
    for (const auto& [category, examples] : report.examples) {
      json list = json::array();
      for (const FailureExample& e : examples) {
        list.push_back({{"sample_id", e.sample_id}, {"stage", e.stage}, {"message", e.message}, {"created_ms", e.created_ms}});
      }
      out["examples"][category] = list;
    }
  }
  if (!report.compare_label_a.empty()) {
    json rows = json::array();
    for (const ComparisonRow& r : report.comparison) {
      rows.push_back({{"path", r.path}, {"count_a", r.count_a}, {"count_b", r.count_b}, {"share_a", r.share_a},
                      {"share_b", r.share_b}, {"delta", r.delta}});
    }
    out["comparison"] = {{"a", report.compare_label_a}, {"b", report.compare_label_b}, {"total_a", report.compare_total_a},
                         {"total_b", report.compare_total_b}, {"rows", rows}};
  }
  if (report.model_comparison) {
    const ModelComparison& c = *report.model_comparison;
    json rows = json::array();
    for (const ModelComparisonRow& r : c.rows) {
      rows.push_back({{"path", r.path}, {"count_a", r.count_a}, {"count_b", r.count_b}, {"rate_a", r.rate_a},
                      {"rate_b", r.rate_b}, {"delta", r.delta}});
    }
    out["model_comparison"] = {{"model_a", c.model_a},       {"model_b", c.model_b},       {"common_items", c.common_items},
                               {"passed_a", c.passed_a},     {"passed_b", c.passed_b},     {"failed_a", c.failed_a},
                               {"failed_b", c.failed_b},     {"accuracy_a", c.accuracy_a}, {"accuracy_b", c.accuracy_b},
                               {"rows", rows}};
  }
  out["uncategorized_clusters"] = json::array();
  for (const MessageCluster& c : report.uncategorized_clusters) {
    out["uncategorized_clusters"].push_back({{"normalized", c.normalized}, {"count", c.count}, {"category", c.category},
                                             {"example_message", c.example_message},
                                             {"example_sample_id", c.example_sample_id}});
  }
  return out;
}

namespace {

std::string tree_label(const CategoryNode& node) {
  if (node.depth == 0) return node.path;
  return std::string(static_cast<size_t>(node.depth) * 2, ' ') + node.path.substr(node.path.rfind('.') + 1);
}

void format_corpus_tree(const TaxonomyReport& report, std::ostringstream& out) {
  out << "failures: " << report.total << " (distinct sample x category) in " << report.failed_samples
      << " failed samples\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-52s %9s %10s %9s\n", "category", "failures", "% failures", "of parent");
  out << line;
  for (const CategoryNode& node : report.tree) {
    std::snprintf(line, sizeof line, "%-52s %9lld %10s %9s\n", tree_label(node).c_str(),
                  static_cast<long long>(node.count), percent(node.share_of_all).c_str(),
                  percent(node.share_of_parent).c_str());
    out << line;
  }
}

void format_model_tree(const TaxonomyReport& report, std::ostringstream& out) {
  double rate = report.evaluated ? double(report.total) / double(report.evaluated) : 0;
  double accuracy = report.evaluated ? double(report.passed) / double(report.evaluated) : 0;
  out << "model " << report.query.model << ": " << report.total << " failed of " << report.evaluated
      << " evaluated (rate " << plain_percent(rate) << "), accuracy "
      << plain_percent(accuracy) << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-52s %9s %7s %10s %10s\n", "category", "failed", "rate", "% failed", "of parent");
  out << line;
  for (const CategoryNode& node : report.tree) {
    std::snprintf(line, sizeof line, "%-52s %9lld %7s %10s %10s\n", tree_label(node).c_str(),
                  static_cast<long long>(node.count), percent(node.rate).c_str(), percent(node.share_of_all).c_str(),
                  percent(node.share_of_parent).c_str());
    out << line;
  }
}

void format_model_comparison(const ModelComparison& c, std::ostringstream& out) {
  char line[512];
  out << "\nmodel comparison on " << c.common_items << " items both evaluated: A = " << c.model_a << " (accuracy "
      << plain_percent(c.accuracy_a) << "), B = " << c.model_b
      << " (accuracy " << plain_percent(c.accuracy_b) << ")\n";
  std::snprintf(line, sizeof line, "%-52s %9s %9s %9s %7s %7s\n", "category", "A", "B", "delta", "rate A", "rate B");
  out << line;
  for (const ModelComparisonRow& r : c.rows) {
    if (r.delta == 0) continue;
    std::snprintf(line, sizeof line, "%-52s %9lld %9lld %+9lld %7s %7s\n", r.path.c_str(),
                  static_cast<long long>(r.count_a), static_cast<long long>(r.count_b),
                  static_cast<long long>(r.delta), percent(r.rate_a).c_str(), percent(r.rate_b).c_str());
    out << line;
  }
}

}  // namespace

std::string format_taxonomy_table(const TaxonomyReport& report) {
  std::ostringstream out;
  if (report.query.model.empty()) {
    format_corpus_tree(report, out);
  } else {
    format_model_tree(report, out);
  }
  char line[512];
  if (!report.query.trend.empty()) {
    out << "\ntrend per " << report.query.trend << " (UTC):\n";
    for (const TrendPoint& p : report.trend) {
      std::snprintf(line, sizeof line, "  %s  %-20s %9lld\n", format_time(p.bucket_ms).c_str(), p.top_category.c_str(),
                    static_cast<long long>(p.count));
      out << line;
    }
  }
  if (report.query.examples > 0) {
    out << "\nexamples:\n";
    for (const auto& [category, examples] : report.examples) {
      out << "  " << category << "\n";
      for (const FailureExample& e : examples) {
        out << "    " << e.sample_id.substr(0, 12) << "  " << e.stage << "  " << e.message.substr(0, 120) << "\n";
      }
    }
  }
  if (!report.compare_label_a.empty()) {
    out << "\ncomparison: A = " << report.compare_label_a << " (" << report.compare_total_a << "), B = "
        << report.compare_label_b << " (" << report.compare_total_b << ")\n";
    std::snprintf(line, sizeof line, "%-52s %9s %9s %9s %7s %7s\n", "category", "A", "B", "delta", "share A", "share B");
    out << line;
    for (const ComparisonRow& r : report.comparison) {
      if (r.delta == 0) continue;
      std::snprintf(line, sizeof line, "%-52s %9lld %9lld %+9lld %7s %7s\n", r.path.c_str(), static_cast<long long>(r.count_a),
                    static_cast<long long>(r.count_b), static_cast<long long>(r.delta), percent(r.share_a).c_str(),
                    percent(r.share_b).c_str());
      out << line;
    }
  }
  if (report.model_comparison) format_model_comparison(*report.model_comparison, out);
  if (!report.uncategorized_clusters.empty()) {
    out << "\ntop unexplained messages:\n";
    for (const MessageCluster& c : report.uncategorized_clusters) {
      std::snprintf(line, sizeof line, "  %7lld  %s\n", static_cast<long long>(c.count), c.normalized.substr(0, 140).c_str());
      out << line;
    }
  }
  return out.str();
}

}  // namespace tailforge
