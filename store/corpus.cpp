#include "store/corpus.h"

#include <nlohmann/json.hpp>

namespace tailforge {
namespace {

const char* kStageTop = "CASE WHEN instr(f.stage, '.') > 0 THEN substr(f.stage, 1, instr(f.stage, '.') - 1) ELSE f.stage END";

// (key, finished, failed) rows, then (key, stage, failed samples) rows.
// Appended to a WHERE on sample `s`: no failure of s is in a category of the JSON array ?2 of prefixes.
const char* const kNotExcluded =
    " AND NOT EXISTS (SELECT 1 FROM failure x, json_each(?2) p"
    " WHERE x.sample_id = s.id AND substr(x.category, 1, length(p.value)) = p.value)";

Result<std::map<std::string, YieldCounts>> yields(Database& db, const std::string& totals_sql,
                                                  const std::string& stages_sql, const std::string& track,
                                                  const std::vector<std::string>& excluded_prefixes) {
  const std::string excluded = nlohmann::json(excluded_prefixes).dump();
  std::map<std::string, YieldCounts> out;
  // Built from parts at run time, so prepared here rather than cached by pointer.
  Result<Statement> totals = db.prepare(totals_sql);
  if (!totals) return totals.error();
  totals->bind(1, track).bind(2, excluded);
  while (totals->step()) {
    YieldCounts& counts = out[totals->text(0)];
    counts.finished = totals->int64(1);
    counts.failed = totals->int64(2);
  }
  if (Status s = totals->finish(); !s) return s.error();
  Result<Statement> stages = db.prepare(stages_sql);
  if (!stages) return stages.error();
  stages->bind(1, track).bind(2, excluded);
  while (stages->step()) out[stages->text(0)].failed_by_stage[stages->text(1)] = stages->int64(2);
  if (Status s = stages->finish(); !s) return s.error();
  return out;
}

// yields() grouped by `key`, over the track's samples `s` joined with `join` and kept by `condition`.
Result<std::map<std::string, YieldCounts>> yields_by(Database& db, const std::string& key, const std::string& join,
                                                     const std::string& condition, const std::string& track,
                                                     const std::vector<std::string>& excluded_prefixes) {
  return yields(db,
                "SELECT " + key + ", SUM(s.status IN ('verified','failed')), SUM(s.status = 'failed') FROM sample s" +
                    join + " WHERE s.track = ?1" + condition + kNotExcluded + " GROUP BY 1",
                "SELECT " + key + ", " + kStageTop +
                    ", COUNT(DISTINCT f.sample_id) FROM failure f JOIN sample s ON s.id = f.sample_id" + join +
                    " WHERE s.track = ?1 AND s.status = 'failed'" + condition + kNotExcluded + " GROUP BY 1, 2",
                track, excluded_prefixes);
}

void read_retrain_event(const Statement& row, RetrainEventRecord& e) {
  read_row(row, e.id, e.cycle_id, e.reason, e.snapshot_hash, e.snapshot_dir, e.manifest, e.command, e.status, e.output,
           e.seconds, e.model_id, e.created_ms, e.parent_model_id, e.attempts);
}

// The answer of a SELECT EXISTS (...).
Result<bool> select_exists(Statement& select) {
  Result<int64_t> exists = single_int64(select);
  if (!exists) return exists.error();
  return *exists != 0;
}

const char* kRetrainColumns =
    "SELECT id, cycle_id, reason, snapshot_hash, snapshot_dir, manifest, command, status, output, seconds,"
    " model_id, created_ms, parent_model_id, attempts FROM retrain_event";

}  // namespace

Result<int64_t> verified_count(Database& db, const std::string& track) {
  return single_int64(db.cached("SELECT COUNT(*) FROM sample WHERE track = ?1 AND status = 'verified'").bind(1, track));
}

Result<int64_t> verified_count_all(Database& db) {
  return single_int64(db.cached("SELECT COUNT(*) FROM sample WHERE status = 'verified'"));
}

Result<std::map<std::string, int64_t>> verified_count_by_feature(Database& db, const std::string& track) {
  // From the track's verified samples (index on track, status) to their tags (index on sample_id):
  // CROSS JOIN keeps that order.
  return counts_by_key(db.cached("SELECT sf.tag, COUNT(*) FROM sample s CROSS JOIN sample_feature sf"
                                 " ON sf.sample_id = s.id WHERE s.track = ?1 AND s.status = 'verified' GROUP BY sf.tag")
                           .bind(1, track));
}

Result<std::map<std::string, int64_t>> verified_count_by_domain(Database& db, const std::string& track) {
  return counts_by_key(db.cached("SELECT domain, COUNT(*) FROM sample WHERE track = ?1 AND status = 'verified'"
                                 " AND domain IS NOT NULL GROUP BY domain")
                           .bind(1, track));
}

Result<std::vector<std::string>> features_seen(Database& db, const std::string& track) {
  return text_rows(db.cached("SELECT DISTINCT sf.tag FROM sample_feature sf JOIN sample s ON s.id = sf.sample_id"
                             " WHERE s.track = ?1 AND s.status IN ('verified','failed') ORDER BY sf.tag")
                       .bind(1, track));
}

Result<std::vector<std::string>> domains_seen(Database& db, const std::string& track) {
  return text_rows(db.cached("SELECT DISTINCT domain FROM sample WHERE track = ?1 AND status IN ('verified','failed')"
                             " AND domain IS NOT NULL ORDER BY domain")
                       .bind(1, track));
}

Result<YieldCounts> overall_yield(Database& db, const std::string& track,
                                  const std::vector<std::string>& excluded_prefixes) {
  Result<std::map<std::string, YieldCounts>> all = yields(
      db,
      std::string("SELECT 'all', COALESCE(SUM(s.status IN ('verified','failed')), 0),"
                  " COALESCE(SUM(s.status = 'failed'), 0) FROM sample s WHERE s.track = ?1") +
          kNotExcluded,
      std::string("SELECT 'all', ") + kStageTop +
          ", COUNT(DISTINCT f.sample_id) FROM failure f JOIN sample s ON s.id = f.sample_id"
          " WHERE s.track = ?1 AND s.status = 'failed'" + kNotExcluded + " GROUP BY 2",
      track, excluded_prefixes);
  if (!all) return all.error();
  return (*all)["all"];
}

Result<std::map<std::string, YieldCounts>> yield_by_feature(Database& db, const std::string& track,
                                                            const std::vector<std::string>& excluded_prefixes) {
  return yields_by(db, "sf.tag", " JOIN sample_feature sf ON sf.sample_id = s.id", "", track, excluded_prefixes);
}

Result<std::map<std::string, YieldCounts>> yield_by_domain(Database& db, const std::string& track,
                                                           const std::vector<std::string>& excluded_prefixes) {
  return yields_by(db, "s.domain", "", " AND s.domain IS NOT NULL", track, excluded_prefixes);
}

Result<std::vector<FailureCategoryCoverage>> failure_category_coverage(Database& db, const std::string& track) {
  Result<std::map<std::string, int64_t>> failed = counts_by_key(
      db.cached("SELECT category, COUNT(DISTINCT sample_id) FROM failure WHERE track = ?1 GROUP BY category")
          .bind(1, track));
  if (!failed) return failed.error();
  Result<std::map<std::string, int64_t>> covered = counts_by_key(
      db.cached("SELECT name, COUNT(DISTINCT child_id) FROM ("
                "  SELECT l.child_id,"
                "   CASE WHEN json_valid(l.reason) THEN json_extract(l.reason, '$.dimension') END AS dimension,"
                "   CASE WHEN json_valid(l.reason) THEN json_extract(l.reason, '$.name') END AS name"
                "  FROM lineage l JOIN sample c ON c.id = l.child_id"
                "  WHERE l.relation = 'synthesized_from' AND c.status = 'verified' AND c.track = ?1)"
                " WHERE dimension = 'category' AND name IS NOT NULL GROUP BY name")
          .bind(1, track));
  if (!covered) return covered.error();
  std::vector<FailureCategoryCoverage> out;
  for (const auto& [category, count] : *failed) {
    auto found = covered->find(category);
    out.push_back({category, count, found == covered->end() ? 0 : found->second});
  }
  return out;
}

Result<std::optional<int64_t>> newest_evaluated_model(Database& db, const std::string& track) {
  Statement& select = db.cached(
      "SELECT m.id FROM model m WHERE m.track = ?1 AND m.active = 1"
      " AND EXISTS (SELECT 1 FROM evaluation e WHERE e.model_id = m.id)"
      " ORDER BY m.created_ms DESC, m.id DESC LIMIT 1");
  select.bind(1, track);
  return first_row<int64_t>(select, [](const Statement& row, int64_t& id) { id = row.int64(0); });
}

Result<std::map<std::string, EvaluationCounts>> evaluation_counts(Database& db, int64_t model_id) {
  Statement& select = db.cached(
      "SELECT 'feature:' || sf.tag, COUNT(*), SUM(e.ok = 0) FROM evaluation e"
      " JOIN sample_feature sf ON sf.sample_id = e.sample_id WHERE e.model_id = ?1 GROUP BY sf.tag"
      " UNION ALL SELECT 'domain:' || s.domain, COUNT(*), SUM(e.ok = 0) FROM evaluation e"
      " JOIN sample s ON s.id = e.sample_id WHERE e.model_id = ?1 AND s.domain IS NOT NULL GROUP BY s.domain"
      " UNION ALL SELECT 'api_family:' || a.family, COUNT(*), SUM(e.ok = 0) FROM evaluation e"
      " JOIN (SELECT DISTINCT sample_id, family FROM sample_api) a ON a.sample_id = e.sample_id"
      " WHERE e.model_id = ?1 GROUP BY a.family"
      " UNION ALL SELECT 'category:' || e.category, (SELECT COUNT(*) FROM evaluation WHERE model_id = ?1), COUNT(*)"
      " FROM evaluation e WHERE e.model_id = ?1 AND e.category IS NOT NULL GROUP BY e.category");
  select.bind(1, model_id);
  std::map<std::string, EvaluationCounts> out;
  while (select.step()) out[select.text(0)] = {select.int64(1), select.int64(2)};
  if (Status s = select.finish(); !s) return s.error();
  return out;
}

Result<std::vector<std::string>> model_failure_seed_ids(Database& db, int64_t model_id, const std::string& dimension,
                                                        const std::string& name, int limit) {
  const char* sql = nullptr;
  if (dimension == "feature") {
    sql = "SELECT e.sample_id FROM evaluation e WHERE e.model_id = ?1 AND e.ok = 0"
          " AND EXISTS (SELECT 1 FROM sample_feature f WHERE f.sample_id = e.sample_id AND f.tag = ?2)"
          " ORDER BY e.sample_id LIMIT ?3";
  } else if (dimension == "domain") {
    sql = "SELECT e.sample_id FROM evaluation e JOIN sample s ON s.id = e.sample_id"
          " WHERE e.model_id = ?1 AND e.ok = 0 AND s.domain = ?2 ORDER BY e.sample_id LIMIT ?3";
  } else if (dimension == "category") {
    sql = "SELECT e.sample_id FROM evaluation e WHERE e.model_id = ?1 AND e.ok = 0 AND e.category = ?2"
          " ORDER BY e.sample_id LIMIT ?3";
  } else if (dimension == "api_family") {
    sql = "SELECT e.sample_id FROM evaluation e WHERE e.model_id = ?1 AND e.ok = 0"
          " AND EXISTS (SELECT 1 FROM sample_api a WHERE a.sample_id = e.sample_id AND a.family = ?2)"
          " ORDER BY e.sample_id LIMIT ?3";
  } else if (dimension == "api") {
    sql = "SELECT e.sample_id FROM evaluation e WHERE e.model_id = ?1 AND e.ok = 0"
          " AND EXISTS (SELECT 1 FROM sample_api a WHERE a.sample_id = e.sample_id AND a.identifier = ?2)"
          " ORDER BY e.sample_id LIMIT ?3";
  } else {
    return make_error("model failure seeds: unknown dimension '" + dimension + "'");
  }
  Statement& select = db.cached(sql);
  select.bind(1, model_id).bind(2, name).bind(3, static_cast<int64_t>(limit));
  return text_rows(select);
}

Result<int64_t> verified_synthesized_for_tail(Database& db, const std::string& track, const std::string& dimension,
                                              const std::string& name, int64_t since_ms) {
  Statement& count = db.cached(
      "SELECT COUNT(*) FROM sample c WHERE c.track = ?1 AND c.status = 'verified' AND c.origin = 'synthesized'"
      " AND c.created_ms >= ?4 AND EXISTS (SELECT 1 FROM lineage l WHERE l.child_id = c.id"
      "   AND l.relation = 'synthesized_from' AND json_valid(l.reason)"
      "   AND json_extract(l.reason, '$.dimension') = ?2 AND json_extract(l.reason, '$.name') = ?3)");
  return single_int64(count.bind(1, track).bind(2, dimension).bind(3, name).bind(4, since_ms));
}

Status replace_tail_report(Database& db, int64_t cycle_id, const std::vector<TailReportRow>& rows) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  if (Status s = db.cached("DELETE FROM tail_report WHERE cycle_id = ?1").bind(1, cycle_id).run(); !s) return s;
  for (const TailReportRow& row : rows) {
    Statement& insert = db.cached(
        "INSERT INTO tail_report (cycle_id, rank, dimension, name, signal, score, numbers)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    insert.bind(1, cycle_id).bind(2, row.rank).bind(3, row.dimension).bind(4, row.name).bind(5, row.signal);
    insert.bind(6, row.score).bind(7, row.numbers);
    if (Status s = insert.run(); !s) return make_error("storing tail report of cycle " + std::to_string(cycle_id) + ": " + s.message());
  }
  return transaction.commit();
}

Result<std::vector<TailReportRow>> tail_report_rows(Database& db, int64_t cycle_id) {
  Statement& select = db.cached(
      "SELECT rank, dimension, name, signal, score, numbers FROM tail_report WHERE cycle_id = ?1 ORDER BY rank");
  select.bind(1, cycle_id);
  return collect_rows<TailReportRow>(select, [](const Statement& row, TailReportRow& r) {
    read_row(row, r.rank, r.dimension, r.name, r.signal, r.score, r.numbers);
  });
}

Result<bool> tail_report_exists(Database& db, int64_t cycle_id) {
  Statement& select = db.cached("SELECT EXISTS (SELECT 1 FROM tail_report WHERE cycle_id = ?1)");
  select.bind(1, cycle_id);
  return select_exists(select);
}

Result<std::optional<int64_t>> latest_tail_report_cycle(Database& db) {
  Statement& select = db.cached("SELECT max(cycle_id) FROM tail_report");
  std::optional<int64_t> cycle;
  if (select.step()) cycle = select.optional_int64(0);
  if (Status s = select.finish(); !s) return s.error();
  return cycle;
}

Result<std::vector<CycleVerifiedCounts>> verified_by_cycle(Database& db, const std::string& track,
                                                           const std::string& dimension, const std::string& name) {
  // The track's verified samples are read once (index on track, status) and counted per cycle;
  // every cycle is listed, with zeros where it verified none.
  const char* sql = nullptr;
  if (dimension == "feature") {
    sql = "SELECT c.id, coalesce(v.verified, 0), coalesce(v.matching, 0) FROM cycle c LEFT JOIN"
          " (SELECT s.cycle_id, COUNT(*) AS verified,"
          "   SUM(EXISTS (SELECT 1 FROM sample_feature sf WHERE sf.sample_id = s.id AND sf.tag = ?2)) AS matching"
          "  FROM sample s WHERE s.track = ?1 AND s.status = 'verified' GROUP BY s.cycle_id) v"
          " ON v.cycle_id = c.id ORDER BY c.id";
  } else if (dimension == "domain") {
    sql = "SELECT c.id, coalesce(v.verified, 0), coalesce(v.matching, 0) FROM cycle c LEFT JOIN"
          " (SELECT s.cycle_id, COUNT(*) AS verified, SUM(s.domain = ?2) AS matching"
          "  FROM sample s WHERE s.track = ?1 AND s.status = 'verified' GROUP BY s.cycle_id) v"
          " ON v.cycle_id = c.id ORDER BY c.id";
  } else if (dimension == "category") {
    // Covered as failure_category_coverage counts it: verified samples synthesized for the category.
    sql = "SELECT c.id, coalesce(v.verified, 0), coalesce(v.matching, 0) FROM cycle c LEFT JOIN"
          " (SELECT s.cycle_id, COUNT(*) AS verified,"
          "   SUM(EXISTS (SELECT 1 FROM lineage l WHERE l.child_id = s.id AND l.relation = 'synthesized_from'"
          "    AND json_valid(l.reason) AND json_extract(l.reason, '$.dimension') = 'category'"
          "    AND json_extract(l.reason, '$.name') = ?2)) AS matching"
          "  FROM sample s WHERE s.track = ?1 AND s.status = 'verified' GROUP BY s.cycle_id) v"
          " ON v.cycle_id = c.id ORDER BY c.id";
  } else if (dimension == "api_family") {
    sql = "SELECT c.id, coalesce(v.verified, 0), coalesce(v.matching, 0) FROM cycle c LEFT JOIN"
          " (SELECT s.cycle_id, COUNT(*) AS verified,"
          "   SUM(EXISTS (SELECT 1 FROM sample_api a WHERE a.sample_id = s.id AND a.family = ?2)) AS matching"
          "  FROM sample s WHERE s.track = ?1 AND s.status = 'verified' GROUP BY s.cycle_id) v"
          " ON v.cycle_id = c.id ORDER BY c.id";
  } else if (dimension == "api") {
    sql = "SELECT c.id, coalesce(v.verified, 0), coalesce(v.matching, 0) FROM cycle c LEFT JOIN"
          " (SELECT s.cycle_id, COUNT(*) AS verified,"
          "   SUM(EXISTS (SELECT 1 FROM sample_api a WHERE a.sample_id = s.id AND a.identifier = ?2)) AS matching"
          "  FROM sample s WHERE s.track = ?1 AND s.status = 'verified' GROUP BY s.cycle_id) v"
          " ON v.cycle_id = c.id ORDER BY c.id";
  } else {
    return make_error("verified samples per cycle are counted by feature, domain, category, api_family or api, not by '" +
                      dimension + "'");
  }
  Statement& select = db.cached(sql);
  select.bind(1, track).bind(2, name);
  return collect_rows<CycleVerifiedCounts>(select, [](const Statement& row, CycleVerifiedCounts& counts) {
    read_row(row, counts.cycle_id, counts.verified, counts.matching);
  });
}

Result<std::vector<std::string>> tail_seed_ids(Database& db, const std::string& track, const std::string& dimension,
                                               const std::string& name, int64_t exclude_cycle, int limit) {
  const char* condition_sql = nullptr;
  if (dimension == "feature") {
    condition_sql =
        "SELECT s.id FROM sample s WHERE s.track = ?1 AND s.status IN ('failed','verified')"
        " AND s.id IN (SELECT sample_id FROM sample_feature WHERE tag = ?2)"
        " AND NOT (s.origin = 'synthesized' AND coalesce(s.cycle_id, -1) = ?3)"
        " ORDER BY s.status = 'failed' DESC, s.id LIMIT ?4";
  } else if (dimension == "domain") {
    condition_sql =
        "SELECT s.id FROM sample s WHERE s.track = ?1 AND s.status IN ('failed','verified') AND s.domain = ?2"
        " AND NOT (s.origin = 'synthesized' AND coalesce(s.cycle_id, -1) = ?3)"
        " ORDER BY s.status = 'failed' DESC, s.id LIMIT ?4";
  } else if (dimension == "category") {
    condition_sql =
        "SELECT s.id FROM sample s WHERE s.track = ?1 AND s.status IN ('failed','verified')"
        " AND s.id IN (SELECT sample_id FROM failure WHERE category = ?2)"
        " AND NOT (s.origin = 'synthesized' AND coalesce(s.cycle_id, -1) = ?3)"
        " ORDER BY s.status = 'failed' DESC, s.id LIMIT ?4";
  } else if (dimension == "api_family") {
    condition_sql =
        "SELECT s.id FROM sample s WHERE s.track = ?1 AND s.status IN ('failed','verified')"
        " AND s.id IN (SELECT sample_id FROM sample_api WHERE family = ?2)"
        " AND NOT (s.origin = 'synthesized' AND coalesce(s.cycle_id, -1) = ?3)"
        " ORDER BY s.status = 'failed' DESC, s.id LIMIT ?4";
  } else if (dimension == "api") {
    condition_sql =
        "SELECT s.id FROM sample s WHERE s.track = ?1 AND s.status IN ('failed','verified')"
        " AND s.id IN (SELECT sample_id FROM sample_api WHERE identifier = ?2)"
        " AND NOT (s.origin = 'synthesized' AND coalesce(s.cycle_id, -1) = ?3)"
        " ORDER BY s.status = 'failed' DESC, s.id LIMIT ?4";
  } else if (dimension == "corpus") {  // any finished sample: seeds for a feature nobody has yet
    condition_sql =
        "SELECT s.id FROM sample s WHERE s.track = ?1 AND s.status IN ('failed','verified') AND ?2 = ?2"
        " AND NOT (s.origin = 'synthesized' AND coalesce(s.cycle_id, -1) = ?3)"
        " ORDER BY s.status = 'verified' DESC, s.id LIMIT ?4";
  } else {
    return make_error("tail seeds: unknown dimension '" + dimension + "'");
  }
  Statement& select = db.cached(condition_sql);
  select.bind(1, track).bind(2, name).bind(3, exclude_cycle).bind(4, static_cast<int64_t>(limit));
  return text_rows(select);
}

Status for_each_sample_text(Database& db, const std::string& track,
                            const std::function<void(const std::string&, const std::string&)>& visit) {
  Statement& select = db.cached("SELECT id, text FROM sample WHERE track = ?1 ORDER BY id");
  select.bind(1, track);
  while (select.step()) visit(select.text(0), select.text(1));
  return select.finish();
}

Result<bool> lineage_edge_exists(Database& db, const std::string& parent_id, const std::string& child_id,
                                 const std::string& relation) {
  Statement& select = db.cached(
      "SELECT EXISTS (SELECT 1 FROM lineage WHERE parent_id = ?1 AND child_id = ?2 AND relation = ?3)");
  select.bind(1, parent_id).bind(2, child_id).bind(3, relation);
  return select_exists(select);
}

Result<std::vector<ExportRow>> verified_export_rows(Database& db, const std::vector<std::string>& tracks,
                                                    const std::string& source_kind, const std::string& target_kind) {
  std::string track_list = nlohmann::json(tracks).dump();
  std::vector<ExportRow> rows;
  std::map<std::string, size_t> row_of;
  Statement& samples = db.cached(
      "SELECT id, track, origin, coalesce(domain, ''), features, text, coalesce(variables, '{}'),"
      " coalesce(template_id, ''), seed FROM sample"
      " WHERE status = 'verified' AND track IN (SELECT value FROM json_each(?1)) ORDER BY id");
  samples.bind(1, track_list);
  while (samples.step()) {
    row_of[samples.text(0)] = rows.size();
    ExportRow row{samples.text(0), samples.text(1), samples.text(2), samples.text(3), samples.text(4), "", "",
                  samples.text(6), samples.text(7), std::nullopt};
    if (!samples.is_null(8)) row.seed = samples.int64(8);
    if (source_kind == "text") row.source = samples.text(5);
    if (target_kind == "text") row.target = samples.text(5);
    rows.push_back(std::move(row));
  }
  if (Status s = samples.finish(); !s) return s.error();

  // kind -> (sample -> (content named like the kind, all contents joined))
  std::map<std::string, std::map<std::string, std::pair<std::string, std::string>>> found;
  Statement& artifacts = db.cached(
      "SELECT sa.sample_id, sa.kind, sa.name, a.content FROM sample_artifact sa"
      " JOIN artifact a ON a.id = sa.artifact_id JOIN sample s ON s.id = sa.sample_id"
      " WHERE s.status = 'verified' AND s.track IN (SELECT value FROM json_each(?1)) AND sa.kind IN (?2, ?3)"
      " ORDER BY sa.sample_id, sa.stage, sa.name");
  artifacts.bind(1, track_list).bind(2, source_kind).bind(3, target_kind);
  while (artifacts.step()) {
    auto& [named, joined] = found[artifacts.text(1)][artifacts.text(0)];
    std::string content = artifacts.text(3);
    if (artifacts.text(2) == artifacts.text(1)) named = content;
    if (!joined.empty()) joined += "\n";
    joined += content;
  }
  if (Status s = artifacts.finish(); !s) return s.error();

  auto pick = [&found](const std::string& kind, const std::string& id) -> std::string {
    auto& by_sample = found[kind];
    auto hit = by_sample.find(id);
    if (hit == by_sample.end()) return "";
    return hit->second.first.empty() ? hit->second.second : hit->second.first;
  };
  std::vector<ExportRow> complete;
  for (ExportRow& row : rows) {
    if (source_kind != "text") row.source = pick(source_kind, row.sample_id);
    if (target_kind != "text") row.target = pick(target_kind, row.sample_id);
    if (!row.source.empty() && !row.target.empty()) complete.push_back(std::move(row));
  }
  return complete;
}

Result<std::optional<RetrainEventRecord>> last_retrain_event(Database& db) {
  Result<std::vector<RetrainEventRecord>> events = list_retrain_events(db, 1);
  if (!events) return events.error();
  if (events->empty()) return std::optional<RetrainEventRecord>();
  return std::optional<RetrainEventRecord>(events->front());
}

Result<std::vector<RetrainEventRecord>> list_retrain_events(Database& db, int limit) {
  std::string sql = std::string(kRetrainColumns) + " ORDER BY id DESC LIMIT ?1";
  Result<Statement> select = db.prepare(sql);
  if (!select) return select.error();
  select->bind(1, static_cast<int64_t>(limit));
  return collect_rows<RetrainEventRecord>(*select, read_retrain_event);
}

Result<bool> retrain_snapshot_recorded(Database& db, const std::string& snapshot_hash) {
  Statement& select = db.cached("SELECT EXISTS (SELECT 1 FROM retrain_event WHERE snapshot_hash = ?1)");
  select.bind(1, snapshot_hash);
  return select_exists(select);
}

Result<std::optional<int64_t>> insert_retrain_event_if_new(Database& db, const RetrainEventRecord& event) {
  Statement& insert = db.cached(
      "INSERT INTO retrain_event (cycle_id, reason, snapshot_hash, snapshot_dir, manifest, command, status, created_ms,"
      " parent_model_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (snapshot_hash) DO NOTHING");
  insert.bind(1, event.cycle_id).bind(2, event.reason).bind(3, event.snapshot_hash).bind(4, event.snapshot_dir);
  insert.bind(5, event.manifest).bind(6, event.command).bind(7, event.status);
  insert.bind(8, event.created_ms ? event.created_ms : now_ms()).bind(9, event.parent_model_id);
  if (Status s = insert.run(); !s) return make_error("recording retrain event: " + s.message());
  if (db.changes() == 0) return std::optional<int64_t>();
  return std::optional<int64_t>(db.last_insert_rowid());
}

Status finish_retrain_event(Database& db, int64_t id, const std::string& status, const std::string& output,
                            double seconds) {
  return db.cached("UPDATE retrain_event SET status = ?2, output = ?3, seconds = ?4 WHERE id = ?1")
      .bind(1, id).bind(2, status).bind(3, output).bind(4, seconds).run();
}

Result<std::optional<RetrainEventRecord>> find_retrain_event(Database& db, int64_t id) {
  Result<Statement> select = db.prepare(std::string(kRetrainColumns) + " WHERE id = ?1");
  if (!select) return select.error();
  select->bind(1, id);
  return first_row<RetrainEventRecord>(*select, read_retrain_event);
}

Result<int64_t> mark_running_retrain_events_interrupted(Database& db) {
  Statement& update = db.cached("UPDATE retrain_event SET status = 'interrupted' WHERE status = 'running'");
  if (Status s = update.run(); !s) return s.error();
  return static_cast<int64_t>(db.changes());
}

Result<std::vector<RetrainEventRecord>> interrupted_retrain_events(Database& db) {
  Result<Statement> select = db.prepare(std::string(kRetrainColumns) + " WHERE status = 'interrupted' ORDER BY id");
  if (!select) return select.error();
  return collect_rows<RetrainEventRecord>(*select, read_retrain_event);
}

Result<bool> restart_retrain_event(Database& db, int64_t id) {
  Statement& update = db.cached(
      "UPDATE retrain_event SET status = 'running', attempts = attempts + 1 WHERE id = ?1 AND status = 'interrupted'");
  if (Status s = update.bind(1, id).run(); !s) return s.error();
  return db.changes() > 0;
}

}  // namespace tailforge
