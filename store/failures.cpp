#include "store/failures.h"

#include <algorithm>
#include <regex>
#include <unordered_map>
#include <variant>

namespace tailforge {

namespace {

std::string top_of(const std::string& path) { return path.substr(0, path.find('.')); }

std::string parent_of(const std::string& path) {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

// A WHERE clause built from a query's filters, with its bind values in order.
struct Filter {
  std::string sql;  // " WHERE ..." or ""
  std::vector<std::variant<std::string, int64_t>> values;
  bool beyond_time = false;  // filters on more than the time window

  void add(const std::string& condition) { sql += (sql.empty() ? " WHERE " : " AND ") + condition; }
  void add_text(const std::string& condition, const std::string& value) {
    add(condition);
    values.emplace_back(value);
  }
  void add_int(const std::string& condition, int64_t value) {
    add(condition);
    values.emplace_back(value);
  }
  void bind(Statement& statement) const {
    for (size_t i = 0; i < values.size(); ++i) {
      int index = static_cast<int>(i) + 1;
      if (const auto* text = std::get_if<std::string>(&values[i])) {
        statement.bind(index, *text);
      } else {
        statement.bind(index, std::get<int64_t>(values[i]));
      }
    }
  }
};

Filter make_filter(const TaxonomyQuery& q, std::optional<int64_t> since, std::optional<int64_t> until,
                   const std::string& model) {
  Filter f;
  if (since) f.add_int("created_ms >= ?", *since);
  if (until) f.add_int("created_ms < ?", *until);
  f.beyond_time = !q.stage_prefix.empty() || !q.track.empty() || !q.origin.empty() || !q.domain.empty() ||
                  !model.empty() || !q.feature.empty();
  if (!q.stage_prefix.empty()) {
    f.add_text("stage >= ?", q.stage_prefix);
    f.add_text("stage < ?", q.stage_prefix + "\xff");
  }
  if (!q.track.empty()) f.add_text("track = ?", q.track);
  if (!q.origin.empty()) f.add_text("origin = ?", q.origin);
  if (!q.domain.empty()) f.add_text("domain = ?", q.domain);
  if (!model.empty()) f.add_text("model_id = (SELECT id FROM model WHERE name = ?)", model);
  if (!q.feature.empty()) f.add_text("sample_id IN (SELECT sample_id FROM sample_feature WHERE tag = ?)", q.feature);
  return f;
}

Filter main_filter(const TaxonomyQuery& q) { return make_filter(q, q.since_ms, q.until_ms, q.model); }

Result<std::map<std::string, int64_t>> counts_by_category(Database& db, const Filter& filter) {
  // With filters beyond time, "+category" keeps the planner off the (category, created_ms) index,
  // whose skip-scan would look up every row; the filter's own index is then used.
  Result<Statement> statement = db.prepare("SELECT category, COUNT(*) FROM failure" + filter.sql +
                                           (filter.beyond_time ? " GROUP BY +category" : " GROUP BY category"));
  if (!statement) return statement.error();
  filter.bind(*statement);
  std::map<std::string, int64_t> counts;
  while (statement->step()) counts[statement->text(0)] = statement->int64(1);
  if (!statement->status()) return statement->status().error();
  return counts;
}

// Leaf counts rolled up into every parent path.
std::map<std::string, int64_t> rolled_up(const std::map<std::string, int64_t>& leaves) {
  std::map<std::string, int64_t> all;
  for (const auto& [path, count] : leaves) {
    for (std::string p = path; !p.empty(); p = parent_of(p)) all[p] += count;
  }
  return all;
}

Result<std::map<std::string, std::string>> category_descriptions(Database& db) {
  Statement& statement = db.cached("SELECT path, description FROM category");
  std::map<std::string, std::string> out;
  while (statement.step()) out[statement.text(0)] = statement.text(1);
  if (!statement.status()) return statement.status().error();
  return out;
}

void build_tree(TaxonomyReport& report, const std::map<std::string, int64_t>& all,
                const std::map<std::string, std::string>& descriptions) {
  std::map<std::string, std::vector<std::string>> children;
  for (const auto& [path, count] : all) children[parent_of(path)].push_back(path);
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
      node.share_of_all = report.total ? double(node.count) / double(report.total) : 0;
      int64_t parent_count = parent.empty() ? report.total : all.at(parent);
      node.share_of_parent = parent_count ? double(node.count) / double(parent_count) : 0;
      report.tree.push_back(node);
      self(self, path, depth + 1);
    }
  };
  visit(visit, "", 0);
}

Status add_trend(Database& db, TaxonomyReport& report, const Filter& filter) {
  int64_t bucket = report.query.trend == "day" ? 86400000LL : 3600000LL;
  std::string sql = "SELECT (created_ms / " + std::to_string(bucket) + ") * " + std::to_string(bucket) +
                    " AS bucket, top_category, COUNT(*) FROM failure" + filter.sql + " GROUP BY bucket, top_category ORDER BY bucket, top_category";
  Result<Statement> statement = db.prepare(sql);
  if (!statement) return statement.error();
  filter.bind(*statement);
  while (statement->step()) report.trend.push_back({statement->int64(0), statement->text(1), statement->int64(2)});
  return statement->status();
}

Status add_examples(Database& db, TaxonomyReport& report, const Filter& filter,
                    const std::map<std::string, int64_t>& leaves) {
  Filter by_category = filter;
  by_category.add_text("category = ?", "");
  int category_index = static_cast<int>(by_category.values.size());
  Result<Statement> statement = db.prepare("SELECT sample_id, stage, message, created_ms FROM failure" + by_category.sql +
                                           " ORDER BY created_ms DESC LIMIT " + std::to_string(report.query.examples));
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

Status add_comparison(Database& db, TaxonomyReport& report) {
  const TaxonomyQuery& q = report.query;
  Filter a, b;
  if (q.compare_models.size() == 2) {
    a = make_filter(q, q.since_ms, q.until_ms, q.compare_models[0]);
    b = make_filter(q, q.since_ms, q.until_ms, q.compare_models[1]);
    report.compare_label_a = "model " + q.compare_models[0];
    report.compare_label_b = "model " + q.compare_models[1];
  } else {
    a = main_filter(q);
    b = make_filter(q, q.compare_since_ms, q.compare_until_ms, q.model);
    report.compare_label_a = "main window";
    report.compare_label_b = "compare window";
  }
  Result<std::map<std::string, int64_t>> leaves_a = counts_by_category(db, a);
  if (!leaves_a) return leaves_a.error();
  Result<std::map<std::string, int64_t>> leaves_b = counts_by_category(db, b);
  if (!leaves_b) return leaves_b.error();
  std::map<std::string, int64_t> all_a = rolled_up(*leaves_a), all_b = rolled_up(*leaves_b);
  for (const auto& [path, count] : *leaves_a) report.compare_total_a += count;
  for (const auto& [path, count] : *leaves_b) report.compare_total_b += count;
  std::map<std::string, ComparisonRow> rows;
  for (const auto& [path, count] : all_a) rows[path].count_a = count;
  for (const auto& [path, count] : all_b) rows[path].count_b = count;
  for (auto& [path, row] : rows) {
    row.path = path;
    row.share_a = report.compare_total_a ? double(row.count_a) / double(report.compare_total_a) : 0;
    row.share_b = report.compare_total_b ? double(row.count_b) / double(report.compare_total_b) : 0;
    row.delta = row.count_b - row.count_a;
    report.comparison.push_back(row);
  }
  std::sort(report.comparison.begin(), report.comparison.end(), [](const ComparisonRow& x, const ComparisonRow& y) {
    return x.delta != y.delta ? x.delta > y.delta : x.path < y.path;
  });
  return {};
}

Status add_clusters(Database& db, TaxonomyReport& report, const Filter& filter) {
  Filter uncategorized = filter;
  uncategorized.add("category LIKE '%.uncategorized'");
  Result<Statement> statement = db.prepare("SELECT message, sample_id, category FROM failure" + uncategorized.sql +
                                           " ORDER BY created_ms DESC LIMIT 20000");
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

}  // namespace

Status insert_failure(Database& db, const FailureRecord& f) {
  Statement& statement = db.cached(
      "INSERT INTO failure (sample_id, verification_id, stage, category, top_category, message, evidence_file, "
      "evidence_line, track, origin, domain, agent, model_id, created_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
      "ON CONFLICT (sample_id, stage) DO UPDATE SET verification_id = excluded.verification_id, "
      "category = excluded.category, top_category = excluded.top_category, message = excluded.message, "
      "evidence_file = excluded.evidence_file, evidence_line = excluded.evidence_line, agent = excluded.agent, "
      "model_id = excluded.model_id");
  statement.bind(1, f.sample_id).bind(2, f.verification_id).bind(3, f.stage).bind(4, f.category);
  statement.bind(5, top_of(f.category)).bind(6, f.message).bind(7, f.evidence_file).bind(8, f.evidence_line);
  statement.bind(9, f.track).bind(10, f.origin).bind(11, f.domain).bind(12, f.agent).bind(13, f.model_id);
  statement.bind(14, f.created_ms ? f.created_ms : now_ms());
  Status s = statement.run();
  if (!s) return make_error("insert_failure(" + f.sample_id + ", " + f.stage + "): " + s.message());
  return {};
}

Status upsert_categories(Database& db, const std::map<std::string, std::string>& descriptions) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  for (const auto& [path, description] : descriptions) {
    Statement& statement = db.cached(
        "INSERT INTO category (path, parent, description) VALUES (?, ?, ?) "
        "ON CONFLICT (path) DO UPDATE SET parent = excluded.parent, description = excluded.description");
    std::string parent = parent_of(path);
    statement.bind(1, path).bind(3, description);
    if (parent.empty()) {
      statement.bind_null(2);
    } else {
      statement.bind(2, parent);
    }
    if (Status s = statement.run(); !s) return s;
  }
  return transaction.commit();
}

std::string normalize_failure_message(std::string message) {
  static const std::vector<std::pair<std::regex, std::string>> masks = [] {
    auto flags = std::regex::ECMAScript | std::regex::optimize;
    return std::vector<std::pair<std::regex, std::string>>{
        {std::regex(R"('[^'\n]*'|"[^"\n]*"|`[^'`\n]*'|\xE2\x80\x98[^\n]*?\xE2\x80\x99)", flags), "'<id>'"},
        {std::regex(R"((?:[A-Za-z]:)?[\w.+-]*/[\w./+-]*)", flags), "<path>"},
        {std::regex(R"([\w+-]+\.(?:cu|hip|cpp|cc|c|h|hpp|cuh|s|S|ptx|ll|bc|o|py)\b)", flags), "<path>"},
        {std::regex(R"(\b0[xX][0-9A-Fa-f]+\b)", flags), "<hex>"},
        {std::regex(R"(\b[0-9a-f]{8,}\b)", flags), "<hex>"},
        {std::regex(R"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)", flags), "<n>"},
        {std::regex(R"([ \t]+)", flags), " "},
    };
  }();
  if (message.size() > 4096) message.resize(4096);
  try {
    for (const auto& [pattern, replacement] : masks) message = std::regex_replace(message, pattern, replacement);
  } catch (const std::exception&) {
    // a message too complex to mask stays as it is
  }
  size_t begin = message.find_first_not_of(' ');
  size_t end = message.find_last_not_of(' ');
  return begin == std::string::npos ? "" : message.substr(begin, end - begin + 1);
}

Result<TaxonomyReport> taxonomy_report(Database& db, const TaxonomyQuery& query) {
  TaxonomyReport report;
  report.query = query;
  Filter filter = main_filter(query);
  Result<std::map<std::string, int64_t>> leaves = counts_by_category(db, filter);
  if (!leaves) return make_error("taxonomy counts: " + leaves.message());
  for (const auto& [path, count] : *leaves) report.total += count;
  Result<std::map<std::string, std::string>> descriptions = category_descriptions(db);
  if (!descriptions) return descriptions.error();
  build_tree(report, rolled_up(*leaves), *descriptions);
  if (query.trend == "hour" || query.trend == "day") {
    if (Status s = add_trend(db, report, filter); !s) return make_error("taxonomy trend: " + s.message());
  }
  if (query.examples > 0) {
    if (Status s = add_examples(db, report, filter, *leaves); !s) return make_error("taxonomy examples: " + s.message());
  }
  if (query.compare_models.size() == 2 || query.compare_since_ms || query.compare_until_ms) {
    if (Status s = add_comparison(db, report); !s) return make_error("taxonomy comparison: " + s.message());
  }
  if (query.clusters > 0) {
    if (Status s = add_clusters(db, report, filter); !s) return make_error("taxonomy clusters: " + s.message());
  }
  return report;
}

}  // namespace tailforge
