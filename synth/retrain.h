// The retrain trigger: when enough new verified data, tail growth or an accuracy drop is seen,
// exports a snapshot, records a retrain_event (once per snapshot, restarts included) and runs the
// configured command and/or webhook. Also the model registry. It does not train anything itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "synth/policy.h"

namespace tailforge {

// The "retrain" section of the configuration. A threshold of 0 turns its condition off.
struct RetrainPolicy {
  bool enabled = true;
  std::string track = "cuda2hip";
  int64_t min_new_verified = 500;   // verified samples of the track since the last event
  int64_t min_tail_gain = 50;       // verified samples gained by one tracked feature/domain
  double accuracy_drop = 0.05;      // newest model's accuracy below the best earlier one by this
  std::vector<std::string> command;  // argv; empty: no command
  std::string webhook;               // http://127.0.0.1:PORT/path; empty: none
  double timeout_seconds = 3600;
  std::string export_format = "alpaca";
  std::string snapshot_dir = "snapshots";  // each snapshot goes in <snapshot_dir>/<hash prefix>
  SynthPolicy synth;  // pairs, split and weights of the exported snapshot
};

// Reads the "retrain" section; unknown keys and wrong types are errors naming "retrain.<key>".
Result<RetrainPolicy> retrain_policy_from_json(const nlohmann::json& section, SynthPolicy synth);

struct RetrainOutcome {
  int64_t event_id = 0;
  std::string reason;  // JSON text: the condition and its figures
  std::string snapshot_hash;
  std::string snapshot_dir;
  std::string manifest_path;
  std::string status;  // ok, failed
  std::string output;  // command output and webhook reply, capped
  double seconds = 0;
};

// Fires when a condition holds and the current snapshot was never recorded; nothing otherwise.
Result<std::optional<RetrainOutcome>> maybe_trigger_retrain(Database& db, const RetrainPolicy& policy,
                                                            int64_t cycle_id);

// Registers a model version (`tailforge model add --name --endpoint`); returns its id.
Result<int64_t> add_model(Database& db, const std::string& name, const std::string& endpoint);

}  // namespace tailforge
