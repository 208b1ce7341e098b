// Reading an OpenAI-compatible chat completion: the answer, the reasoning trace, usage, and the
// fenced code blocks in the answer. Pure text processing; it sends nothing and caches nothing.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace tailforge {

struct CodeBlock {
  std::string language;  // the fence's tag ("cuda", "cpp", "hip", ...), empty when untagged
  std::string code;
};

struct ParsedCompletion {
  std::string content;    // the answer, with any <think>...</think> section removed
  std::string reasoning;  // reasoning_content / reasoning, else the <think> text
  int reasoning_tokens = 0;
  bool reasoning_tokens_estimated = false;  // true when usage gave no reasoning_tokens
  std::string finish_reason;
  int prompt_tokens = 0, completion_tokens = 0, total_tokens = 0;
};

// Parses a /v1/chat/completions response body; an error says what is missing or malformed.
Result<ParsedCompletion> parse_chat_completion(const std::string& body);

// Every fenced block (``` or ```lang), in order. An unclosed final fence runs to the end of text.
std::vector<CodeBlock> extract_code_blocks(const std::string& text);

// Token estimate used when the server reports none: one token per 4 bytes, rounded up.
int estimate_tokens(const std::string& text);

}  // namespace tailforge
