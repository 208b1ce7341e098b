#include "daemon/llm_agents.h"

#include <chrono>
#include <initializer_list>

#include <spdlog/spdlog.h>

#include "policies/config.h"
#include "store/llm_calls.h"

namespace tailforge {

namespace {

// The reply's block in one of `languages`, else its first block.
std::string chosen_block(const ChatResponse& response, std::initializer_list<const char*> languages) {
  for (const CodeBlock& block : response.code_blocks) {
    for (const char* language : languages) {
      if (block.language == language) return block.code;
    }
  }
  return response.code_blocks.empty() ? "" : response.code_blocks.front().code;
}

// One llm_call row per request the call sent, or one cached row when the cache answered.
void record_requests(Database& db, const LlmOptions& options, const std::string& role, const AgentOutput& output) {
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

}  // namespace

LlmAgents::LlmAgents(LlmOptions options, LlmPrompts prompts, ResourceSlots& slots)
    : client_(std::move(options)), prompts_(std::move(prompts)), slots_(slots) {}

Result<std::unique_ptr<LlmAgents>> LlmAgents::create(const nlohmann::json& llm_section, Database& db,
                                                     ResourceSlots& slots) {
  Result<LlmOptions> options = llm_options_from_json(llm_section);
  if (!options) return options.error();
  if (slots.capacity("llm") < 1) {
    return make_error("daemon.llm_slots: must be at least 1 when agents.generator or agents.translator is \"llm\"");
  }
  Result<LlmPrompts> prompts = load_llm_prompts(data_path(options->prompts_path));
  if (!prompts) return make_error("llm.prompts: " + prompts.message());
  if (!prompts->translators.count("cuda2hip")) {
    return make_error("llm.prompts: " + data_path(options->prompts_path) + " has no translators.cuda2hip prompt");
  }
  auto agents = std::make_unique<LlmAgents>(*options, std::move(*prompts), slots);

  if (options->tokens_per_hour > 0 || options->requests_per_hour > 0) {
    Result<std::vector<LlmUsage>> usage = llm_usage_since(db, now_ms() - 3600 * 1000);
    if (!usage) return make_error("restoring the hourly LLM budget: " + usage.message());
    int64_t tokens = 0;
    for (const LlmUsage& request : *usage) {
      agents->client_.record_past_usage(
          request.tokens, 1, std::chrono::system_clock::time_point(std::chrono::milliseconds(request.created_ms)));
      tokens += request.tokens;
    }
    spdlog::info("LLM budget: {} requests and {} tokens of the last hour count against it", usage->size(), tokens);
  }
  return agents;
}

template <typename Call>
AgentOutput LlmAgents::run(Database& db, const char* role, Call call) {
  AgentOutput output;
  {
    SlotHold slot(slots_, "llm");
    output = call();
  }
  record_requests(db, client_.options(), role, output);
  return output;
}

Result<LlmProgram> LlmAgents::generate(Database& db, const std::string& persona_prompt) {
  AgentOutput output =
      run(db, "generator", [&] { return llm_generate_program(client_, prompts_, persona_prompt, &db); });
  const ChatResponse& response = output.response;
  if (!response.ok) return make_error("LLM generator: " + response.category + ": " + response.message);
  std::string source = chosen_block(response, {"cuda", "cu", "cpp", "c++"});
  if (source.find_first_not_of(" \t\r\n") == std::string::npos) {
    return make_error("LLM generator: agent.llm.no_code_block: the reply's code block is empty");
  }
  return LlmProgram{source, output.prompt_hash};
}

TranslateOutcome LlmAgents::translate_cuda_to_hip(Database& db, const std::string& cuda_source) {
  AgentOutput output =
      run(db, "translator", [&] { return llm_translate(client_, prompts_, "cuda2hip", cuda_source, &db); });
  const ChatResponse& response = output.response;
  TranslateOutcome outcome;
  outcome.ok = response.ok;
  if (response.ok) {
    outcome.hip_source = chosen_block(response, {"hip", "cpp", "c++", "cuda"});
  } else {
    outcome.category = response.category;
    outcome.message = response.category + ": " + response.message;
  }
  return outcome;
}

}  // namespace tailforge
