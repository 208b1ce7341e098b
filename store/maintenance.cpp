#include "store/maintenance.h"

#include "text/regex.h"

namespace tailforge {

namespace {

// Children before parents, so foreign keys hold at every step.
const char* kClearDataset = R"sql(
DELETE FROM failure;
DELETE FROM evaluation_stage;
DELETE FROM evaluation;
DELETE FROM eval_item;
DELETE FROM trained_sample;
DELETE FROM lineage;
DELETE FROM sample_artifact;
DELETE FROM artifact;
DELETE FROM verification;
DELETE FROM sample_feature;
DELETE FROM sample_lsh;
DELETE FROM sample_signature;
DELETE FROM sample_lsh_progress;
DELETE FROM deferred_sample_status;
DELETE FROM sample;
DELETE FROM tail_report;
UPDATE model SET retrain_event_id = NULL;
DELETE FROM retrain_event;
DELETE FROM job;
DELETE FROM cycle;
)sql";

}  // namespace

Status clear_dataset_keep_cache(Database& db) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  if (Status cleared = db.exec(kClearDataset); !cleared) {
    return make_error("clearing the dataset of " + db.path() + ": " + cleared.message());
  }
  return transaction.commit();
}

Result<std::vector<std::string>> integrity_problems(Database& db) {
  Result<Statement> check = db.prepare("PRAGMA quick_check");
  if (!check) return check.error();
  std::vector<std::string> lines;
  while (check->step()) lines.push_back(check->text(0));
  if (!check->status()) return check->status().error();
  static const text::Regex null_value(R"(^NULL value in (\w+)\.(\w+)$)");
  std::vector<std::string> problems;
  for (const std::string& line : lines) {
    if (line == "ok") continue;
    text::Match match;
    if (text::regex_match(line, match, null_value)) {
      Result<Statement> nulls = db.prepare("SELECT count(*) FROM \"" + match[1].str() + "\" WHERE typeof(\"" +
                                           match[2].str() + "\") = 'null'");
      if (nulls && nulls->step() && nulls->int64(0) == 0) continue;
    }
    problems.push_back(line);
  }
  return problems;
}

}  // namespace tailforge
