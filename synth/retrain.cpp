#include "synth/retrain.h"

#include <httplib.h>

#include <algorithm>
#include <filesystem>

#include "store/corpus.h"
#include "synth/export.h"
#include "verifier/process.h"

namespace tailforge {
namespace {

using nlohmann::json;

const size_t kOutputCap = 64 * 1024;

std::string capped(std::string text) {
  if (text.size() > kOutputCap) text = text.substr(text.size() - kOutputCap);
  return text;
}

// Verified counts per "feature:<tag>" and "domain:<name>".
Result<std::map<std::string, int64_t>> category_counts(Database& db, const std::string& track) {
  Result<std::map<std::string, int64_t>> features = verified_count_by_feature(db, track);
  Result<std::map<std::string, int64_t>> domains = verified_count_by_domain(db, track);
  if (!features) return features.error();
  if (!domains) return domains.error();
  std::map<std::string, int64_t> out;
  for (const auto& [name, count] : *features) out["feature:" + name] = count;
  for (const auto& [name, count] : *domains) out["domain:" + name] = count;
  return out;
}

// The conditions that hold now, each with its figures; empty when none does.
Result<json> fired_conditions(Database& db, const RetrainPolicy& policy, int64_t cycle_id, json& state) {
  Result<int64_t> total = verified_count(db, policy.track);
  Result<std::map<std::string, int64_t>> counts = category_counts(db, policy.track);
  Result<std::optional<RetrainEventRecord>> last = last_retrain_event(db);
  Result<std::vector<TailReportRow>> tails = tail_report_rows(db, cycle_id);
  if (!total || !counts || !last || !tails) {
    return make_error("retrain: " + (!total ? total.message() : !counts ? counts.message()
                                                : !last ? last.message() : tails.message()));
  }
  state = {{"verified_total", *total}, {"category_counts", *counts}};
  json previous = json::object();
  if (*last) {
    json reason = json::parse((*last)->reason, nullptr, false);
    if (reason.is_object() && reason.contains("state") && reason["state"].is_object()) previous = reason["state"];
  }
  json conditions = json::array();
  int64_t before = previous.value("verified_total", int64_t{0});
  if (policy.min_new_verified > 0 && *total - before >= policy.min_new_verified) {
    conditions.push_back({{"condition", "min_new_verified"}, {"new_verified", *total - before},
                          {"threshold", policy.min_new_verified}});
  }
  if (policy.min_tail_gain > 0) {
    std::vector<std::string> watched;
    for (const TailReportRow& row : *tails) {
      if (row.dimension == "feature" || row.dimension == "domain") watched.push_back(row.dimension + ":" + row.name);
    }
    if (watched.empty()) {
      for (const auto& [key, count] : *counts) watched.push_back(key);
    }
    json previous_counts = previous.value("category_counts", json::object());
    for (const std::string& key : watched) {
      auto now = counts->find(key);
      int64_t gain = (now == counts->end() ? 0 : now->second) - previous_counts.value(key, int64_t{0});
      if (gain >= policy.min_tail_gain) {
        conditions.push_back({{"condition", "min_tail_gain"}, {"category", key}, {"gain", gain},
                              {"threshold", policy.min_tail_gain}});
        break;
      }
    }
  }
  if (policy.accuracy_drop > 0) {
    Result<std::vector<ModelAccuracy>> models = model_accuracies(db);
    if (!models) return make_error("retrain: " + models.message());
    if (models->size() >= 2) {
      auto accuracy = [](const ModelAccuracy& m) { return m.evaluated ? double(m.ok) / double(m.evaluated) : 0.0; };
      double newest = accuracy(models->back()), best = 0;
      for (size_t i = 0; i + 1 < models->size(); ++i) best = std::max(best, accuracy((*models)[i]));
      if (best - newest >= policy.accuracy_drop) {
        conditions.push_back({{"condition", "accuracy_drop"}, {"model", models->back().name},
                              {"accuracy", newest}, {"best_earlier", best}, {"threshold", policy.accuracy_drop}});
      }
    }
  }
  return conditions;
}

std::string post_webhook(const std::string& url, const json& body, double timeout_seconds, bool& ok) {
  ok = false;
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string::npos) return "webhook: '" + url + "' is not an http:// URL";
  size_t path_start = url.find('/', scheme_end + 3);
  std::string origin = path_start == std::string::npos ? url : url.substr(0, path_start);
  std::string path = path_start == std::string::npos ? "/" : url.substr(path_start);
  httplib::Client client(origin);
  time_t seconds = static_cast<time_t>(std::max(1.0, timeout_seconds));
  client.set_connection_timeout(seconds, 0);
  client.set_read_timeout(seconds, 0);
  client.set_write_timeout(seconds, 0);
  httplib::Result reply = client.Post(path, body.dump(), "application/json");
  if (!reply) return "webhook " + url + ": " + httplib::to_string(reply.error());
  ok = reply->status >= 200 && reply->status < 300;
  return "webhook " + url + ": HTTP " + std::to_string(reply->status) + " " + capped(reply->body);
}

}  // namespace

Result<RetrainPolicy> retrain_policy_from_json(const json& section, SynthPolicy synth) {
  RetrainPolicy policy;
  policy.synth = std::move(synth);
  policy.track = policy.synth.track;
  if (!section.is_object()) return make_error("retrain: the section must be an object");
  static const std::vector<std::string> known = {"enabled", "track", "min_new_verified", "min_tail_gain",
                                                 "accuracy_drop", "command", "webhook", "timeout_seconds",
                                                 "export_format", "snapshot_dir"};
  for (const auto& item : section.items()) {
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      return make_error("retrain." + item.key() + " is not a known key");
    }
  }
  std::string key;
  try {
    key = "enabled", policy.enabled = section.value(key, policy.enabled);
    key = "track", policy.track = section.value(key, policy.track);
    key = "min_new_verified", policy.min_new_verified = section.value(key, policy.min_new_verified);
    key = "min_tail_gain", policy.min_tail_gain = section.value(key, policy.min_tail_gain);
    key = "accuracy_drop", policy.accuracy_drop = section.value(key, policy.accuracy_drop);
    key = "command", policy.command = section.value(key, policy.command);
    key = "webhook", policy.webhook = section.value(key, policy.webhook);
    key = "timeout_seconds", policy.timeout_seconds = section.value(key, policy.timeout_seconds);
    key = "export_format", policy.export_format = section.value(key, policy.export_format);
    key = "snapshot_dir", policy.snapshot_dir = section.value(key, policy.snapshot_dir);
  } catch (const json::exception& e) {
    return make_error("retrain." + key + ": wrong type (" + e.what() + ")");
  }
  if (policy.export_format != "alpaca" && policy.export_format != "sharegpt" && policy.export_format != "jsonl") {
    return make_error("retrain.export_format: '" + policy.export_format + "' is not alpaca, sharegpt or jsonl");
  }
  if (policy.timeout_seconds <= 0) return make_error("retrain.timeout_seconds must be positive");
  return policy;
}

Result<std::optional<RetrainOutcome>> maybe_trigger_retrain(Database& db, const RetrainPolicy& policy,
                                                            int64_t cycle_id) {
  if (!policy.enabled) return std::optional<RetrainOutcome>();
  json state;
  Result<json> conditions = fired_conditions(db, policy, cycle_id, state);
  if (!conditions) return conditions.error();
  if (conditions->empty()) return std::optional<RetrainOutcome>();

  ExportOptions options{policy.track, policy.export_format, "", policy.synth};
  Result<std::string> hash = export_snapshot_hash(db, options);
  if (!hash) return make_error("retrain: " + hash.message());
  Result<bool> recorded = retrain_snapshot_recorded(db, *hash);
  if (!recorded) return recorded.error();
  if (*recorded) return std::optional<RetrainOutcome>();

  options.out_dir = policy.snapshot_dir + "/" + hash->substr(0, 16);
  Result<ExportSummary> snapshot = export_dataset(db, options);
  if (!snapshot) return make_error("retrain: exporting snapshot: " + snapshot.message());
  if (snapshot->samples == 0) return std::optional<RetrainOutcome>();

  RetrainOutcome outcome;
  outcome.reason = json{{"conditions", *conditions}, {"state", state}, {"cycle_id", cycle_id}}.dump();
  outcome.snapshot_hash = snapshot->snapshot_hash;
  outcome.snapshot_dir = std::filesystem::absolute(options.out_dir).string();
  outcome.manifest_path = std::filesystem::absolute(snapshot->manifest_path).string();
  RetrainEventRecord event;
  event.cycle_id = cycle_id;
  event.reason = outcome.reason;
  event.snapshot_hash = outcome.snapshot_hash;
  event.snapshot_dir = outcome.snapshot_dir;
  event.manifest = outcome.manifest_path;
  if (!policy.command.empty()) event.command = json(policy.command).dump();
  event.status = "running";
  Result<std::optional<int64_t>> id = insert_retrain_event_if_new(db, event);
  if (!id) return id.error();
  if (!*id) return std::optional<RetrainOutcome>();  // another run recorded this snapshot first
  outcome.event_id = **id;

  bool ok = true;
  if (!policy.command.empty()) {
    ProcessSpec spec;
    spec.argv = policy.command;
    spec.timeout_seconds = policy.timeout_seconds;
    spec.extra_env = {{"TAILFORGE_SNAPSHOT_DIR", outcome.snapshot_dir},
                      {"TAILFORGE_MANIFEST", outcome.manifest_path},
                      {"TAILFORGE_RETRAIN_EVENT", std::to_string(outcome.event_id)}};
    ProcessResult result = run_process(spec);
    ok = result.succeeded();
    outcome.seconds += result.wall_seconds;
    outcome.output = "$ " + command_line(policy.command) + "\n";
    if (!result.spawned) outcome.output += "not started: " + result.spawn_error + "\n";
    if (result.timed_out) outcome.output += "timed out after " + std::to_string(policy.timeout_seconds) + " s\n";
    if (result.signal) outcome.output += "killed by signal " + std::to_string(result.signal) + "\n";
    outcome.output += "exit " + std::to_string(result.exit_code) + "\n" + capped(result.stdout_text) +
                      capped(result.stderr_text);
  }
  if (!policy.webhook.empty()) {
    int64_t started = now_ms();
    bool delivered = false;
    json body = {{"event_id", outcome.event_id}, {"snapshot_hash", outcome.snapshot_hash},
                 {"snapshot_dir", outcome.snapshot_dir}, {"manifest", outcome.manifest_path},
                 {"reason", json::parse(outcome.reason)}};
    outcome.output += post_webhook(policy.webhook, body, policy.timeout_seconds, delivered) + "\n";
    outcome.seconds += static_cast<double>(now_ms() - started) / 1000.0;
    ok = ok && delivered;
  }
  outcome.status = ok ? "ok" : "failed";
  outcome.output = capped(outcome.output);
  if (Status s = finish_retrain_event(db, outcome.event_id, outcome.status, outcome.output, outcome.seconds); !s) {
    return make_error("retrain: recording the outcome of event " + std::to_string(outcome.event_id) + ": " + s.message());
  }
  return std::optional<RetrainOutcome>(std::move(outcome));
}

Result<int64_t> add_model(Database& db, const std::string& name, const std::string& endpoint) {
  if (name.empty()) return make_error("model add: --name must not be empty");
  Result<std::optional<RetrainEventRecord>> last = last_retrain_event(db);
  if (!last) return last.error();
  std::optional<int64_t> event_id;
  if (*last) event_id = (*last)->id;
  return insert_model(db, name, endpoint.empty() ? std::nullopt : std::optional<std::string>(endpoint), event_id);
}

}  // namespace tailforge
