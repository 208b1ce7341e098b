// Categorized failures: storing them and every taxonomy query (`tailforge taxonomy` and
// GET /v1/taxonomy call taxonomy_report and print the same numbers). Categorizing is not done
// here (policies/categorizer.h decides the category); this module only stores and counts.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/database.h"

namespace tailforge {

struct FailureRecord {
  std::string sample_id;
  std::optional<int64_t> verification_id;
  std::string stage;
  std::string category;  // full path, e.g. amd.asm.register_alignment
  std::string message;   // the evidence line
  std::optional<std::string> evidence_file;
  std::optional<int64_t> evidence_line;
  std::string track;
  std::string origin;
  std::optional<std::string> domain;
  std::optional<std::string> agent;
  std::optional<int64_t> model_id;
  int64_t created_ms = 0;  // 0: now
};

// Stores one failure; a second failure for the same (sample, stage) replaces the first's
// category and evidence (so re-categorizing is idempotent). The sample must exist.
Status insert_failure(Database& db, const FailureRecord& failure);

// Makes the category table hold every path (with its parent) and description given.
Status upsert_categories(Database& db, const std::map<std::string, std::string>& descriptions);

// Masks what varies between occurrences of one message (quoted names, paths, hex, numbers).
std::string normalize_failure_message(std::string message);

struct TaxonomyQuery {
  std::optional<int64_t> since_ms, until_ms;  // [since, until)
  std::string stage_prefix, track, model, origin, domain, feature;  // empty: no filter
  std::string trend;  // "", "hour" or "day"
  int examples = 0;   // examples per category (most recent first)
  std::optional<int64_t> compare_since_ms, compare_until_ms;  // window B, compared with the main window
  std::vector<std::string> compare_models;                    // two model names: A then B
  int clusters = 10;  // top uncategorized message clusters
};

struct CategoryNode {
  std::string path;
  std::string description;
  int depth = 0;  // 0 for top-level categories
  int64_t count = 0;
  double share_of_all = 0;
  double share_of_parent = 0;
};

struct TrendPoint {
  int64_t bucket_ms = 0;
  std::string top_category;
  int64_t count = 0;
};

struct FailureExample {
  std::string sample_id, stage, message;
  int64_t created_ms = 0;
};

struct ComparisonRow {
  std::string path;
  int64_t count_a = 0, count_b = 0;
  double share_a = 0, share_b = 0;
  int64_t delta = 0;  // count_b - count_a
};

struct MessageCluster {
  std::string normalized, example_message, example_sample_id, category;
  int64_t count = 0;
};

struct TaxonomyReport {
  TaxonomyQuery query;
  int64_t total = 0;
  std::vector<CategoryNode> tree;  // pre-order: parents before children, largest first
  std::vector<TrendPoint> trend;
  std::map<std::string, std::vector<FailureExample>> examples;  // by leaf category
  std::string compare_label_a, compare_label_b;
  int64_t compare_total_a = 0, compare_total_b = 0;
  std::vector<ComparisonRow> comparison;  // largest growth first, largest shrink last
  std::vector<MessageCluster> uncategorized_clusters;
};

Result<TaxonomyReport> taxonomy_report(Database& db, const TaxonomyQuery& query);
nlohmann::json taxonomy_report_to_json(const TaxonomyReport& report);
// A human table: the tree indented by depth with counts and shares, then trend, examples,
// comparison and clusters where asked for.
std::string format_taxonomy_table(const TaxonomyReport& report);

// Parses CLI flags / HTTP query parameters (same keys): since, until, stage, track, model,
// origin, domain, feature, trend, examples, compare_since, compare_until, compare_models.
// Times are durations before `now_ms` (48h, 30m, 7d, 90s, 2w) or Unix milliseconds.
Result<TaxonomyQuery> taxonomy_query_from_args(const std::map<std::string, std::string>& args,
                                               int64_t now = now_ms());

}  // namespace tailforge
