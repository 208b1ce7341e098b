// The corpus's failure taxonomy (`tailforge taxonomy`, GET /v1/taxonomy): its rows, counts and
// tree, the trend, examples, the comparison of two windows and message clusters.
#include "store/failures.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "store/category_path.h"
#include "store/taxonomy_internal.h"

namespace tailforge {

using namespace taxonomy_internal;

namespace {

Rows corpus_rows(const TaxonomyQuery& q, std::optional<int64_t> since, std::optional<int64_t> until) {
  Rows rows{.table = "failure",
            .covered_table = "failure INDEXED BY failure_track_time_novelty",
            .category = "category",
            .stage = "stage",
            .novelty = "novelty",
            .top = "top_category"};
  add_item_filters(rows.all, q, since, until, true);
  add_stage_filter(rows.all, q);
  rows.failures = rows.all;
  rows.failures.add("novelty >= 1");
  return rows;
}

struct Counts {
  std::map<std::string, int64_t> leaves;                         // failures by category
  std::map<std::string, std::map<std::string, int64_t>> stages;  // rows by category and stage
  int64_t new_samples = 0;                                       // rows of novelty 2
};

Result<Counts> count_rows(Database& db, const Rows& rows) {
  // With filters on the sample, "+category" keeps the planner off the (category, stage, ...)
  // index, which would look up every row for them; the filter's own index is then used. A time
  // window or a stage prefix alone is read from that index (a skip-scan over its prefixes).
  std::string plus = rows.all.by_sample ? "+" : "";
  std::string columns = rows.category + ", " + rows.stage + ", " + rows.novelty;
  Result<Statement> statement =
      db.prepare("SELECT " + columns + ", COUNT(*) FROM " + rows.table + rows.all.where() + " GROUP BY " + plus +
                 rows.category + ", " + plus + rows.stage + ", " + plus + rows.novelty);
  if (!statement) return statement.error();
  rows.all.bind(*statement);
  Counts counts;
  while (statement->step()) {
    std::string category = statement->text(0);
    int64_t novelty = statement->int64(2), count = statement->int64(3);
    counts.stages[category][statement->text(1)] += count;
    if (novelty >= 1) counts.leaves[category] += count;
    if (novelty == 2) counts.new_samples += count;
  }
  if (!statement->status()) return statement->status().error();
  return counts;
}

Result<int64_t> count_failed_samples(Database& db, const TaxonomyQuery& q, const Rows& rows, const Counts& counts) {
  // Without a stage or time filter every failed sample's first failure row is counted, once.
  if (rows.sample_per_failure || (q.stage_prefix.empty() && !q.since_ms && !q.until_ms)) return counts.new_samples;
  Result<Statement> statement = db.prepare("SELECT COUNT(DISTINCT sample_id) FROM " + rows.covered_table + rows.failures.where());
  if (!statement) return statement.error();
  rows.failures.bind(*statement);
  int64_t samples = statement->step() ? statement->int64(0) : 0;
  if (!statement->status()) return statement->status().error();
  return samples;
}

Result<std::map<std::string, std::string>> category_descriptions(Database& db) {
  Statement& statement = db.cached("SELECT path, description FROM category");
  std::map<std::string, std::string> out;
  while (statement.step()) out[statement.text(0)] = statement.text(1);
  if (!statement.status()) return statement.status().error();
  return out;
}

void build_tree(TaxonomyReport& report, const Counts& counts, const std::map<std::string, std::string>& descriptions) {
  std::map<std::string, int64_t> all = rolled_up(counts.leaves);
  std::map<std::string, std::vector<std::string>> children;
  for (const auto& [path, count] : all) children[category_parent(path)].push_back(path);
  auto visit = [&](auto&& self, const std::string& parent, int depth) -> void {
    auto it = children.find(parent);
    if (it == children.end()) return;
    std::vector<std::string> kids = it->second;
    std::sort(kids.begin(), kids.end(), [&](const std::string& a, const std::string& b) {
      return all.at(a) != all.at(b) ? all.at(a) > all.at(b) : a < b;
    });
    for (const std::string& path : kids) {
      CategoryNode node;
      node.path = path;
      auto d = descriptions.find(path);
      if (d != descriptions.end()) node.description = d->second;
      node.depth = depth;
      node.count = all.at(path);
      node.share_of_all = ratio(node.count, report.total);
      node.share_of_parent = ratio(node.count, parent.empty() ? report.total : all.at(parent));
      if (!report.query.model.empty()) node.rate = ratio(node.count, report.evaluated);
      if (counts.leaves.count(path)) node.stages = counts.stages.at(path);
      report.tree.push_back(node);
      self(self, path, depth + 1);
    }
  };
  visit(visit, "", 0);
}

Status add_trend(Database& db, TaxonomyReport& report, const Rows& rows) {
  // Counted here rather than by GROUP BY: SQLite would sort every row by bucket first (a million
  // rows take over 300 ms that way), while the buckets and top categories are few.
  int64_t bucket = report.query.trend == "day" ? 86400000LL : 3600000LL;
  // The corpus under a time window alone is read from the narrow (novelty, time, top) index.
  const TaxonomyQuery& q = report.query;
  bool time_only = rows.table == "failure" && !rows.failures.by_sample && q.stage_prefix.empty();
  std::string table = time_only ? "failure INDEXED BY failure_novelty_time" : rows.covered_table;
  Result<Statement> statement = db.prepare("SELECT created_ms, " + rows.top + " FROM " + table + rows.failures.where());
  if (!statement) return statement.error();
  rows.failures.bind(*statement);
  std::map<std::pair<int64_t, std::string>, int64_t> counts;
  while (statement->step()) ++counts[{statement->int64(0) / bucket * bucket, statement->text(1)}];
  if (!statement->status()) return statement->status();
  for (const auto& [key, count] : counts) report.trend.push_back({key.first, key.second, count});
  return {};
}

Status add_examples(Database& db, TaxonomyReport& report, const Rows& rows, const std::map<std::string, int64_t>& leaves) {
  Filter by_category = rows.all;
  by_category.add_text(rows.category + " = ?", "");
  int category_index = static_cast<int>(by_category.values.size());
  Result<Statement> statement =
      db.prepare("SELECT sample_id, " + rows.stage + ", coalesce(message, ''), created_ms FROM " + rows.table +
                 by_category.where() + " ORDER BY created_ms DESC LIMIT " + std::to_string(report.query.examples));
  if (!statement) return statement.error();
  for (const auto& [category, count] : leaves) {
    statement->reset();
    by_category.bind(*statement);
    statement->bind(category_index, category);
    std::vector<FailureExample>& out = report.examples[category];
    while (statement->step()) {
      out.push_back({statement->text(0), statement->text(1), statement->text(2), statement->int64(3)});
    }
    if (!statement->status()) return statement->status();
  }
  return {};
}

Status add_window_comparison(Database& db, TaxonomyReport& report, const Rows& a, const Rows& b) {
  report.compare_label_a = "main window";
  report.compare_label_b = "compare window";
  Result<Counts> counts_a = count_rows(db, a);
  if (!counts_a) return counts_a.error();
  Result<Counts> counts_b = count_rows(db, b);
  if (!counts_b) return counts_b.error();
  report.compare_total_a = sum(counts_a->leaves);
  report.compare_total_b = sum(counts_b->leaves);
  report.comparison = compare_counts(counts_a->leaves, counts_b->leaves, report.compare_total_a,
                                     report.compare_total_b, &ComparisonRow::share_a, &ComparisonRow::share_b);
  return {};
}

Status add_clusters(Database& db, TaxonomyReport& report, const Rows& rows, const std::map<std::string, int64_t>& leaves) {
  // The uncategorized categories among the counted ones, looked up by category (a LIKE on the
  // suffix would read every failure row); none, and there is nothing to cluster.
  std::vector<std::string> uncategorized_paths;
  const std::string suffix = ".uncategorized";
  for (const auto& [path, count] : leaves) {
    if (path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      uncategorized_paths.push_back(path);
    }
  }
  if (uncategorized_paths.empty()) return {};
  Filter uncategorized = rows.failures;
  std::string in = rows.category + " IN (";
  for (size_t i = 0; i < uncategorized_paths.size(); ++i) in += i ? ", ?" : "?";
  uncategorized.add(in + ")");
  for (const std::string& path : uncategorized_paths) uncategorized.values.push_back(path);
  Result<Statement> statement = db.prepare("SELECT coalesce(message, ''), sample_id, " + rows.category + " FROM " +
                                           rows.table + uncategorized.where() + " ORDER BY created_ms DESC LIMIT 20000");
  if (!statement) return statement.error();
  uncategorized.bind(*statement);
  std::unordered_map<std::string, MessageCluster> clusters;
  while (statement->step()) {
    std::string message = statement->text(0);
    std::string key = normalize_failure_message(message);
    MessageCluster& cluster = clusters[key];
    if (cluster.count++ == 0) {
      cluster.normalized = key;
      cluster.example_message = message;
      cluster.example_sample_id = statement->text(1);
      cluster.category = statement->text(2);
    }
  }
  if (!statement->status()) return statement->status();
  for (auto& [key, cluster] : clusters) report.uncategorized_clusters.push_back(std::move(cluster));
  std::sort(report.uncategorized_clusters.begin(), report.uncategorized_clusters.end(),
            [](const MessageCluster& a, const MessageCluster& b) {
              return a.count != b.count ? a.count > b.count : a.normalized < b.normalized;
            });
  if (report.uncategorized_clusters.size() > static_cast<size_t>(std::max(0, report.query.clusters))) {
    report.uncategorized_clusters.resize(static_cast<size_t>(std::max(0, report.query.clusters)));
  }
  return {};
}

// One stored stage row of a sample, for deciding what each row adds to the counts.

}  // namespace

Result<TaxonomyReport> taxonomy_report(Database& db, const TaxonomyQuery& query) {
  TaxonomyReport report;
  report.query = query;
  if (!query.compare_model.empty() && query.model.empty()) {
    return make_error("taxonomy: compare_model=" + query.compare_model + " needs model=A to compare with");
  }
  std::optional<int64_t> model_id;
  if (!query.model.empty()) {
    Result<int64_t> id = model_id_named(db, query.model);
    if (!id) return id.error();
    model_id = *id;
  }
  auto rows_for = [&](std::optional<int64_t> since, std::optional<int64_t> until) {
    return model_id ? model_rows(query, *model_id, since, until) : corpus_rows(query, since, until);
  };
  Rows rows = rows_for(query.since_ms, query.until_ms);
  Result<Counts> counts = count_rows(db, rows);
  if (!counts) return make_error("taxonomy counts: " + counts.message());
  report.total = sum(counts->leaves);
  Result<int64_t> failed_samples = count_failed_samples(db, query, rows, *counts);
  if (!failed_samples) return make_error("taxonomy failed samples: " + failed_samples.message());
  report.failed_samples = *failed_samples;
  if (model_id) {
    if (Status s = count_evaluated(db, report, *model_id); !s) return make_error("taxonomy evaluated: " + s.message());
  }
  Result<std::map<std::string, std::string>> descriptions = category_descriptions(db);
  if (!descriptions) return descriptions.error();
  build_tree(report, *counts, *descriptions);
  if (query.trend == "hour" || query.trend == "day") {
    if (Status s = add_trend(db, report, rows); !s) return make_error("taxonomy trend: " + s.message());
  }
  if (query.examples > 0) {
    if (Status s = add_examples(db, report, rows, counts->leaves); !s) return make_error("taxonomy examples: " + s.message());
  }
  if (query.compare_since_ms || query.compare_until_ms) {
    Status s = add_window_comparison(db, report, rows, rows_for(query.compare_since_ms, query.compare_until_ms));
    if (!s) return make_error("taxonomy comparison: " + s.message());
  }
  if (!query.compare_model.empty()) {
    Result<int64_t> other = model_id_named(db, query.compare_model);
    if (!other) return other.error();
    if (Status s = add_model_comparison(db, report, *model_id, *other); !s) {
      return make_error("taxonomy model comparison: " + s.message());
    }
  }
  if (query.clusters > 0) {
    if (Status s = add_clusters(db, report, rows, counts->leaves); !s) return make_error("taxonomy clusters: " + s.message());
  }
  return report;
}

}  // namespace tailforge
