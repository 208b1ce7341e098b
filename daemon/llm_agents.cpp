#include "daemon/llm_agents.h"

#include <chrono>
#include <initializer_list>

#include <spdlog/spdlog.h>

#include "base/files.h"
#include "store/llm_calls.h"

namespace tailforge {

namespace {

// Whether the reply's last fence is closed: a reply cut at max_tokens may end inside a block.
bool last_block_closed(const std::string& content) {
  int fences = 0;
  size_t start = 0;
  while (start < content.size()) {
    size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    size_t indent = content.find_first_not_of(" \t", start);
    if (indent < end && content.compare(indent, 3, "```") == 0) ++fences;
    start = end + 1;
  }
  return fences % 2 == 0;
}

}  // namespace

LlmAgents::LlmAgents(LlmOptions options, LlmPrompts prompts, ResourceSlots& slots)
    : client_(std::move(options)), prompts_(std::move(prompts)), slots_(slots) {}

Result<std::unique_ptr<LlmAgents>> LlmAgents::create(const nlohmann::json& llm_section, Database& db,
                                                     ResourceSlots& slots) {
  Result<LlmOptions> options = llm_options_from_json(llm_section);
  if (!options) return options.error();
  if (slots.capacity("llm") < 1) {
    return make_error(
        "daemon.llm_slots: must be at least 1 when agents.generator, agents.translator or agents.synthesizer is "
        "\"llm\"");
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
  record_llm_requests(db, client_.options(), role, output);
  return output;
}

Result<LlmProgram> LlmAgents::generate(Database& db, const std::string& persona_prompt, const std::string& api_request) {
  AgentOutput output =
      run(db, "generator", [&] { return llm_generate_program(client_, prompts_, persona_prompt, &db, api_request); });
  const ChatResponse& response = output.response;
  if (!response.ok) return make_error("LLM generator: " + response.category + ": " + response.message);
  std::string source = preferred_code_block(response, {"cuda", "cu", "cpp", "c++"});
  if (source.find_first_not_of(" \t\r\n") == std::string::npos) {
    return make_error("LLM generator: agent.llm.no_code_block: the reply's code block is empty");
  }
  return LlmProgram{source, output.prompt_hash};
}

Result<LlmSynthesis> LlmAgents::synthesize_similar(Database& db, const SimilarRequest& request) {
  AgentOutput output = run(db, "synthesizer", [&] { return llm_synthesize_similar(client_, prompts_, request, &db); });
  const ChatResponse& response = output.response;
  if (!response.ok && fault_may_pass(response.category)) {
    return make_error("LLM synthesizer: " + response.category + ": " + response.message);
  }
  LlmSynthesis synthesis;
  synthesis.prompt_hash = output.prompt_hash;
  if (!response.ok) synthesis.problem = response.category + ": " + response.message;
  if (!response.ok && response.category != "agent.llm.truncated") return synthesis;
  size_t usable = output.programs.size();
  if (!response.ok && usable > 0 && !last_block_closed(response.content)) --usable;
  for (size_t i = 0; i < usable; ++i) {
    const std::string& program = output.programs[i];
    if (program.find_first_not_of(" \t\r\n") != std::string::npos) synthesis.programs.push_back(program);
  }
  return synthesis;
}

TranslateOutcome LlmAgents::translate_cuda_to_hip(Database& db, const std::string& cuda_source) {
  AgentOutput output =
      run(db, "translator", [&] { return llm_translate(client_, prompts_, "cuda2hip", cuda_source, &db); });
  const ChatResponse& response = output.response;
  TranslateOutcome outcome;
  outcome.ok = response.ok;
  if (response.ok) {
    outcome.hip_source = preferred_code_block(response, {"hip", "cpp", "c++", "cuda"});
  } else {
    outcome.category = response.category;
    outcome.message = response.category + ": " + response.message;
  }
  return outcome;
}

}  // namespace tailforge
