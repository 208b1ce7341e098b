// The daemon's LLM agents: one thread-safe LlmClient per pipeline, built from the "llm" section
// with its hourly budget restored from the store; the generator, CUDA->HIP translator and
// synthesizer roles, each call under one "llm" resource slot; one llm_call row per request,
// written in the calling worker's connection. Whether a job uses them or the built-in agents is
// the pipeline's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/llm/roles.h"
#include "daemon/resource_slots.h"
#include "store/database.h"
#include "verifier/chain.h"

namespace tailforge {

struct LlmProgram {
  std::string source;       // the reply's code block
  std::string prompt_hash;  // sha256 of the messages sent, as in the llm_call rows
};

struct LlmSynthesis {
  std::vector<std::string> programs;  // the reply's non-empty code blocks, in order
  std::string prompt_hash;            // sha256 of the messages sent, as in the llm_call rows
  std::string problem;                // why the reply gave no or fewer programs ("" when it did not fail)
};

class LlmAgents {
 public:
  LlmAgents(LlmOptions options, LlmPrompts prompts, ResourceSlots& slots);

  // Reads the "llm" section and its prompt file, and counts the requests `db` recorded in the
  // last hour against the hourly budgets. Needs an "llm" slot in `slots`. Errors name the key or file.
  static Result<std::unique_ptr<LlmAgents>> create(const nlohmann::json& llm_section, Database& db,
                                                   ResourceSlots& slots);

  // A program for the persona prompt; a failed call is an error naming its agent.llm.* category.
  // `db` is the worker's own connection: the response cache and the llm_call rows.
  // `api_request`: api_request_text of the API names the program must use ("" for none).
  Result<LlmProgram> generate(Database& db, const std::string& persona_prompt, const std::string& api_request = "");
  // The verifier's CUDA->HIP translation; a failed call fails with its agent.llm.* category.
  TranslateOutcome translate_cuda_to_hip(Database& db, const std::string& cuda_source);
  // The synthesizer's programs like a failing sample. An endpoint that cannot answer now
  // (fault_may_pass) is an error naming its agent.llm.* category; any other bad reply
  // (no or empty code blocks, malformed, refused) gives no programs, and a reply cut at
  // llm.max_tokens gives its complete blocks.
  Result<LlmSynthesis> synthesize_similar(Database& db, const SimilarRequest& request);

  const std::string& model() const { return client_.options().model; }

 private:
  // Runs one role call under an "llm" slot and records its requests.
  template <typename Call>
  AgentOutput run(Database& db, const char* role, Call call);

  LlmClient client_;
  LlmPrompts prompts_;
  ResourceSlots& slots_;
};

}  // namespace tailforge
