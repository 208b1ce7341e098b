// The LLM agents' roles over one LlmClient: generator (persona prompt -> CUDA program), translator
// (cuda2hip, sass2rdna3, ptx2cuda, c2x86) and synthesizer (failing sample -> N similar samples).
// Prompt texts are data (config/llm_prompts.json); this module does not store samples.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agents/llm_client.h"

namespace tailforge {

struct PromptPair {
  std::string system;
  std::string user;  // with {placeholders}
};

struct LlmPrompts {
  PromptPair generator;                       // {persona_prompt}
  std::map<std::string, PromptPair> translators;  // direction -> prompts with {source}
  PromptPair synthesizer;                     // {sample}, {category}, {count}
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

AgentOutput llm_generate_program(LlmClient& client, const LlmPrompts& prompts, const std::string& persona_prompt,
                                 Database* cache);
// direction: a key of prompts.translators; an unknown one fails with agent.llm.unknown_direction.
AgentOutput llm_translate(LlmClient& client, const LlmPrompts& prompts, const std::string& direction,
                          const std::string& source, Database* cache);
// Asks for `count` samples like `failing_sample`; fewer blocks than asked is not a failure.
AgentOutput llm_synthesize_similar(LlmClient& client, const LlmPrompts& prompts, const std::string& failing_sample,
                                   const std::string& category, int count, Database* cache);

}  // namespace tailforge
