// The retrain trigger: when a condition holds (a first model is due, the model under test fails
// a tail that synthesis has since filled, enough new verified data, a tail's growth, an accuracy
// drop), it refreshes the evaluation set, exports a training snapshot that holds none of it,
// records a retrain_event (once per snapshot, restarts included) and runs the configured command
// and/or webhook. The command learns from the snapshot and registers the version it produced
// (`tailforge model add --parent ... --retrain-event ...`); the event then names that version.
// An event a crash left running is rerun or failed by policy. It trains nothing itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "synth/eval_set.h"
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
  // argv; the word {tailforge} stands for this tailforge executable. Empty: no command.
  std::vector<std::string> command;
  std::string webhook;               // http://127.0.0.1:PORT/path; empty: none
  double timeout_seconds = 3600;
  std::string on_interrupted = "rerun";  // an event a crash left running: rerun or fail
  int64_t max_attempts = 3;              // runs of one event's command, reruns included
  std::string export_format = "alpaca";
  std::string snapshot_dir = "snapshots";  // each snapshot goes in <snapshot_dir>/<hash prefix>
  int64_t keep_snapshots = 5;  // whole snapshots kept after each retrain (synth/snapshot_retention.h); 0: all
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
};

// Fires when a condition holds and the current snapshot was never recorded; nothing otherwise.
Result<std::optional<RetrainOutcome>> maybe_trigger_retrain(Database& db, const RetrainPolicy& policy,
                                                            int64_t cycle_id);

// Events left 'interrupted' by a crash: each runs its command again while attempts remain and
// on_interrupted is "rerun", else it is closed as failed. Returns what was done.
Result<std::vector<RetrainOutcome>> resume_interrupted_retrains(Database& db, const RetrainPolicy& policy);

}  // namespace tailforge
