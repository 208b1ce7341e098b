#include "store/llm_calls.h"

namespace tailforge {

Status insert_llm_call(Database& db, const LlmCallRecord& call) {
  Statement& insert = db.cached(
      "INSERT INTO llm_call (endpoint, model, role, prompt_hash, status, prompt_tokens, completion_tokens,"
      " reasoning_tokens, latency_ms, finish_reason, cached, created_ms)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
  insert.bind(1, call.endpoint).bind(2, call.model).bind(3, call.role).bind(4, call.prompt_hash);
  insert.bind(5, call.status).bind(6, call.prompt_tokens).bind(7, call.completion_tokens);
  insert.bind(8, call.reasoning_tokens).bind(9, call.latency_ms).bind(10, call.finish_reason);
  insert.bind(11, call.cached ? 1 : 0).bind(12, call.created_ms != 0 ? call.created_ms : now_ms());
  if (Status s = insert.run(); !s) return make_error("recording an LLM " + call.role + " request: " + s.message());
  return {};
}

Result<std::vector<LlmUsage>> llm_usage_since(Database& db, int64_t since_ms) {
  Statement& select = db.cached(
      "SELECT created_ms, prompt_tokens + completion_tokens FROM llm_call"
      " WHERE cached = 0 AND created_ms >= ?1 ORDER BY created_ms");
  select.bind(1, since_ms);
  std::vector<LlmUsage> usage;
  while (select.step()) usage.push_back({select.int64(0), select.int64(1)});
  if (Status s = select.finish(); !s) return s.error();
  return usage;
}

}  // namespace tailforge
