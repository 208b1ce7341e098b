#include "agents/llm/roles.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include <spdlog/spdlog.h>

#include "base/sha256.h"
#include "store/llm_calls.h"

namespace tailforge {

using nlohmann::json;

namespace {

Result<PromptPair> prompt_pair(const json& root, const std::string& at) {
  const json* node = &root;
  std::string path;
  size_t start = 0;
  while (start <= at.size()) {
    size_t dot = at.find('.', start);
    std::string key = at.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node->is_object() || !node->contains(key)) return make_error(at + ": missing");
    node = &(*node)[key];
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  PromptPair pair;
  for (auto [key, target] : {std::pair{"system", &pair.system}, std::pair{"user", &pair.user}}) {
    if (!node->contains(key) || !(*node)[key].is_string()) return make_error(at + "." + key + ": missing or not a string");
    *target = (*node)[key].get<std::string>();
  }
  return pair;
}

AgentOutput run_role(LlmClient& client, const PromptPair& prompt, const std::map<std::string, std::string>& values,
                     Database* cache) {
  ChatRequest request;
  request.messages = {{"system", prompt.system}, {"user", fill_prompt(prompt.user, values)}};
  AgentOutput output;
  output.prompt_hash = sha256_hex(request.messages[0].content + "\n\x1f" + request.messages[1].content);
  output.response = client.complete(request, cache);
  for (const CodeBlock& block : output.response.code_blocks) output.programs.push_back(block.code);
  return output;
}

// The prompt with {api_request} after its user message when it has no place for it.
PromptPair with_api_request(const PromptPair& prompt, const std::string& api_request) {
  PromptPair out = prompt;
  if (!api_request.empty() && out.user.find("{api_request}") == std::string::npos) out.user += "{api_request}";
  return out;
}

}  // namespace

std::string api_request_text(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) list += (i ? ", " : "") + names[i];
  return "\n\nUse these CUDA API names, which the training corpus lacks, each so that the program's checked and "
         "printed result depends on it (a call made only to mention a name does not count): " + list + ".";
}

Result<LlmPrompts> load_llm_prompts(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error("cannot read LLM prompts '" + path + "'");
  try {
    json root = json::parse(in);
    LlmPrompts prompts;
    auto generator = prompt_pair(root, "generator");
    if (!generator) return make_error(path + ": " + generator.message());
    prompts.generator = *generator;
    auto synthesizer = prompt_pair(root, "synthesizer");
    if (!synthesizer) return make_error(path + ": " + synthesizer.message());
    prompts.synthesizer = *synthesizer;
    if (!root.contains("translators") || !root["translators"].is_object())
      return make_error(path + ": translators: missing or not an object");
    for (const auto& [direction, node] : root["translators"].items()) {
      auto pair = prompt_pair(root, "translators." + direction);
      if (!pair) return make_error(path + ": " + pair.message());
      prompts.translators[direction] = *pair;
    }
    return prompts;
  } catch (const json::exception& e) {
    return make_error(path + ": invalid JSON: " + e.what());
  }
}

std::string fill_prompt(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find('{', i);
    if (open == std::string::npos) break;
    size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    auto value = values.find(text.substr(open + 1, close - open - 1));
    out.append(text, i, open - i);
    if (value != values.end()) {
      out += value->second;
      i = close + 1;
    } else {
      out += '{';
      i = open + 1;
    }
  }
  out.append(text, std::min(i, text.size()), std::string::npos);
  return out;
}

AgentOutput llm_generate_program(LlmClient& client, const LlmPrompts& prompts, const std::string& persona_prompt,
                                 Database* cache, const std::string& api_request) {
  return run_role(client, with_api_request(prompts.generator, api_request),
                  {{"persona_prompt", persona_prompt}, {"api_request", api_request}}, cache);
}

AgentOutput llm_translate(LlmClient& client, const LlmPrompts& prompts, const std::string& direction,
                          const std::string& source, Database* cache) {
  auto prompt = prompts.translators.find(direction);
  if (prompt == prompts.translators.end()) {
    AgentOutput output;
    output.response.category = "agent.llm.unknown_direction";
    output.response.message = "no translator prompt for direction '" + direction + "'";
    return output;
  }
  return run_role(client, prompt->second, {{"source", source}}, cache);
}

AgentOutput llm_synthesize_similar(LlmClient& client, const LlmPrompts& prompts, const SimilarRequest& request,
                                   Database* cache) {
  return run_role(client, with_api_request(prompts.synthesizer, request.api_request),
                  {{"sample", request.failing_sample},
                   {"category", request.category},
                   {"evidence", request.evidence},
                   {"count", std::to_string(request.count)},
                   {"batch", request.batch},
                   {"api_request", request.api_request}},
                  cache);
}

std::string preferred_code_block(const ChatResponse& response, std::initializer_list<const char*> languages) {
  for (const CodeBlock& block : response.code_blocks) {
    for (const char* language : languages) {
      if (block.language == language) return block.code;
    }
  }
  return response.code_blocks.empty() ? "" : response.code_blocks.front().code;
}

void record_llm_requests(Database& db, const LlmOptions& options, const std::string& role, const AgentOutput& output) {
  const ChatResponse& response = output.response;
  auto row = [&](const std::string& status, int prompt, int completion, int reasoning, int64_t latency,
                 const std::string& finish_reason, bool cached) {
    LlmCallRecord record{.endpoint = options.base_url,
                         .model = options.model,
                         .role = role,
                         .prompt_hash = output.prompt_hash,
                         .status = status,
                         .prompt_tokens = prompt,
                         .completion_tokens = completion,
                         .reasoning_tokens = reasoning,
                         .latency_ms = latency,
                         .finish_reason = finish_reason.empty() ? std::nullopt : std::optional(finish_reason),
                         .cached = cached};
    // A lost row only makes /metrics and the restored budget low; the job goes on.
    if (Status s = insert_llm_call(db, record); !s) spdlog::warn("{}", s.message());
  };
  if (response.from_cache) {
    row("ok", response.prompt_tokens, response.completion_tokens, response.reasoning_tokens, 0, response.finish_reason,
        true);
  }
  for (const SentRequest& sent : response.sent) {
    row(sent.status, sent.prompt_tokens, sent.completion_tokens, sent.reasoning_tokens, sent.latency_ms,
        sent.finish_reason, false);
  }
}

}  // namespace tailforge
