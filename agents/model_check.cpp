#include "agents/model_check.h"

#include <algorithm>

#include "store/database.h"

namespace tailforge {
namespace {

std::string first_line(const std::string& text) {
  size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return "(empty)";
  size_t end = std::min(text.find('\n', start), start + 157);
  std::string line(text, start, end - start);
  if (end < text.size() && text[end] != '\n') line.append("...");
  return line;
}

std::string joined(const std::vector<std::string>& ids, size_t most) {
  std::string out;
  for (size_t i = 0; i < ids.size() && i < most; ++i) out += (i ? ", " : "") + ids[i];
  if (ids.size() > most) out += ", ... (" + std::to_string(ids.size()) + " in all)";
  return out;
}

ModelCheck check_openai(const ModelRecord& model, const ModelRuntime& runtime) {
  ModelCheck check;
  LlmOptions options = model_llm_options(model, runtime.llm);
  options.max_attempts = 1;
  options.breaker_failures = 0;
  options.use_cache = false;
  options.max_tokens = 256;
  LlmClient client(options);
  ServedModels served = client.served_models();
  if (served.ok) {
    check.lines.push_back("GET " + served.url + ": HTTP " + std::to_string(served.http_status) + ", " +
                          std::to_string(served.ids.size()) + " model(s): " + (served.ids.empty() ? "none" : joined(served.ids, 8)));
    bool listed = std::find(served.ids.begin(), served.ids.end(), options.model) != served.ids.end();
    check.lines.push_back("model id '" + options.model + "': " +
                          (listed ? std::string("served")
                                  : "not in the list (the server serves: " + joined(served.ids, 8) +
                                        "; --model-id picks one)"));
  } else {
    // Some servers list nothing; the chat request below decides.
    check.lines.push_back(served.message);
  }
  ChatRequest request{{{"system", "You are a concise assistant."}, {"user", "Reply with the single word: ready"}}, false};
  ChatResponse answer = client.complete(request, nullptr);
  Result<LlmEndpoint> endpoint = parse_llm_endpoint(options.base_url);  // valid: validate_model_definition passed
  std::string url = endpoint ? endpoint->scheme_host_port + endpoint->chat_path() : options.base_url;
  // A reply cut at the token limit is still the server's answer (a reasoning model thinks first).
  bool answered = answer.ok || answer.category == "agent.llm.truncated";
  if (answered) {
    check.lines.push_back("POST " + url + ": HTTP " + std::to_string(answer.http_status) + " in " +
                          std::to_string(answer.latency_ms) + " ms, " + std::to_string(answer.prompt_tokens) +
                          " prompt + " + std::to_string(answer.completion_tokens) + " completion tokens" +
                          (answer.finish_reason.empty() ? "" : ", finish_reason " + answer.finish_reason));
    check.lines.push_back("answer: " + first_line(answer.content.empty() ? answer.reasoning : answer.content));
    check.lines.push_back("ok: " + model.name + " answers as model '" + options.model + "'");
    check.ok = true;
  } else {
    check.lines.push_back(answer.category + ": " + answer.message);
    check.lines.push_back("failed: " + model.name + " cannot be evaluated until this is fixed");
  }
  return check;
}

ModelCheck check_by_answering(const ModelRecord& model, const ModelRuntime& runtime, const std::string& small_input) {
  ModelCheck check;
  Result<std::unique_ptr<ModelUnderTest>> caller = make_model_under_test(model, runtime);
  if (!caller) {
    check.lines.push_back("failed: " + caller.message());
    return check;
  }
  Result<Database> scratch = Database::open(":memory:");
  if (!scratch) {
    check.lines.push_back("failed: " + scratch.message());
    return check;
  }
  ModelAnswer answer = (*caller)->answer(*scratch, small_input);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f", answer.seconds);
  if (answer.ok) {
    check.lines.push_back("a small " + model.track + " input answered in " + seconds + " s: " + first_line(answer.output));
    check.lines.push_back("ok: " + model.name + " answers");
    check.ok = true;
  } else {
    check.lines.push_back(answer.category + ": " + answer.message);
    check.lines.push_back("failed: " + model.name + " did not answer a small " + model.track + " input");
  }
  return check;
}

}  // namespace

ModelCheck check_model(const ModelRecord& model, const ModelRuntime& runtime, const std::string& small_input) {
  if (Status valid = validate_model_definition(model); !valid) return {false, {"failed: " + valid.message()}};
  if (model.kind == "openai") return check_openai(model, runtime);
  return check_by_answering(model, runtime, small_input);
}

}  // namespace tailforge
