// The LLM agents' roles over one LlmClient: generator (persona prompt -> CUDA program), translator
// (cuda2hip, sass2rdna3, ptx2cuda, c2x86) and synthesizer (failing sample -> N similar samples).
// Prompt texts are data (config/llm_prompts.json); this module does not store samples.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "agents/llm/client.h"

namespace tailforge {

struct PromptPair {
  std::string system;
  std::string user;  // with {placeholders}
};

struct LlmPrompts {
  PromptPair generator;                       // {persona_prompt}, {api_request}
  std::map<std::string, PromptPair> translators;  // direction -> prompts with {source}
  PromptPair synthesizer;                     // {sample}, {category}, {evidence}, {count}, {batch}, {api_request}
};

// Loads the prompt file; errors name the file and the JSON path ("translators.c2x86.user").
Result<LlmPrompts> load_llm_prompts(const std::string& path);

// Replaces each {name} by its value; a placeholder without a value is left as is.
std::string fill_prompt(const std::string& text, const std::map<std::string, std::string>& values);

// The result of one role call: the response (usage, reasoning, latency, failure) and the code.
struct AgentOutput {
  ChatResponse response;
  std::vector<std::string> programs;  // the fenced blocks, in order (one for generator/translator)
  std::string prompt_hash;            // sha256 of the messages sent, for the sample's provenance
};

// The request that names the CUDA API a program must use, for {api_request} in the generator's
// and synthesizer's prompts: "" when `names` is empty. A prompt file without the placeholder gets
// the request after its user message, so the names are never lost.
std::string api_request_text(const std::vector<std::string>& names);

AgentOutput llm_generate_program(LlmClient& client, const LlmPrompts& prompts, const std::string& persona_prompt,
                                 Database* cache, const std::string& api_request = "");
// direction: a key of prompts.translators; an unknown one fails with agent.llm.unknown_direction.
AgentOutput llm_translate(LlmClient& client, const LlmPrompts& prompts, const std::string& direction,
                          const std::string& source, Database* cache);
// What the synthesizer is asked: `count` new samples like a failing one.
struct SimilarRequest {
  std::string failing_sample;
  std::string category;           // its failure category, or the tail it stands for
  std::string evidence = "none";  // the failure's evidence line
  int count = 10;
  std::string batch = "1";  // varies the request (and its cache entry) between runs
  std::string api_request;  // api_request_text of an API tail's uncovered names; "" otherwise
};

// Asks for `request.count` samples like the failing one; fewer blocks than asked is not a failure.
AgentOutput llm_synthesize_similar(LlmClient& client, const LlmPrompts& prompts, const SimilarRequest& request,
                                   Database* cache);

// The reply's first block tagged with one of `languages`, else its first block ("" when none).
std::string preferred_code_block(const ChatResponse& response, std::initializer_list<const char*> languages);

// One llm_call row per request the call sent, or one cached row when the cache answered, in
// `db` (the caller's connection). A row that cannot be stored is logged, never fatal.
void record_llm_requests(Database& db, const LlmOptions& options, const std::string& role, const AgentOutput& output);

}  // namespace tailforge
