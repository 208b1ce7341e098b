// Categorized failures: storing them and every taxonomy query (`tailforge taxonomy` and
// GET /v1/taxonomy call taxonomy_report and print the same numbers). Categorizing is not done
// here (policies/categorizer.h decides the category); this module only stores and counts.
// failures.cpp stores and counts the corpus, model_taxonomy.cpp a model's evaluations, and
// failures_format.cpp prints a report and parses a query.
//
// What is counted. In the corpus a failure is one (sample, category) pair: a sample whose
// device and host compiles both failed with one category is one failure, located and dated at
// its first stage row (the others stay as stage detail). Parents roll up their children's
// failures. For a model (`model` in the query) a failure is one failed evaluation of that model;
// each evaluated item has at most one.
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
// category and evidence (so re-categorizing is idempotent). The sample must exist. Also marks
// which of the sample's stage rows is the first of its (sample, category) failure, so call it
// inside the caller's transaction.
Status insert_failure(Database& db, const FailureRecord& failure);

// Removes the sample's failure at `stage` (a stage run again that may now pass).
Status delete_stage_failure(Database& db, const std::string& sample_id, const std::string& stage);

// Makes the category table hold every path (with its parent) and description given.
Status upsert_categories(Database& db, const std::map<std::string, std::string>& descriptions);

// Masks what varies between occurrences of one message (quoted names, paths, hex, numbers).
std::string normalize_failure_message(std::string message);

struct TaxonomyQuery {
  std::optional<int64_t> since_ms, until_ms;  // [since, until)
  // Empty: no filter. A corpus failure is filtered by its first stage row; a model's by its
  // first failing stage.
  std::string stage_prefix, track;
  std::string model;  // not empty: this model's evaluations instead of the corpus's failures
  std::string origin, domain, feature;
  std::string trend;  // "", "hour" or "day"
  int examples = 0;   // examples per category (most recent first)
  std::optional<int64_t> compare_since_ms, compare_until_ms;  // window B, compared with the main window
  std::string compare_model;  // with `model` = A: compare A with this model B on the items both evaluated
  int clusters = 10;          // top uncategorized message clusters
};

struct CategoryNode {
  std::string path;
  std::string description;
  int depth = 0;  // 0 for top-level categories
  int64_t count = 0;           // failures in this category and below
  double share_of_all = 0;     // count / report.total
  double share_of_parent = 0;  // count / the parent's count (top level: / report.total)
  double rate = 0;             // model: count / report.evaluated; corpus: 0
  // Categories with failures of their own: the corpus's stage rows by stage (a failure seen
  // at two stages is two rows), or a model's failed evaluations by first failing stage.
  std::map<std::string, int64_t> stages;
};

struct TrendPoint {
  int64_t bucket_ms = 0;
  std::string top_category;
  int64_t count = 0;  // failures dated in the bucket
};

struct FailureExample {
  std::string sample_id, stage, message;
  int64_t created_ms = 0;
};

// One category in the comparison of two windows.
struct ComparisonRow {
  std::string path;
  int64_t count_a = 0, count_b = 0;
  double share_a = 0, share_b = 0;  // of the window's failures
  int64_t delta = 0;  // count_b - count_a
};

// One category in the comparison of two models on their common items.
struct ModelComparisonRow {
  std::string path;
  int64_t count_a = 0, count_b = 0;  // common items the model failed with this category (or below)
  double rate_a = 0, rate_b = 0;     // count / common items
  int64_t delta = 0;                 // count_b - count_a
};

struct ModelComparison {
  std::string model_a, model_b;
  int64_t common_items = 0;  // items both models evaluated, under the filters
  int64_t passed_a = 0, passed_b = 0;
  int64_t failed_a = 0, failed_b = 0;  // failed on common items (under the stage filter)
  double accuracy_a = 0, accuracy_b = 0;  // passed / common items
  std::vector<ModelComparisonRow> rows;  // largest growth (B over A) first, largest shrink last
};

struct MessageCluster {
  std::string normalized, example_message, example_sample_id, category;
  int64_t count = 0;
};

struct TaxonomyReport {
  TaxonomyQuery query;
  int64_t total = 0;           // corpus: (sample, category) failures; model: failed evaluations
  int64_t failed_samples = 0;  // distinct samples among those failures
  int64_t evaluated = 0;       // model: its evaluations under the filters other than stage
  int64_t passed = 0;          // model: those that passed
  std::vector<CategoryNode> tree;  // pre-order: parents before children, largest first
  std::vector<TrendPoint> trend;
  std::map<std::string, std::vector<FailureExample>> examples;  // by leaf category; corpus: stage rows
  std::string compare_label_a, compare_label_b;
  int64_t compare_total_a = 0, compare_total_b = 0;
  std::vector<ComparisonRow> comparison;  // largest growth first, largest shrink last
  std::optional<ModelComparison> model_comparison;
  std::vector<MessageCluster> uncategorized_clusters;
};

// The report for the query; an unknown model name (model or compare_model) is an error naming it.
Result<TaxonomyReport> taxonomy_report(Database& db, const TaxonomyQuery& query);
nlohmann::json taxonomy_report_to_json(const TaxonomyReport& report);
// A human table: the tree indented by depth with counts and shares, then trend, examples,
// comparisons and clusters where asked for.
std::string format_taxonomy_table(const TaxonomyReport& report);

// Parses CLI flags / HTTP query parameters (same keys): since, until, stage, track, model,
// origin, domain, feature, trend, examples, compare_since, compare_until, compare_model,
// clusters. Times are durations before `now_ms` (48h, 30m, 7d, 90s, 2w) or Unix milliseconds.
// compare_model needs model, and excludes compare_since/compare_until.
Result<TaxonomyQuery> taxonomy_query_from_args(const std::map<std::string, std::string>& args,
                                               int64_t now = now_ms());

// A time as the CLI and HTTP API take it: "48h", "30m", "7d", "90s" or "2w" before `now`, or Unix
// milliseconds. Errors name `key`.
Result<int64_t> parse_time_bound(const std::string& key, const std::string& text, int64_t now);

}  // namespace tailforge
