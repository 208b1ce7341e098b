// Storing categorized failures (the `failure` and `category` tables). The taxonomy report over
// them: the corpus's in corpus_taxonomy.cpp, a model's in model_taxonomy.cpp, the steps both
// share in taxonomy_internal.cpp, the printable forms in failures_format.cpp.
#include "store/failures.h"

#include <algorithm>
#include <limits>
#include <set>

#include "store/category_path.h"
#include "text/regex.h"

namespace tailforge {
namespace {

struct StageRow {
  int64_t id = 0;
  std::string stage, category;
  int64_t created_ms = 0;
  int64_t stored_novelty = -1;  // -1: not stored yet
  int64_t novelty = 0;
};

constexpr int64_t kNewRow = std::numeric_limits<int64_t>::max();  // a new row's id is above every stored one

// In the order the rows happened (time, then id): the first is the sample's first failure (2),
// the first of each other category a new failure (1), the rest repeats at later stages (0).
// The same rule as the backfill of schema version 5.
void assign_novelty(std::vector<StageRow>& rows) {
  std::sort(rows.begin(), rows.end(), [](const StageRow& a, const StageRow& b) {
    return a.created_ms != b.created_ms ? a.created_ms < b.created_ms : a.id < b.id;
  });
  std::set<std::string> seen;
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].novelty = i == 0 ? 2 : seen.count(rows[i].category) ? 0 : 1;
    seen.insert(rows[i].category);
  }
}

}  // namespace

Status delete_stage_failure(Database& db, const std::string& sample_id, const std::string& stage) {
  return db.cached("DELETE FROM failure WHERE sample_id = ?1 AND stage = ?2").bind(1, sample_id).bind(2, stage).run();
}

Status insert_failure(Database& db, const FailureRecord& f) {
  int64_t created_ms = f.created_ms ? f.created_ms : now_ms();
  Statement& select = db.cached("SELECT id, stage, category, created_ms, novelty FROM failure WHERE sample_id = ?1");
  select.bind(1, f.sample_id);
  std::vector<StageRow> rows;
  bool replaces = false;
  while (select.step()) {
    StageRow row{select.int64(0), select.text(1), select.text(2), select.int64(3), select.int64(4)};
    if (row.stage == f.stage) {
      row.category = f.category;  // the upsert below keeps the row's id and time
      replaces = true;
    }
    rows.push_back(row);
  }
  if (Status s = select.finish(); !s) return make_error("insert_failure(" + f.sample_id + "): " + s.message());
  if (!replaces) rows.push_back({kNewRow, f.stage, f.category, created_ms, -1});
  assign_novelty(rows);
  int64_t novelty = 0;
  for (const StageRow& row : rows) {
    if (row.stage == f.stage) novelty = row.novelty;
  }

  Statement& statement = db.cached(
      "INSERT INTO failure (sample_id, verification_id, stage, category, top_category, message, evidence_file, "
      "evidence_line, track, origin, domain, agent, model_id, created_ms, novelty) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
      "ON CONFLICT (sample_id, stage) DO UPDATE SET verification_id = excluded.verification_id, "
      "category = excluded.category, top_category = excluded.top_category, message = excluded.message, "
      "evidence_file = excluded.evidence_file, evidence_line = excluded.evidence_line, agent = excluded.agent, "
      "model_id = excluded.model_id, novelty = excluded.novelty");
  statement.bind(1, f.sample_id).bind(2, f.verification_id).bind(3, f.stage).bind(4, f.category);
  statement.bind(5, category_top(f.category)).bind(6, f.message).bind(7, f.evidence_file).bind(8, f.evidence_line);
  statement.bind(9, f.track).bind(10, f.origin).bind(11, f.domain).bind(12, f.agent).bind(13, f.model_id);
  statement.bind(14, created_ms).bind(15, novelty);
  Status s = statement.run();
  if (!s) return make_error("insert_failure(" + f.sample_id + ", " + f.stage + "): " + s.message());
  // A row stored out of order or re-categorized can change what the sample's other rows add.
  for (const StageRow& row : rows) {
    if (row.stage == f.stage || row.novelty == row.stored_novelty) continue;
    Statement& update = db.cached("UPDATE failure SET novelty = ?2 WHERE id = ?1");
    update.bind(1, row.id).bind(2, row.novelty);
    if (Status u = update.run(); !u) return make_error("insert_failure(" + f.sample_id + "): " + u.message());
  }
  return {};
}

Status upsert_categories(Database& db, const std::map<std::string, std::string>& descriptions) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  for (const auto& [path, description] : descriptions) {
    Statement& statement = db.cached(
        "INSERT INTO category (path, parent, description) VALUES (?, ?, ?) "
        "ON CONFLICT (path) DO UPDATE SET parent = excluded.parent, description = excluded.description");
    std::string parent = category_parent(path);
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
  static const std::vector<std::pair<text::Regex, std::string>> masks = [] {
    return std::vector<std::pair<text::Regex, std::string>>{
        {text::Regex(R"('[^'\n]*'|"[^"\n]*"|`[^'`\n]*'|\xE2\x80\x98[^\n]*?\xE2\x80\x99)"), "'<id>'"},
        {text::Regex(R"((?:[A-Za-z]:)?[\w.+-]*/[\w./+-]*)"), "<path>"},
        {text::Regex(R"([\w+-]+\.(?:cu|hip|cpp|cc|c|h|hpp|cuh|s|S|ptx|ll|bc|o|py)\b)"), "<path>"},
        {text::Regex(R"(\b0[xX][0-9A-Fa-f]+\b)"), "<hex>"},
        {text::Regex(R"(\b[0-9a-f]{8,}\b)"), "<hex>"},
        {text::Regex(R"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"), "<n>"},
        {text::Regex(R"([ \t]+)"), " "},
    };
  }();
  if (message.size() > 4096) message.resize(4096);
  for (const auto& [pattern, replacement] : masks) message = text::regex_replace(message, pattern, replacement);
  size_t begin = message.find_first_not_of(' ');
  size_t end = message.find_last_not_of(' ');
  return begin == std::string::npos ? "" : message.substr(begin, end - begin + 1);
}

}  // namespace tailforge
