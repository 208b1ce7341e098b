// A model's taxonomy, read from the `evaluation` table: the failed evaluations a report of one
// model counts (TaxonomyQuery.model), how many of its evaluations there were and passed, and
// the comparison of two models on the items both evaluated (TaxonomyQuery.compare_model).
// taxonomy_report (failures.cpp) calls these and does the counting, tree, trend and examples.
#include <string>

#include "store/models.h"
#include "store/taxonomy_internal.h"

namespace tailforge::taxonomy_internal {

namespace {

// A model's evaluations are read through evaluation_model_item, which holds every column the
// counts, the trend and the comparison need.
const char* kEvaluationTable = "evaluation INDEXED BY evaluation_model_item";

// One model's evaluations under the item filters (time, track, origin, domain, feature), in
// item order: sample id, ok, category, first failing stage.
Result<Statement> evaluations_by_item(Database& db, const TaxonomyQuery& q, int64_t model_id) {
  Filter items;
  items.add_int("model_id = ?", model_id);
  add_item_filters(items, q, q.since_ms, q.until_ms, false);
  Result<Statement> statement =
      db.prepare(std::string("SELECT sample_id, ok, coalesce(category, 'uncategorized'), coalesce(stage, '') FROM ") +
                 kEvaluationTable + items.where() + " ORDER BY sample_id");
  if (statement) items.bind(*statement);
  return statement;
}

}  // namespace

Result<int64_t> model_id_named(Database& db, const std::string& name) {
  Result<std::optional<ModelRecord>> model = find_model(db, name);
  if (!model) return model.error();
  if (!*model) return make_error("taxonomy: no model named '" + name + "'");
  return (*model)->id;
}

Rows model_rows(const TaxonomyQuery& q, int64_t model_id, std::optional<int64_t> since, std::optional<int64_t> until) {
  Rows rows{.table = kEvaluationTable,
            .covered_table = kEvaluationTable,
            .category = "coalesce(category, 'uncategorized')",
            .stage = "coalesce(stage, '')",
            .novelty = "2",
            .top = "coalesce(top_category, 'uncategorized')",
            .sample_per_failure = true};
  rows.all.add_int("model_id = ?", model_id);
  rows.all.add("ok = 0");
  add_item_filters(rows.all, q, since, until, false);
  add_stage_filter(rows.all, q);
  rows.failures = rows.all;
  return rows;
}

Status count_evaluated(Database& db, TaxonomyReport& report, int64_t model_id) {
  Filter items;
  items.add_int("model_id = ?", model_id);
  add_item_filters(items, report.query, report.query.since_ms, report.query.until_ms, false);
  Result<Statement> statement =
      db.prepare(std::string("SELECT COUNT(*), TOTAL(ok) FROM ") + kEvaluationTable + items.where());
  if (!statement) return statement.error();
  items.bind(*statement);
  if (statement->step()) {
    report.evaluated = statement->int64(0);
    report.passed = static_cast<int64_t>(statement->real(1));
  }
  return statement->status();
}

// Models A and B on the items both evaluated (both evaluations under the filters): A's and B's
// evaluations in item order, merged. A failure counts when its first failing stage is under
// the stage filter; accuracy is of all common items.
Status add_model_comparison(Database& db, TaxonomyReport& report, int64_t model_a, int64_t model_b) {
  const TaxonomyQuery& q = report.query;
  Result<Statement> a = evaluations_by_item(db, q, model_a);
  if (!a) return a.error();
  Result<Statement> b = evaluations_by_item(db, q, model_b);
  if (!b) return b.error();
  ModelComparison comparison;
  comparison.model_a = q.model;
  comparison.model_b = q.compare_model;
  std::map<std::string, int64_t> leaves_a, leaves_b;
  auto tally = [&](const Statement& e, int64_t& passed, std::map<std::string, int64_t>& leaves) {
    if (e.int64(1) != 0) {
      ++passed;
    } else if (e.text(3).compare(0, q.stage_prefix.size(), q.stage_prefix) == 0) {
      ++leaves[e.text(2)];
    }
  };
  bool more_a = a->step(), more_b = b->step();
  while (more_a && more_b) {
    int order = a->text(0).compare(b->text(0));
    if (order == 0) {
      ++comparison.common_items;
      tally(*a, comparison.passed_a, leaves_a);
      tally(*b, comparison.passed_b, leaves_b);
    }
    if (order <= 0) more_a = a->step();
    if (order >= 0) more_b = b->step();
  }
  if (!a->status()) return a->status();
  if (!b->status()) return b->status();
  comparison.failed_a = sum(leaves_a);
  comparison.failed_b = sum(leaves_b);
  comparison.accuracy_a = ratio(comparison.passed_a, comparison.common_items);
  comparison.accuracy_b = ratio(comparison.passed_b, comparison.common_items);
  comparison.rows = compare_counts(leaves_a, leaves_b, comparison.common_items, comparison.common_items,
                                   &ModelComparisonRow::rate_a, &ModelComparisonRow::rate_b);
  report.model_comparison = std::move(comparison);
  return {};
}

}  // namespace tailforge::taxonomy_internal
