// The registry of models under test: versions of a translation model, each with how it is
// called (an OpenAI-compatible endpoint, a command, or the built-in translator), the track it
// translates, its parent version and the retrain event that produced it. SQL only; what a
// model kind means and how it is called is agents/model_runner.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

struct ModelRecord {
  int64_t id = 0;
  std::string name;
  std::string kind = "openai";  // openai, command, builtin
  std::string track = "cuda2hip";
  std::optional<std::string> endpoint;  // openai: the base URL
  std::string parameters = "{}";        // JSON object: model_id, command, timeout_seconds
  std::optional<int64_t> parent_id;
  std::optional<int64_t> retrain_event_id;
  bool active = true;  // evaluated every cycle
  int64_t created_ms = 0;
};

// Inserts the model and, when it names a retrain event, records it as that event's result, in
// one transaction. Registering the same name again with the same kind, endpoint, parameters,
// parent and event returns the existing id (a retried trainer registers once); a different
// definition under an existing name is an error naming the model.
Result<int64_t> insert_model(Database& db, const ModelRecord& model);
Result<std::optional<ModelRecord>> find_model(Database& db, const std::string& name);
Result<std::optional<ModelRecord>> find_model_by_id(Database& db, int64_t id);
// The model a retrain event produced, if its trainer registered one.
Result<std::optional<ModelRecord>> model_of_retrain_event(Database& db, int64_t retrain_event_id);
// All models, oldest first; only the track's when `track` is not empty.
Result<std::vector<ModelRecord>> list_models(Database& db, const std::string& track = "");
// Active models are evaluated every cycle; a retired one keeps its results. False: no such model.
Result<bool> set_model_active(Database& db, const std::string& name, bool active);
// How many models have a name starting with `prefix` (for naming the next version).
Result<int64_t> count_models_named(Database& db, const std::string& prefix);

// A model whose evaluation waits because its endpoint failed (a wrong key, URL or model id, a
// server down or rate limiting): no request is sent before resume_ms; the next answer the server
// gives ends the pause.
struct ModelPause {
  int64_t model_id = 0;
  std::string model_name, track;
  std::string category;  // agent.llm.<reason>
  std::string message;   // the last fault: URL, HTTP status, the server's message
  int64_t since_ms = 0;  // the first fault of this pause
  int64_t resume_ms = 0;
  int64_t faults = 0;    // faults since the pause began
};

// Records a fault: starts the pause or extends it to `resume_ms` with the newest fault.
Status pause_model_evaluation(Database& db, int64_t model_id, const std::string& category,
                              const std::string& message, int64_t resume_ms);
// Ends the pause (the server answered); whether there was one.
Result<bool> end_model_pause(Database& db, int64_t model_id);
Result<std::optional<ModelPause>> find_model_pause(Database& db, int64_t model_id);
// Every paused model, by name.
Result<std::vector<ModelPause>> list_model_pauses(Database& db);

}  // namespace tailforge
