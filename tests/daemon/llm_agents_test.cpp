#include "daemon/llm_agents.h"

#include <doctest/doctest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "store/llm_calls.h"
#include "test_support/fake_openai_server.h"
#include "test_support/query.h"

using namespace tailforge;
using nlohmann::json;

namespace {

const std::string kReply = "```cuda\n__global__ void k() {}\nint main() { return 0; }\n```\n";

}  // namespace

TEST_CASE("an LLM agent call holds one llm slot and records its requests; a cache hit is a cached row") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  ResourceSlots slots;
  slots.set_capacity("llm", 2);
  FakeOpenAiServer server;
  std::atomic<int> slots_in_use{-1};
  server.enqueue({503, {}, "busy"});
  server.set_responder([&](const ReceivedRequest&) {
    slots_in_use = slots.in_use("llm");
    return CannedResponse{200, {}, FakeOpenAiServer::completion(kReply, "stop", "", 30, 12)};
  });
  Result<std::unique_ptr<LlmAgents>> agents = LlmAgents::create(server.llm_section(), *db, slots);
  REQUIRE_MESSAGE(agents.ok(), agents.message());

  Result<LlmProgram> program = (*agents)->generate(*db, "a reduction kernel");
  REQUIRE_MESSAGE(program.ok(), program.message());
  CHECK(program->source == "__global__ void k() {}\nint main() { return 0; }\n");
  CHECK(program->prompt_hash.size() == 64);
  CHECK(slots_in_use == 1);
  CHECK(slots.in_use("llm") == 0);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM llm_call WHERE role = 'generator' AND status = 'agent.llm.server_error'"
                  " AND cached = 0") == 1);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM llm_call WHERE role = 'generator' AND status = 'ok' AND prompt_tokens = 30"
                  " AND completion_tokens = 12 AND cached = 0") == 1);

  Result<LlmProgram> again = (*agents)->generate(*db, "a reduction kernel");
  REQUIRE(again.ok());
  CHECK(again->source == program->source);
  CHECK(server.requests().size() == 2);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM llm_call WHERE cached = 1 AND status = 'ok' AND prompt_tokens = 30"
                  " AND latency_ms = 0 AND prompt_hash = '" +
                      program->prompt_hash + "'") == 1);
}

TEST_CASE("a failed LLM translation is a translation failure carrying the agent.llm category") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  ResourceSlots slots;
  slots.set_capacity("llm", 1);
  FakeOpenAiServer server;
  server.enqueue(
      {200, {}, FakeOpenAiServer::completion("```hip\n#include <hip/hip_runtime.h>\n```\n", "stop", "", 5, 5)});
  Result<std::unique_ptr<LlmAgents>> agents = LlmAgents::create(server.llm_section(), *db, slots);
  REQUIRE(agents.ok());
  TranslateOutcome translated = (*agents)->translate_cuda_to_hip(*db, "#include <cuda_runtime.h>\n");
  CHECK(translated.ok);
  CHECK(translated.hip_source == "#include <hip/hip_runtime.h>\n");

  TranslateOutcome failed = (*agents)->translate_cuda_to_hip(*db, "int main() {}\n");  // unscripted: HTTP 500
  CHECK_FALSE(failed.ok);
  CHECK(failed.category == "agent.llm.server_error");
  CHECK(failed.message.rfind("agent.llm.server_error: after 2 attempt(s)", 0) == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM llm_call WHERE role = 'translator'") == 3);
}

TEST_CASE("the last hour's recorded requests count against the hourly budget of a new client") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  ResourceSlots slots;
  slots.set_capacity("llm", 1);
  FakeOpenAiServer server;
  server.set_responder([](const ReceivedRequest&) {
    return CannedResponse{200, {}, FakeOpenAiServer::completion(kReply, "stop", "", 30, 12)};
  });
  LlmCallRecord recent{.endpoint = server.base_url(),
                       .model = "fake-coder",
                       .role = "generator",
                       .prompt_hash = "x",
                       .status = "ok",
                       .prompt_tokens = 30,
                       .completion_tokens = 12,
                       .created_ms = now_ms() - 60000};
  LlmCallRecord old = recent;
  old.created_ms = now_ms() - 2 * 3600 * 1000;
  LlmCallRecord cached = recent;
  cached.cached = true;
  for (const LlmCallRecord& record : {recent, old, cached}) REQUIRE(insert_llm_call(*db, record).ok());

  json section = server.llm_section();
  section["requests_per_hour"] = 2;
  Result<std::unique_ptr<LlmAgents>> agents = LlmAgents::create(section, *db, slots);
  REQUIRE(agents.ok());
  CHECK((*agents)->generate(*db, "first").ok());
  Result<LlmProgram> refused = (*agents)->generate(*db, "second");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.message().rfind("LLM generator: agent.llm.budget_exhausted: ", 0) == 0);
  CHECK(server.requests().size() == 1);
}

TEST_CASE("LLM agents need an llm slot and a valid llm section") {
  Result<Database> db = Database::open(":memory:");
  REQUIRE(db.ok());
  ResourceSlots slots;
  Result<std::unique_ptr<LlmAgents>> no_slot = LlmAgents::create(json::object(), *db, slots);
  REQUIRE_FALSE(no_slot.ok());
  CHECK(no_slot.message().find("daemon.llm_slots") == 0);
  slots.set_capacity("llm", 1);
  Result<std::unique_ptr<LlmAgents>> bad = LlmAgents::create(json{{"max_attempts", "four"}}, *db, slots);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message().find("llm.max_attempts") == 0);
  Result<std::unique_ptr<LlmAgents>> no_prompts =
      LlmAgents::create(json{{"prompts", "config/absent.json"}}, *db, slots);
  REQUIRE_FALSE(no_prompts.ok());
  CHECK(no_prompts.message().find("llm.prompts: ") == 0);
}
