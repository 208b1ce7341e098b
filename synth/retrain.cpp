#include "synth/retrain.h"

#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "base/process.h"
#include "policies/config_section.h"
#include "store/corpus.h"
#include "store/models.h"
#include "synth/dataset_card.h"
#include "synth/export.h"
#include "synth/kernelopt/snapshot.h"
#include "synth/model_report.h"
#include "synth/snapshot_retention.h"
#include "synth/tracks.h"

namespace tailforge {
namespace {

using nlohmann::json;

const size_t kOutputCap = 64 * 1024;

std::string capped(std::string text) {
  if (text.size() > kOutputCap) text = text.substr(text.size() - kOutputCap);
  return text;
}

std::vector<std::string> expanded_command(const std::vector<std::string>& command) {
  std::vector<std::string> argv = command;
  for (std::string& word : argv) {
    if (word == "{tailforge}") word = current_executable();
  }
  return argv;
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

// The features, domains and API families of the cycle's tail list that `model_id` fails.
std::vector<BoostedTail> model_failure_tails(const std::vector<TailReportRow>& tails, int64_t model_id) {
  std::vector<BoostedTail> out;
  for (const TailReportRow& row : tails) {
    if (row.signal != "model_failure" ||
        (row.dimension != "feature" && row.dimension != "domain" && row.dimension != "api_family")) {
      continue;
    }
    json numbers = json::parse(row.numbers, nullptr, false);
    if (numbers.is_object() && numbers.value("model_id", int64_t{-1}) == model_id) {
      out.push_back({row.dimension, row.name});
    }
  }
  return out;
}

// The model under test's failure tails of this cycle that synthesis has since filled.
Result<json> model_tail_condition(Database& db, const RetrainPolicy& policy, const ModelRecord& model,
                                  const std::vector<TailReportRow>& tails) {
  json filled = json::array();
  for (const TailReportRow& row : tails) {
    if (row.signal != "model_failure") continue;
    json numbers = json::parse(row.numbers, nullptr, false);
    if (!numbers.is_object() || numbers.value("model_id", int64_t{-1}) != model.id) continue;
    Result<int64_t> gain = verified_synthesized_for_tail(db, policy.track, row.dimension, row.name, model.created_ms);
    if (!gain) return gain.error();
    if (*gain >= policy.min_model_tail_samples) {
      filled.push_back({{"dimension", row.dimension}, {"name", row.name}, {"signal", row.signal},
                        {"failure_rate", numbers.value("failure_rate", 0.0)}, {"gain", *gain}});
    }
  }
  if (filled.empty()) return json();
  return json{{"condition", "model_tail"}, {"model", model.name}, {"tails", filled},
              {"threshold", policy.min_model_tail_samples}};
}

// The newest active model's accuracy against the best earlier model's, on the same set version.
Result<json> accuracy_drop_condition(Database& db, const RetrainPolicy& policy) {
  Result<TrackScores> scores = track_scores(db, policy.track);
  if (!scores) return scores.error();
  const ModelScore* newest = nullptr;
  for (const ModelScore& score : scores->models) {
    if (score.model.active && score.complete_version > 0) newest = &score;
  }
  if (!newest) return json();
  int64_t version = newest->complete_version;
  double now = accuracy(newest->ok_at(version), newest->items_at(version));
  double best = 0;
  std::string best_name;
  for (const ModelScore& score : scores->models) {
    if (&score == newest || score.complete_version < version) continue;
    double earlier = accuracy(score.ok_at(version), score.items_at(version));
    if (earlier > best) best = earlier, best_name = score.model.name;
  }
  if (best_name.empty() || best - now < policy.accuracy_drop) return json();
  return json{{"condition", "accuracy_drop"}, {"model", newest->model.name}, {"accuracy", now},
              {"best_earlier", best}, {"best_earlier_model", best_name}, {"version", version},
              {"threshold", policy.accuracy_drop}};
}

// The conditions that hold now, each with its figures; empty when none does.
// `trains`: a command or webhook would run (a first version is only due when something trains it).
Result<json> fired_conditions(Database& db, const RetrainPolicy& policy, int64_t cycle_id,
                              const std::optional<ModelRecord>& model_under_test, bool trains, json& state) {
  Result<int64_t> total = verified_count(db, policy.track);
  Result<std::map<std::string, int64_t>> counts = category_counts(db, policy.track);
  Result<std::optional<RetrainEventRecord>> last = last_retrain_event(db);
  Result<std::vector<TailReportRow>> tails = tail_report_rows(db, cycle_id);
  Result<std::vector<ModelRecord>> models = list_models(db, policy.track);
  if (!total || !counts || !last || !tails || !models) {
    return make_error("retrain: " + (!total ? total.message() : !counts ? counts.message()
                                     : !last ? last.message() : !tails ? tails.message() : models.message()));
  }
  state = {{"verified_total", *total}, {"category_counts", *counts}};
  json previous = json::object();
  if (*last) {
    json reason = json::parse((*last)->reason, nullptr, false);
    if (reason.is_object() && reason.contains("state") && reason["state"].is_object()) previous = reason["state"];
  }
  json conditions = json::array();
  if (trains && policy.min_initial_verified > 0 && models->empty() && *total >= policy.min_initial_verified) {
    conditions.push_back({{"condition", "initial_model"}, {"verified", *total},
                          {"threshold", policy.min_initial_verified}});
  }
  if (model_under_test && policy.min_model_tail_samples > 0) {
    Result<json> condition = model_tail_condition(db, policy, *model_under_test, *tails);
    if (!condition) return condition.error();
    if (!condition->is_null()) conditions.push_back(*condition);
  }
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
    Result<json> condition = accuracy_drop_condition(db, policy);
    if (!condition) return make_error("retrain: " + condition.message());
    if (!condition->is_null()) conditions.push_back(*condition);
  }
  return conditions;
}

std::string post_webhook(const std::string& url, const std::string& body, double timeout_seconds, bool& ok) {
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
  httplib::Result reply = client.Post(path, body, "application/json");
  if (!reply) return "webhook " + url + ": " + httplib::to_string(reply.error());
  ok = reply->status >= 200 && reply->status < 300;
  return "webhook " + url + ": HTTP " + std::to_string(reply->status) + " " + capped(reply->body);
}

// Holds the snapshots under retrain.keep_snapshots once the event's trainer registered its version;
// says what went (a line for the event's output), or why nothing could.
std::string snapshot_retention_note(Database& db, const RetrainPolicy& policy) {
  if (policy.keep_snapshots <= 0) return "";
  Result<SnapshotPlan> pruned = prune_snapshots(db, policy.snapshot_dir, policy.keep_snapshots, policy.eval.keep_versions);
  if (!pruned) return "snapshot retention: " + pruned.message() + "\n";
  if (pruned->count("remove") + pruned->count("thin") == 0) return "";
  return "snapshot retention (retrain.keep_snapshots " + std::to_string(policy.keep_snapshots) + "): removed " +
         std::to_string(pruned->count("remove")) + " and thinned " + std::to_string(pruned->count("thin")) +
         " older snapshots, " + std::to_string(pruned->bytes_to_free() / 1024) + " KiB freed\n";
}

// Runs the command and the webhook for a recorded event and records how it ended. With neither,
// the event is closed ok with a note saying why nothing ran and where its snapshot is.
}  // namespace

std::string evaluation_leakage_refusal(const ExportSummary& snapshot, double threshold) {
  if (snapshot.items_with_near_duplicate <= 0) return "";
  return "refused: " + std::to_string(snapshot.items_with_near_duplicate) + " of " +
         std::to_string(snapshot.evaluation_items) + " evaluation items have a training row at or above the " +
         "near-duplicate threshold " + fixed_decimals(threshold, 2) + " (largest similarity " +
         fixed_decimals(snapshot.largest_item_train_similarity.value_or(0), 3) + ", measured on the written " +
         "train file: manifest.json's evaluation_set); a version trained on it would be scored on memory";
}

namespace {

Status run_and_finish(Database& db, const RetrainPolicy& policy, const RetrainCommand& command,
                      RetrainOutcome& outcome) {
  bool ok = true;
  if (command.argv.empty() && policy.webhook.empty()) {
    outcome.note = command.why + "; no retrain.webhook either: nothing ran, the snapshot is in " + outcome.snapshot_dir;
    outcome.output += outcome.note + "\n";
  } else if (command.argv.empty()) {
    outcome.output += command.why + "\n";
  }
  if (!command.argv.empty()) {
    ProcessSpec spec;
    spec.argv = expanded_command(command.argv);
    spec.timeout_seconds = policy.timeout_seconds;
    spec.extra_env = {{"TAILFORGE_SNAPSHOT_DIR", outcome.snapshot_dir},
                      {"TAILFORGE_MANIFEST", outcome.manifest_path},
                      {"TAILFORGE_RETRAIN_EVENT", std::to_string(outcome.event_id)},
                      {"TAILFORGE_PARENT_MODEL", outcome.parent_model.value_or("")},
                      {"TAILFORGE_TRACK", policy.track},
                      {"TAILFORGE_DB", std::filesystem::absolute(db.path()).string()}};
    ProcessResult result = run_process(spec);
    ok = result.succeeded();
    outcome.seconds += result.wall_seconds;
    outcome.output += "$ " + command_line(spec.argv) + "\n";
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
                 {"parent_model", outcome.parent_model ? json(*outcome.parent_model) : json()},
                 {"reason", json::parse(outcome.reason, nullptr, false)}};
    outcome.output += post_webhook(policy.webhook, body.dump(), policy.timeout_seconds, delivered) + "\n";
    outcome.seconds += static_cast<double>(now_ms() - started) / 1000.0;
    ok = ok && delivered;
  }
  outcome.status = ok ? "ok" : "failed";
  outcome.output = capped(outcome.output);
  Result<std::optional<ModelRecord>> registered = model_of_retrain_event(db, outcome.event_id);
  if (!registered) return registered.error();
  if (*registered) outcome.model = (*registered)->name;
  outcome.output += snapshot_retention_note(db, policy);
  if (Status s = finish_retrain_event(db, outcome.event_id, outcome.status, outcome.output, outcome.seconds); !s) {
    return make_error("retrain: recording the outcome of event " + std::to_string(outcome.event_id) + ": " + s.message());
  }
  return {};
}

// The version a retraining starts from: the model under test, else the track's newest version.
Result<std::optional<ModelRecord>> version_to_retrain(Database& db, const RetrainPolicy& policy,
                                                      const std::optional<ModelRecord>& under_test) {
  if (under_test) return under_test;
  Result<std::vector<ModelRecord>> models = list_models(db, policy.track);
  if (!models) return models.error();
  if (models->empty()) return std::optional<ModelRecord>();
  return std::optional<ModelRecord>(models->back());
}

Result<std::optional<std::string>> model_name(Database& db, std::optional<int64_t> id) {
  if (!id) return std::optional<std::string>();
  Result<std::optional<ModelRecord>> model = find_model_by_id(db, *id);
  if (!model) return model.error();
  return *model ? std::optional<std::string>((*model)->name) : std::nullopt;
}

}  // namespace

// The "retrain" section's keys are RetrainPolicy's fields (policies/config_section.h); "command" is
// read apart, since its null means unset.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(RetrainPolicy, enabled, track, min_initial_verified,
                                                min_model_tail_samples, min_new_verified, min_tail_gain, accuracy_drop,
                                                baseline_command, webhook, timeout_seconds, on_interrupted,
                                                max_attempts, export_format, snapshot_dir, keep_snapshots,
                                                decontaminate)

Result<RetrainPolicy> retrain_policy_from_json(const json& section, SynthPolicy synth) {
  RetrainPolicy policy;
  policy.synth = std::move(synth);
  policy.track = policy.synth.track;
  if (!section.is_object()) return make_error("retrain: the section must be an object");
  if (Status s = read_config_section(section, "retrain", policy, {.other_keys = {"command"}}); !s) return s.error();
  if (section.contains("command") && !section.at("command").is_null()) {  // null: unset
    policy.command.emplace();
    if (Status s = read_config_value(section.at("command"), "retrain.command", *policy.command); !s) return s.error();
  }
  if (policy.export_format != "alpaca" && policy.export_format != "sharegpt" && policy.export_format != "jsonl") {
    return make_error("retrain.export_format: '" + policy.export_format + "' is not alpaca, sharegpt or jsonl");
  }
  if (policy.on_interrupted != "rerun" && policy.on_interrupted != "fail") {
    return make_error("retrain.on_interrupted: '" + policy.on_interrupted + "' is not rerun or fail");
  }
  if (policy.timeout_seconds <= 0) return make_error("retrain.timeout_seconds must be positive");
  if (policy.max_attempts < 1) return make_error("retrain.max_attempts must be at least 1");
  if (policy.keep_snapshots < 0) return make_error("retrain.keep_snapshots must not be negative (0 keeps every snapshot)");
  for (std::string& path : policy.decontaminate) {  // relative to the working directory, like store.path
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(path, ec)) {
      return make_error("retrain.decontaminate: no file or folder '" + path + "'");
    }
    path = std::filesystem::absolute(path, ec).lexically_normal().string();
  }
  return policy;
}

RetrainCommand retrain_command_for(const RetrainPolicy& policy, const std::optional<ModelRecord>& parent) {
  if (policy.command) {
    return {*policy.command, policy.command->empty() ? "retrain.command is []" : "retrain.command"};
  }
  if (!parent) {
    return {policy.baseline_command,
            "retrain.command is unset and the track has no model yet: the baseline learner "
            "(retrain.baseline_command) trains a first version"};
  }
  if (!is_users_model(*parent)) {
    const Track* track = find_track(parent->track);
    std::string whose = is_baseline_learner_version(*parent) ? "a baseline learner version"
                        : track && track->builtin_model ? std::string(track->builtin_model_summary)
                                                        : "a built-in model";
    return {policy.baseline_command, "retrain.command is unset and " + parent->name + " is " + whose +
                                         ": the baseline learner (retrain.baseline_command) trains the next version"};
  }
  return {{},
          "no retrain command: the model under test " + parent->name +
              " is not the baseline learner; set retrain.command to your trainer"};
}

Result<RetrainPlan> next_retrain_plan(Database* db, const RetrainPolicy& policy) {
  RetrainPlan plan;
  plan.enabled = policy.enabled;
  plan.track = policy.track;
  plan.webhook = policy.webhook;
  plan.under_test.why = "no database yet";
  if (db) {
    Result<UnderTest> tested = model_under_test(*db, policy.synth.model_under_test, policy.track);
    if (!tested) return tested.error();
    plan.under_test = *tested;
    Result<std::optional<ModelRecord>> parent = version_to_retrain(*db, policy, tested->model);
    if (!parent) return parent.error();
    plan.parent = *parent;
  }
  plan.command = retrain_command_for(policy, plan.parent);
  if (!plan.command.argv.empty()) plan.expanded_argv = expanded_command(plan.command.argv);
  return plan;
}

std::string describe_retrain_plan(const RetrainPlan& plan) {
  if (!plan.enabled) return "retrain.enabled is false: no retrain trigger";
  std::string text = "at the next retrain trigger of " + plan.track + ": ";
  if (!plan.expanded_argv.empty()) {
    text += "`" + command_line(plan.expanded_argv) + "` (" + plan.command.why + ")";
  } else {
    text += "no command (" + plan.command.why + ")";
  }
  if (!plan.webhook.empty()) {
    text += ", then POST " + plan.webhook;
  } else if (plan.expanded_argv.empty()) {
    text += ", no webhook: only a snapshot is exported";
  }
  text += ", for ";
  if (plan.under_test.model) {
    text += plan.under_test.model->name + ", the model under test (" + plan.under_test.why + ")";
  } else if (plan.parent) {
    text += plan.parent->name + ", the track's newest version (no model under test: " + plan.under_test.why + ")";
  } else {
    text += "a first version (no model under test: " + plan.under_test.why + ")";
  }
  return text;
}

Result<std::optional<RetrainOutcome>> maybe_trigger_retrain(Database& db, const RetrainPolicy& policy,
                                                            int64_t cycle_id) {
  if (!policy.enabled) return std::optional<RetrainOutcome>();
  Result<UnderTest> tested = model_under_test(db, policy.synth.model_under_test, policy.track);
  if (!tested) return tested.error();
  Result<std::optional<ModelRecord>> parent = version_to_retrain(db, policy, tested->model);
  if (!parent) return parent.error();
  const RetrainCommand command = retrain_command_for(policy, *parent);
  json state;
  Result<json> conditions =
      fired_conditions(db, policy, cycle_id, tested->model, !command.argv.empty() || !policy.webhook.empty(), state);
  if (!conditions) return conditions.error();
  if (conditions->empty()) return std::optional<RetrainOutcome>();
  const std::optional<ModelRecord>& model = *parent;

  // Newly verified samples may become evaluation items before the snapshot could train on them.
  EvalSetRefresh refreshed;
  if (policy.eval.enabled) {
    Result<EvalSetRefresh> refresh = refresh_eval_set(db, policy.eval, policy.synth, policy.track);
    if (!refresh) return make_error("retrain: " + refresh.message());
    refreshed = *refresh;
  }

  ExportOptions options{policy.track, policy.export_format, "", policy.synth, {}, policy.decontaminate, policy.eval.held_out};
  if (model) {
    Result<std::vector<TailReportRow>> tails = tail_report_rows(db, cycle_id);
    if (!tails) return tails.error();
    options.boosted = model_failure_tails(*tails, model->id);
  }
  const Track* track = find_track(policy.track);
  const bool curated = track && track->exported == Track::Exported::curated_kernels;
  Result<std::string> hash = curated ? kernelopt_snapshot_hash(db, options) : export_snapshot_hash(db, options);
  if (!hash) return make_error("retrain: " + hash.message());
  Result<bool> recorded = retrain_snapshot_recorded(db, *hash);
  if (!recorded) return recorded.error();
  if (*recorded) return std::optional<RetrainOutcome>();

  options.out_dir = policy.snapshot_dir + "/" + hash->substr(0, 16);
  Result<ExportSummary> snapshot = curated ? export_kernelopt_snapshot(db, options) : export_dataset(db, options);
  if (!snapshot) return make_error("retrain: exporting snapshot: " + snapshot.message());
  if (snapshot->samples == 0) return std::optional<RetrainOutcome>();

  RetrainOutcome outcome;
  if (model) outcome.parent_model = model->name;
  json reason = {{"conditions", *conditions},
                 {"state", state},
                 {"track", policy.track},
                 {"near_duplicate_threshold", policy.synth.dedup.threshold},
                 {"cycle_id", cycle_id},
                 {"parent_model", model ? json(model->name) : json()},
                 {"snapshot", {{"train_samples", snapshot->train_samples},
                               {"train_rows", snapshot->train_rows},
                               {"samples", snapshot->samples},
                               {"held_back_for_evaluation", snapshot->held_back_for_evaluation},
                               {"evaluation_set_version", refreshed.version},
                               {"largest_evaluation_item_similarity",
                                snapshot->largest_item_train_similarity ? json(*snapshot->largest_item_train_similarity)
                                                                        : json()},
                               {"evaluation_items_with_near_duplicate", snapshot->items_with_near_duplicate}}}};
  outcome.reason = reason.dump();
  outcome.snapshot_hash = snapshot->snapshot_hash;
  outcome.snapshot_dir = std::filesystem::absolute(options.out_dir).string();
  outcome.manifest_path = std::filesystem::absolute(snapshot->manifest_path).string();
  RetrainEventRecord event;
  event.cycle_id = cycle_id;
  event.reason = outcome.reason;
  event.snapshot_hash = outcome.snapshot_hash;
  event.snapshot_dir = outcome.snapshot_dir;
  event.manifest = outcome.manifest_path;
  if (!command.argv.empty()) event.command = json(command.argv).dump();
  event.status = "running";
  if (model) event.parent_model_id = model->id;
  Result<std::optional<int64_t>> id = insert_retrain_event_if_new(db, event);
  if (!id) return id.error();
  if (!*id) return std::optional<RetrainOutcome>();  // another run recorded this snapshot first
  outcome.event_id = **id;
  if (std::string refusal = evaluation_leakage_refusal(*snapshot, policy.synth.dedup.threshold); !refusal.empty()) {
    outcome.status = "failed";
    outcome.note = refusal;
    outcome.output = refusal + "\n";
    if (Status s = finish_retrain_event(db, outcome.event_id, outcome.status, outcome.output, 0); !s) return s.error();
    return std::optional<RetrainOutcome>(std::move(outcome));
  }
  if (Status s = run_and_finish(db, policy, command, outcome); !s) return s.error();
  return std::optional<RetrainOutcome>(std::move(outcome));
}

Result<std::vector<RetrainOutcome>> resume_interrupted_retrains(Database& db, const RetrainPolicy& policy) {
  Result<std::vector<RetrainEventRecord>> events = interrupted_retrain_events(db);
  if (!events) return events.error();
  std::vector<RetrainOutcome> outcomes;
  for (const RetrainEventRecord& event : *events) {
    RetrainOutcome outcome;
    outcome.event_id = event.id;
    outcome.reason = event.reason;
    outcome.snapshot_hash = event.snapshot_hash;
    outcome.snapshot_dir = event.snapshot_dir.value_or("");
    outcome.manifest_path = event.manifest.value_or("");
    outcome.attempts = event.attempts;
    Result<std::optional<std::string>> parent = model_name(db, event.parent_model_id);
    if (!parent) return parent.error();
    outcome.parent_model = *parent;
    std::string previous = event.output.value_or("");
    bool rerun = policy.on_interrupted == "rerun" && event.attempts < policy.max_attempts &&
                 std::filesystem::exists(outcome.manifest_path);
    if (!rerun) {
      outcome.status = "failed";
      outcome.output = previous + "interrupted by a crash after " + std::to_string(event.attempts) +
                       " attempt(s); retrain.on_interrupted is " + policy.on_interrupted + ", retrain.max_attempts " +
                       std::to_string(policy.max_attempts) +
                       (std::filesystem::exists(outcome.manifest_path) ? "" : "; the snapshot is gone") + "\n";
      if (Status s = finish_retrain_event(db, event.id, outcome.status, outcome.output, event.seconds.value_or(0)); !s) {
        return s.error();
      }
      outcomes.push_back(std::move(outcome));
      continue;
    }
    Result<bool> restarted = restart_retrain_event(db, event.id);
    if (!restarted) return restarted.error();
    if (!*restarted) continue;
    outcome.attempts = event.attempts + 1;
    outcome.output = "attempt " + std::to_string(outcome.attempts) + " after an interruption by a crash\n";
    std::optional<ModelRecord> retrained;
    if (event.parent_model_id) {
      Result<std::optional<ModelRecord>> found = find_model_by_id(db, *event.parent_model_id);
      if (!found) return found.error();
      retrained = *found;
    }
    if (Status s = run_and_finish(db, policy, retrain_command_for(policy, retrained), outcome); !s) return s.error();
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

}  // namespace tailforge
