// Internal to store/: what the corpus taxonomy (failures.cpp) and a model's taxonomy
// (model_taxonomy.cpp) share to build one TaxonomyReport: the WHERE clause of a query's filters,
// the rows a report counts, and leaf counts rolled up into their parents. Not part of the
// store's API: callers include store/failures.h.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "store/database.h"
#include "store/failures.h"

namespace tailforge::taxonomy_internal {

// A WHERE clause built from a query's filters, with its bind values in order.
struct Filter {
  std::vector<std::string> conditions;
  std::vector<std::variant<std::string, int64_t>> values;
  bool by_sample = false;  // filters on the sample: track, origin, domain or feature

  void add(const std::string& condition) { conditions.push_back(condition); }
  void add_text(const std::string& condition, const std::string& value) {
    add(condition);
    values.emplace_back(value);
  }
  void add_int(const std::string& condition, int64_t value) {
    add(condition);
    values.emplace_back(value);
  }
  // " WHERE a AND b", or "" without conditions.
  std::string where() const {
    std::string sql;
    for (const std::string& condition : conditions) sql += (sql.empty() ? " WHERE " : " AND ") + condition;
    return sql;
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

// The filters that select samples or items (not stages): time, track, origin, domain, feature.
// A model's evaluations reach origin and domain through the sample (sample_columns false).
void add_item_filters(Filter& f, const TaxonomyQuery& q, std::optional<int64_t> since, std::optional<int64_t> until,
                      bool sample_columns);
void add_stage_filter(Filter& f, const TaxonomyQuery& q);

// The rows one report counts: the corpus's stage rows, or one model's failed evaluations.
// `novelty` says what a row adds: 2 a new failed sample, 1 a new (sample, category) failure of
// a sample that already failed, 0 a repeat of a failure at a later stage. An evaluation is
// always 2 (one per item).
struct Rows {
  std::string table;  // what the counts, examples and clusters read: the table, or it with its index
  // What the trend and the distinct failed samples read. The corpus names its covering (track,
  // time, ...) index, which the planner passes over for a window alone and then looks up every
  // row in the window instead.
  std::string covered_table;
  std::string category, stage, novelty, top;  // columns, as SELECT expressions
  Filter all;       // every row under the filters: stage rows or failed evaluations
  Filter failures;  // one row per failure: the failure's first stage row, or the evaluation
  bool sample_per_failure = false;  // each failure is a distinct sample (a model's evaluations)
};

// Leaf counts rolled up into every parent path.
std::map<std::string, int64_t> rolled_up(const std::map<std::string, int64_t>& leaves);
int64_t sum(const std::map<std::string, int64_t>& counts);
double ratio(int64_t count, int64_t of);  // 0 when `of` is 0

// The comparison of two sides' leaf counts, rolled up: one Row (ComparisonRow or
// ModelComparisonRow) per path with count_a, count_b, delta and each side's count as a fraction
// of `of_a` / `of_b` in the fields fraction_a / fraction_b; largest growth first, ties by path.
template <typename Row>
std::vector<Row> compare_counts(const std::map<std::string, int64_t>& leaves_a,
                                const std::map<std::string, int64_t>& leaves_b, int64_t of_a, int64_t of_b,
                                double Row::*fraction_a, double Row::*fraction_b) {
  std::map<std::string, Row> rows;
  for (const auto& [path, count] : rolled_up(leaves_a)) rows[path].count_a = count;
  for (const auto& [path, count] : rolled_up(leaves_b)) rows[path].count_b = count;
  std::vector<Row> out;
  for (auto& [path, row] : rows) {
    row.path = path;
    row.*fraction_a = ratio(row.count_a, of_a);
    row.*fraction_b = ratio(row.count_b, of_b);
    row.delta = row.count_b - row.count_a;
    out.push_back(row);
  }
  std::sort(out.begin(), out.end(),
            [](const Row& x, const Row& y) { return x.delta != y.delta ? x.delta > y.delta : x.path < y.path; });
  return out;
}

// The model side (model_taxonomy.cpp).

// The id of the model named `name`; an error naming it when there is none.
Result<int64_t> model_id_named(Database& db, const std::string& name);
// The model's failed evaluations under the query's filters, dated in [since, until).
Rows model_rows(const TaxonomyQuery& q, int64_t model_id, std::optional<int64_t> since, std::optional<int64_t> until);
// Sets report.evaluated and report.passed: the model's evaluations under the item filters (not the stage).
Status count_evaluated(Database& db, TaxonomyReport& report, int64_t model_id);
// Sets report.model_comparison: models A and B (report.query.model, compare_model) on the items both evaluated.
Status add_model_comparison(Database& db, TaxonomyReport& report, int64_t model_a, int64_t model_b);

}  // namespace tailforge::taxonomy_internal
