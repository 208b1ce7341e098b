#include "store/llm_calls.h"

#include <doctest/doctest.h>

#include "store/metrics.h"
#include "test_support/query.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

LlmCallRecord call(const std::string& role, const std::string& status, int64_t prompt, int64_t completion) {
  return {.endpoint = "http://127.0.0.1:8000",
          .model = "m",
          .role = role,
          .prompt_hash = "abc",
          .status = status,
          .prompt_tokens = prompt,
          .completion_tokens = completion,
          .reasoning_tokens = completion / 2,
          .latency_ms = 12,
          .finish_reason = status == "ok" ? std::optional<std::string>("stop") : std::nullopt};
}

}  // namespace

TEST_CASE("LLM requests are stored one row each and counted by /metrics, cache hits apart") {
  TempDir dir;
  Result<Database> db = Database::open(dir.file("llm.db"));
  REQUIRE(db.ok());
  REQUIRE(insert_llm_call(*db, call("generator", "ok", 100, 40)).ok());
  REQUIRE(insert_llm_call(*db, call("translator", "agent.llm.server_error", 0, 0)).ok());
  LlmCallRecord hit = call("translator", "ok", 100, 40);
  hit.cached = true;
  hit.latency_ms = 0;
  REQUIRE(insert_llm_call(*db, hit).ok());

  CHECK(query_int(*db, "SELECT count(*) FROM llm_call") == 3);
  CHECK(query_int(*db,
                   "SELECT count(*) FROM llm_call WHERE role = 'translator' AND status = 'agent.llm.server_error'"
                   " AND finish_reason IS NULL AND cached = 0") == 1);
  CHECK(query_int(*db, "SELECT count(*) FROM llm_call WHERE created_ms > 0 AND latency_ms = 12") == 2);

  Result<StoreMetrics> metrics = query_store_metrics(*db);
  REQUIRE(metrics.ok());
  CHECK(metrics->llm_requests == 2);
  CHECK(metrics->llm_tokens["prompt"] == 100);
  CHECK(metrics->llm_tokens["completion"] == 40);
  CHECK(metrics->llm_tokens["reasoning"] == 20);
}

TEST_CASE("the usage of a time window counts sent requests only, oldest first") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  int64_t now = now_ms();
  LlmCallRecord old = call("generator", "ok", 1000, 1000);
  old.created_ms = now - 2 * 3600 * 1000;
  LlmCallRecord recent = call("generator", "ok", 30, 20);
  recent.created_ms = now - 600 * 1000;
  LlmCallRecord failed = call("generator", "agent.llm.timeout", 0, 0);
  failed.created_ms = now - 300 * 1000;
  LlmCallRecord hit = call("generator", "ok", 30, 20);
  hit.cached = true;
  hit.created_ms = now - 60 * 1000;
  for (const LlmCallRecord& record : {failed, hit, old, recent}) REQUIRE(insert_llm_call(*db, record).ok());

  Result<std::vector<LlmUsage>> usage = llm_usage_since(*db, now - 3600 * 1000);
  REQUIRE(usage.ok());
  REQUIRE(usage->size() == 2);
  CHECK((*usage)[0].created_ms == recent.created_ms);
  CHECK((*usage)[0].tokens == 50);
  CHECK((*usage)[1].created_ms == failed.created_ms);
  CHECK((*usage)[1].tokens == 0);
}
