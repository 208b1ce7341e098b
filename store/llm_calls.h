// LLM requests as the store keeps them (the llm_call table): one row per HTTP request an agent
// sent, or per answer served from the response cache. Sending requests is agents/llm/client.h's;
// the /metrics totals over these rows are store/metrics.h's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

struct LlmCallRecord {
  std::string endpoint;  // the llm.base_url the request went to
  std::string model;
  std::string role;         // generator, translator, synthesizer
  std::string prompt_hash;  // sha256 of the messages sent
  std::string status;       // ok, or the agent.llm.<reason> failure
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t reasoning_tokens = 0;
  int64_t latency_ms = 0;
  std::optional<std::string> finish_reason;
  bool cached = false;     // served from the response cache: nothing was sent
  int64_t created_ms = 0;  // 0: now
};

Status insert_llm_call(Database& db, const LlmCallRecord& call);

// One sent request's cost, for restoring an hourly budget after a restart.
struct LlmUsage {
  int64_t created_ms = 0;
  int64_t tokens = 0;  // prompt + completion
};

// The requests sent (cache hits excluded) at or after `since_ms`, oldest first.
Result<std::vector<LlmUsage>> llm_usage_since(Database& db, int64_t since_ms);

}  // namespace tailforge
