#include "store/samples.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/sha256.h"

namespace tailforge {

std::string normalize_program_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  std::string line;
  auto flush_line = [&](bool newline) {
    size_t end = line.find_last_not_of(" \t\r");
    out.append(line, 0, end == std::string::npos ? 0 : end + 1);
    if (newline) out.push_back('\n');
    line.clear();
  };
  for (char c : text) {
    if (c == '\n') {
      flush_line(true);
    } else {
      line.push_back(c);
    }
  }
  flush_line(false);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  out.push_back('\n');
  return out;
}

std::string sample_id_for(const std::string& text) { return sha256_hex(normalize_program_text(text)); }

Result<InsertOutcome> insert_sample_if_absent(Database& db, Sample sample) {
  if (sample.id.empty()) sample.id = sample_id_for(sample.text);
  if (sample.created_ms == 0) sample.created_ms = now_ms();
  Statement& insert = db.cached(
      "INSERT INTO sample (id, track, origin, language, text, template_id, persona, variables, seed, model,"
      " prompt_hash, domain, features, status, cycle_id, created_ms)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)"
      " ON CONFLICT (id) DO NOTHING");
  insert.bind(1, sample.id).bind(2, sample.track).bind(3, sample.origin).bind(4, sample.language);
  insert.bind(5, sample.text).bind(6, sample.template_id).bind(7, sample.persona).bind(8, sample.variables);
  insert.bind(9, sample.seed).bind(10, sample.model).bind(11, sample.prompt_hash).bind(12, sample.domain);
  insert.bind(13, nlohmann::json(sample.features).dump()).bind(14, sample.status).bind(15, sample.cycle_id);
  insert.bind(16, sample.created_ms);
  if (Status s = insert.run(); !s) return make_error("inserting sample " + sample.id + ": " + s.message());
  bool inserted = db.changes() > 0;
  if (inserted) {
    for (const std::string& tag : sample.features) {
      Statement& feature = db.cached("INSERT OR IGNORE INTO sample_feature (sample_id, tag) VALUES (?1, ?2)");
      if (Status s = feature.bind(1, sample.id).bind(2, tag).run(); !s) return s.error();
    }
  }
  return InsertOutcome{sample.id, inserted};
}

Result<std::vector<SampleHeader>> newest_samples(Database& db, const std::string& status, const std::string& track,
                                                 int limit) {
  // Two statements, so that each walks an index in time order (sample_status_time, sample_created)
  // instead of sorting the table.
  Statement& select =
      status.empty() ? db.cached("SELECT id, track, origin, status, coalesce(domain, ''), created_ms FROM sample"
                                 " WHERE (?2 = '' OR track = ?2) ORDER BY created_ms DESC LIMIT ?3")
                     : db.cached("SELECT id, track, origin, status, coalesce(domain, ''), created_ms FROM sample"
                                 " WHERE status = ?1 AND (?2 = '' OR track = ?2) ORDER BY created_ms DESC LIMIT ?3");
  if (!status.empty()) select.bind(1, status);
  select.bind(2, track).bind(3, static_cast<int64_t>(limit));
  return collect_rows<SampleHeader>(select, [](const Statement& row, SampleHeader& header) {
    read_row(row, header.id, header.track, header.origin, header.status, header.domain, header.created_ms);
  });
}

Result<std::optional<std::string>> sample_template_id(Database& db, const std::string& id) {
  Statement& select = db.cached("SELECT template_id FROM sample WHERE id = ?1");
  select.bind(1, id);
  std::optional<std::string> template_id;
  if (select.step()) template_id = select.optional_text(0);
  if (Status s = select.finish(); !s) return s.error();
  return template_id;
}

Result<std::optional<Sample>> find_sample(Database& db, const std::string& id) {
  Statement& select = db.cached(
      "SELECT id, track, origin, language, text, template_id, persona, variables, seed, model, prompt_hash,"
      " domain, features, status, cycle_id, created_ms FROM sample WHERE id = ?1");
  select.bind(1, id);
  return first_row<Sample>(select, [](const Statement& row, Sample& sample) {
    std::string features_json;
    read_row(row, sample.id, sample.track, sample.origin, sample.language, sample.text, sample.template_id,
             sample.persona, sample.variables, sample.seed, sample.model, sample.prompt_hash, sample.domain,
             features_json, sample.status, sample.cycle_id, sample.created_ms);
    nlohmann::json features = nlohmann::json::parse(features_json, nullptr, false);
    if (features.is_array()) {
      for (const auto& tag : features) {
        if (tag.is_string()) sample.features.push_back(tag.get<std::string>());
      }
    }
  });
}

Result<std::vector<std::string>> sample_ids_with_prefix(Database& db, const std::string& prefix, int limit) {
  Statement& select = db.cached("SELECT id FROM sample WHERE id >= ?1 AND id < ?1 || 'g' ORDER BY id LIMIT ?2");
  select.bind(1, prefix).bind(2, limit);
  return text_rows(select);
}

Status set_sample_status(Database& db, const std::string& id, const std::string& status) {
  if (status == "verified" || status == "failed") {
    Status deferred = db.cached(
                            "INSERT INTO deferred_sample_status (sample_id, status) SELECT s.id, ?2 FROM sample s"
                            " WHERE s.id = ?1 AND EXISTS (SELECT 1 FROM cycle c WHERE c.state = 'running' AND c.id < s.cycle_id)"
                            " ON CONFLICT (sample_id) DO UPDATE SET status = excluded.status")
                          .bind(1, id)
                          .bind(2, status)
                          .run();
    if (!deferred) return deferred;
  }
  return db.cached(
             "UPDATE sample AS s SET status = ?2 WHERE s.id = ?1"
             " AND NOT EXISTS (SELECT 1 FROM cycle c WHERE c.state = 'running' AND c.id < s.cycle_id)")
      .bind(1, id)
      .bind(2, status)
      .run();
}

Result<std::string> insert_artifact(Database& db, const std::string& sample_id, ArtifactRecord artifact) {
  artifact.id = sha256_hex(artifact.content);
  Statement& insert = db.cached(
      "INSERT INTO artifact (id, kind, content, size, command, toolchain_version, created_ms)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO NOTHING");
  insert.bind(1, artifact.id).bind(2, artifact.kind).bind_blob(3, artifact.content);
  insert.bind(4, static_cast<int64_t>(artifact.content.size())).bind(5, artifact.command);
  insert.bind(6, artifact.toolchain_version).bind(7, now_ms());
  if (Status s = insert.run(); !s) return s.error();
  Statement& link = db.cached(
      "INSERT INTO sample_artifact (sample_id, stage, name, artifact_id, kind) VALUES (?1, ?2, ?3, ?4, ?5)"
      " ON CONFLICT (sample_id, stage, name) DO UPDATE SET artifact_id = excluded.artifact_id, kind = excluded.kind");
  link.bind(1, sample_id).bind(2, artifact.stage).bind(3, artifact.name).bind(4, artifact.id).bind(5, artifact.kind);
  if (Status s = link.run(); !s) {
    return s.error();
  }
  return artifact.id;
}

Result<std::vector<ArtifactRecord>> artifacts_of(Database& db, const std::string& sample_id) {
  Statement& select = db.cached(
      "SELECT sa.stage, sa.name, sa.kind, a.content, a.command, a.toolchain_version, a.id"
      " FROM sample_artifact sa JOIN artifact a ON a.id = sa.artifact_id"
      " WHERE sa.sample_id = ?1 ORDER BY sa.stage, sa.name");
  select.bind(1, sample_id);
  return collect_rows<ArtifactRecord>(select, [](const Statement& row, ArtifactRecord& a) {
    read_row(row, a.stage, a.name, a.kind, a.content, a.command, a.toolchain_version, a.id);
  });
}

Result<int64_t> upsert_verification(Database& db, VerificationRecord v) {
  if (v.created_ms == 0) v.created_ms = now_ms();
  Statement& upsert = db.cached(
      "INSERT INTO verification (sample_id, stage, status, exit_code, signal, reason, diagnostics, seconds,"
      " peak_rss_kb, host, toolchain_version, cached, created_ms, cpu_seconds)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
      " ON CONFLICT (sample_id, stage) DO UPDATE SET status = excluded.status, exit_code = excluded.exit_code,"
      " signal = excluded.signal, reason = excluded.reason, diagnostics = excluded.diagnostics,"
      " seconds = excluded.seconds, peak_rss_kb = excluded.peak_rss_kb, host = excluded.host,"
      " toolchain_version = excluded.toolchain_version, cached = excluded.cached, created_ms = excluded.created_ms,"
      " cpu_seconds = excluded.cpu_seconds RETURNING id");
  upsert.bind(1, v.sample_id).bind(2, v.stage).bind(3, v.status).bind(4, v.exit_code).bind(5, v.signal);
  upsert.bind(6, v.reason).bind(7, v.diagnostics).bind(8, v.seconds).bind(9, v.peak_rss_kb).bind(10, v.host);
  upsert.bind(11, v.toolchain_version).bind(12, static_cast<int64_t>(v.cached ? 1 : 0)).bind(13, v.created_ms);
  upsert.bind(14, v.cpu_seconds);
  if (!upsert.step()) {
    Status s = upsert.finish();
    return make_error("recording verification " + v.stage + " of " + v.sample_id + ": " +
                      (s ? std::string("no row returned") : s.message()));
  }
  int64_t id = upsert.int64(0);
  upsert.reset();
  return id;
}

Result<std::vector<VerificationRecord>> verifications_of(Database& db, const std::string& sample_id) {
  Statement& select = db.cached(
      "SELECT id, sample_id, stage, status, exit_code, signal, reason, diagnostics, seconds, peak_rss_kb, host,"
      " toolchain_version, cached, created_ms, coalesce(cpu_seconds, 0) FROM verification WHERE sample_id = ?1"
      " ORDER BY id");
  select.bind(1, sample_id);
  return collect_rows<VerificationRecord>(select, [](const Statement& row, VerificationRecord& v) {
    read_row(row, v.id, v.sample_id, v.stage, v.status, v.exit_code, v.signal, v.reason, v.diagnostics, v.seconds,
             v.peak_rss_kb, v.host, v.toolchain_version, v.cached, v.created_ms, v.cpu_seconds);
  });
}

Result<std::optional<std::string>> latest_skip_reason(Database& db, const std::string& stage) {
  Statement& select = db.cached(
      "SELECT reason FROM verification WHERE stage = ?1 AND status = 'skipped' ORDER BY created_ms DESC, id DESC LIMIT 1");
  select.bind(1, stage);
  return first_text(select);
}

Status insert_lineage_edge(Database& db, LineageEdge edge) {
  if (edge.created_ms == 0) edge.created_ms = now_ms();
  Statement& insert = db.cached(
      "INSERT INTO lineage (parent_id, child_id, relation, agent, model, prompt_hash, reason, created_ms)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING");
  insert.bind(1, edge.parent_id).bind(2, edge.child_id).bind(3, edge.relation).bind(4, edge.agent);
  insert.bind(5, edge.model).bind(6, edge.prompt_hash).bind(7, edge.reason).bind(8, edge.created_ms);
  return insert.run();
}

Result<std::vector<std::string>> lineage_parent_ids(Database& db, const std::string& child_id,
                                                    const std::string& relation) {
  Statement& select = db.cached("SELECT parent_id FROM lineage WHERE child_id = ?1 AND relation = ?2");
  return text_rows(select.bind(1, child_id).bind(2, relation));
}

namespace {

// Breadth-first walk over lineage edges, upwards (towards parents) or downwards.
Result<std::vector<LineageEdge>> walk_lineage(Database& db, const std::string& id, int max_depth, bool upwards) {
  const char* sql = upwards
                        ? "SELECT parent_id, child_id, relation, agent, model, prompt_hash, reason, created_ms"
                          " FROM lineage WHERE child_id = ?1 ORDER BY created_ms, parent_id"
                        : "SELECT parent_id, child_id, relation, agent, model, prompt_hash, reason, created_ms"
                          " FROM lineage WHERE parent_id = ?1 ORDER BY created_ms, child_id";
  std::vector<LineageEdge> edges;
  std::vector<std::string> frontier = {id};
  std::vector<std::string> seen = {id};
  for (int depth = 0; depth < max_depth && !frontier.empty(); ++depth) {
    std::vector<std::string> next;
    for (const std::string& node : frontier) {
      Result<std::vector<LineageEdge>> found =
          collect_rows<LineageEdge>(db.cached(sql).bind(1, node), [](const Statement& row, LineageEdge& e) {
            read_row(row, e.parent_id, e.child_id, e.relation, e.agent, e.model, e.prompt_hash, e.reason, e.created_ms);
          });
      if (!found) return found.error();
      for (LineageEdge& edge : *found) {
        const std::string& other = upwards ? edge.parent_id : edge.child_id;
        if (std::find(seen.begin(), seen.end(), other) == seen.end()) {
          seen.push_back(other);
          next.push_back(other);
        }
        edges.push_back(std::move(edge));
      }
    }
    frontier = std::move(next);
  }
  return edges;
}

}  // namespace

Result<std::vector<LineageEdge>> ancestors_of(Database& db, const std::string& id, int max_depth) {
  return walk_lineage(db, id, max_depth, true);
}

Result<std::vector<LineageEdge>> descendants_of(Database& db, const std::string& id, int max_depth) {
  return walk_lineage(db, id, max_depth, false);
}

}  // namespace tailforge
