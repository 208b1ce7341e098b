// The retrain trigger: when a condition holds (a first model is due, the model under test fails
// a tail that synthesis has since filled, enough new verified data, a tail's growth, an accuracy
// drop), it refreshes the evaluation set, exports a training snapshot that holds none of it,
// records a retrain_event (once per snapshot, restarts included) and runs the command
// (retrain_command_for) and/or webhook. The command learns from the snapshot and registers the
// version it produced (`tailforge model add --parent ... --retrain-event ...`); the event then
// names that version. An event a crash left running is rerun or failed by policy. It trains
// nothing itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "synth/eval_set.h"
#include "synth/export.h"
#include "synth/model_selection.h"
#include "synth/policy.h"

namespace tailforge {

// The "retrain" section of the configuration. A threshold of 0 turns its condition off.
struct RetrainPolicy {
  bool enabled = true;
  std::string track = "cuda2hip";
  int64_t min_initial_verified = 20;    // a first version once the track has no model and this many verified
  int64_t min_model_tail_samples = 5;   // verified samples synthesized for a tail the model under test fails
  int64_t min_new_verified = 500;       // verified samples of the track since the last event
  int64_t min_tail_gain = 50;           // verified samples gained by one tracked feature/domain
  double accuracy_drop = 0.05;          // newest model's accuracy below the best earlier one by this
  // argv; the word {tailforge} stands for this tailforge executable. Empty: no command. Unset
  // (null or absent in the config): chosen at each trigger by retrain_command_for.
  std::optional<std::vector<std::string>> command;
  // The offline baseline learner's trainer: what an unset command runs while the version to
  // retrain is not the user's own model (synth/model_selection.h).
  std::vector<std::string> baseline_command = {"{tailforge}", "baseline", "train", "--min-support", "8"};
  std::string webhook;               // http://127.0.0.1:PORT/path; empty: none
  double timeout_seconds = 3600;
  std::string on_interrupted = "rerun";  // an event a crash left running: rerun or fail
  int64_t max_attempts = 3;              // runs of one event's command, reruns included
  std::string export_format = "alpaca";
  std::string snapshot_dir = "snapshots";  // each snapshot goes in <snapshot_dir>/<hash prefix>
  int64_t keep_snapshots = 5;  // whole snapshots kept after each retrain (synth/snapshot_retention.h); 0: all
  // Benchmark folders and JSONL files each snapshot is decontaminated against (absolute paths;
  // synth/decontaminate.h).
  std::vector<std::string> decontaminate;
  SynthPolicy synth;  // pairs, split and weights of the exported snapshot; the model under test
  EvalPolicy eval;    // the evaluation set is refreshed before each export
};

// Reads the "retrain" section; unknown keys and wrong types are errors naming "retrain.<key>".
Result<RetrainPolicy> retrain_policy_from_json(const nlohmann::json& section, SynthPolicy synth);

struct RetrainOutcome {
  int64_t event_id = 0;
  std::string reason;  // JSON text: the conditions and their figures, the parent, the snapshot
  std::string snapshot_hash;
  std::string snapshot_dir;
  std::string manifest_path;
  std::string status;  // ok, failed
  std::string output;  // command output and webhook reply, capped
  double seconds = 0;
  int64_t attempts = 1;
  std::optional<std::string> parent_model;  // the version it retrains
  std::optional<std::string> model;         // the version the command registered
  std::string note;  // set when neither a command nor a webhook ran: why, and where the snapshot is
};

// Why a snapshot must not be trained on: some evaluation item has a training row at or above the
// near-duplicate threshold, measured on the written train file (ExportSummary's item figures); ""
// when none has. The retrain trigger records such an event as failed and runs nothing.
std::string evaluation_leakage_refusal(const ExportSummary& snapshot, double threshold);

// The command the trigger runs to retrain `parent` (the model under test, else the track's newest
// version; none: a first version): retrain.command when it is set; unset, the baseline learner
// (retrain.baseline_command) unless `parent` is the user's own model, which no command here can
// retrain. `why` says which, for the event's output, the log and doctor.
struct RetrainCommand {
  std::vector<std::string> argv;  // as configured ({tailforge} not expanded); empty: none
  std::string why;
};
RetrainCommand retrain_command_for(const RetrainPolicy& policy, const std::optional<ModelRecord>& parent);

// What the next trigger would do, without firing it (for `tailforge doctor`): the model under test
// of retrain.track, the version it retrains, the command, the webhook. `db` null: no database yet.
struct RetrainPlan {
  bool enabled = true;
  std::string track;
  UnderTest under_test;
  std::optional<ModelRecord> parent;
  RetrainCommand command;
  std::vector<std::string> expanded_argv;  // {tailforge} replaced by this executable
  std::string webhook;
};
Result<RetrainPlan> next_retrain_plan(Database* db, const RetrainPolicy& policy);
// One sentence: which command (or none, and why) or webhook, for which model.
std::string describe_retrain_plan(const RetrainPlan& plan);

// Fires when a condition holds and the current snapshot was never recorded; nothing otherwise.
Result<std::optional<RetrainOutcome>> maybe_trigger_retrain(Database& db, const RetrainPolicy& policy,
                                                            int64_t cycle_id);

// Events left 'interrupted' by a crash: each runs its command again while attempts remain and
// on_interrupted is "rerun", else it is closed as failed. Returns what was done.
Result<std::vector<RetrainOutcome>> resume_interrupted_retrains(Database& db, const RetrainPolicy& policy);

}  // namespace tailforge
