// A model under test answers a track's source with its translation: an OpenAI-compatible
// endpoint (chat completions with the track's prompt from config/llm_prompts.json), a command
// (the source on stdin, the translation on stdout, under a timeout), or a built-in model (the
// rule translator; for kernelopt the built-in strategies, agents/kernelopt/strategy_model.h), so
// all three are compared alike. It only answers; judging the answer is
// synth/evaluate.h's.
#pragma once

#include <memory>
#include <string>

#include "agents/llm/client.h"
#include "agents/llm/roles.h"
#include "agents/translate/hipify.h"
#include "store/models.h"
#include "verifier/stage.h"

namespace tailforge {

struct ModelAnswer {
  bool ok = false;
  std::string output;    // the translation
  std::string reasoning; // what the model said besides it, where it says something (kernelopt curates on it)
  std::string category;  // when !ok: model.command.*, agent.llm.*, translate.unsupported.*
  std::string message;   // when !ok: what happened, one line or a little more
  // The endpoint failed, not the model (llm_client.h's endpoint_fault: down, rate limited, a
  // wrong key, URL or model id, a body that is no completion): the answer says nothing about
  // the item, which stays unjudged and is asked again later.
  bool unavailable = false;
  int retry_after_ms = -1;  // a 429's Retry-After
  std::string prompt_hash;  // openai: the messages sent
  double seconds = 0;
};

// What every model kind may need, shared by all models of a pipeline. It must outlive them.
struct ModelRuntime {
  const HipifyRules* hipify_rules = nullptr;  // builtin
  LlmOptions llm;                             // openai: retries, timeouts, budgets (base_url/model replaced)
  const LlmPrompts* prompts = nullptr;        // openai: translators.<track>
  double command_timeout_seconds = 300;       // command, unless the model sets timeout_seconds
  ResourceGate* gate = nullptr;               // command: a cpu slot (openai: llm.max_concurrent_requests)
};

class ModelUnderTest {
 public:
  virtual ~ModelUnderTest() = default;
  // Answers one source. Thread-safe. `db` is the caller's connection (LLM cache and llm_call rows).
  virtual ModelAnswer answer(Database& db, const std::string& source) = 0;
};

// Builds the caller for a registered model; errors name the model and what is missing
// (an openai model without an endpoint, a command model without argv, an unknown kind).
Result<std::unique_ptr<ModelUnderTest>> make_model_under_test(const ModelRecord& model, const ModelRuntime& runtime);

// The LLM options an openai model is asked with: `base` (retries, timeouts, budgets) with the
// model's endpoint, model id, key variable, CA file, request fields and timeout.
LlmOptions model_llm_options(const ModelRecord& model, const LlmOptions& base);

// Checks a model definition before it is stored: its name, kind and the fields its kind needs
// (whether its track takes it is check_model_track's, synth/tracks.h).
Status validate_model_definition(const ModelRecord& model);

}  // namespace tailforge
