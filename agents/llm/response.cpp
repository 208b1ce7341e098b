#include "agents/llm/response.h"

#include <nlohmann/json.hpp>

namespace tailforge {

using nlohmann::json;

int estimate_tokens(const std::string& text) { return static_cast<int>((text.size() + 3) / 4); }

namespace {

int int_at(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int>() : 0;
}

// Moves a leading <think>...</think> section (as DeepSeek-R1 style servers emit it) to reasoning.
void split_think_section(ParsedCompletion& parsed) {
  size_t open = parsed.content.find("<think>");
  if (open == std::string::npos) return;
  size_t close = parsed.content.find("</think>", open);
  size_t text_end = close == std::string::npos ? parsed.content.size() : close;
  std::string think = parsed.content.substr(open + 7, text_end - open - 7);
  size_t after = close == std::string::npos ? parsed.content.size() : close + 8;
  if (parsed.reasoning.empty()) parsed.reasoning = think;
  parsed.content = parsed.content.substr(0, open) + parsed.content.substr(after);
}

}  // namespace

Result<ParsedCompletion> parse_chat_completion(const std::string& body) {
  try {
    json root = json::parse(body);
    if (!root.is_object()) return make_error("response is not a JSON object");
    auto choices = root.find("choices");
    if (choices == root.end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object())
      return make_error("response has no choices[0]");
    const json& choice = (*choices)[0];
    auto message = choice.find("message");
    if (message == choice.end() || !message->is_object()) return make_error("choices[0].message is missing");
    ParsedCompletion parsed;
    auto content = message->find("content");
    if (content != message->end() && content->is_string()) parsed.content = content->get<std::string>();
    else if (content == message->end() || !content->is_null()) return make_error("choices[0].message.content is not a string");
    for (const char* key : {"reasoning_content", "reasoning"}) {
      auto it = message->find(key);
      if (it != message->end() && it->is_string() && parsed.reasoning.empty()) parsed.reasoning = it->get<std::string>();
    }
    split_think_section(parsed);
    auto finish = choice.find("finish_reason");
    if (finish != choice.end() && finish->is_string()) parsed.finish_reason = finish->get<std::string>();
    auto usage = root.find("usage");
    bool reasoning_reported = false;
    if (usage != root.end() && usage->is_object()) {
      parsed.prompt_tokens = int_at(*usage, "prompt_tokens");
      parsed.completion_tokens = int_at(*usage, "completion_tokens");
      parsed.total_tokens = int_at(*usage, "total_tokens");
      auto details = usage->find("completion_tokens_details");
      if (details != usage->end() && details->is_object() && details->contains("reasoning_tokens") &&
          (*details)["reasoning_tokens"].is_number_integer()) {
        parsed.reasoning_tokens = (*details)["reasoning_tokens"].get<int>();
        reasoning_reported = true;
      }
    }
    if (parsed.total_tokens == 0) parsed.total_tokens = parsed.prompt_tokens + parsed.completion_tokens;
    if (!reasoning_reported && !parsed.reasoning.empty()) {
      parsed.reasoning_tokens = estimate_tokens(parsed.reasoning);
      parsed.reasoning_tokens_estimated = true;
    }
    return parsed;
  } catch (const json::exception& e) {
    return make_error(std::string("response is not valid JSON: ") + e.what());
  }
}

std::vector<CodeBlock> extract_code_blocks(const std::string& text) {
  std::vector<CodeBlock> blocks;
  bool inside = false;
  CodeBlock current;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    size_t indent = line.find_first_not_of(" \t");
    bool fence = indent != std::string::npos && line.compare(indent, 3, "```") == 0;
    if (fence && !inside) {
      std::string tag = line.substr(indent + 3);
      tag.erase(0, tag.find_first_not_of(" \t"));
      tag.erase(tag.find_last_not_of(" \t\r") + 1);
      current = CodeBlock{tag, ""};
      inside = true;
    } else if (fence && inside) {
      blocks.push_back(current);
      inside = false;
    } else if (inside) {
      current.code += line + "\n";
    }
    if (end == text.size()) break;
    start = end + 1;
  }
  if (inside && !current.code.empty()) blocks.push_back(current);
  return blocks;
}

}  // namespace tailforge
