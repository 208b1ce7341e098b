#include "agents/llm/roles.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_support/fake_openai_server.h"

using namespace tailforge;

#ifndef TAILFORGE_SOURCE_DIR
#define TAILFORGE_SOURCE_DIR TAILFORGE_TEST_DATA "/../.."
#endif

namespace {

LlmPrompts shipped_prompts() {
  auto prompts = load_llm_prompts(std::string(TAILFORGE_SOURCE_DIR) + "/config/llm_prompts.json");
  REQUIRE_MESSAGE(prompts.ok(), prompts.message());
  return prompts.value();
}

LlmOptions fast(const std::string& url) {
  LlmOptions options;
  options.base_url = url;
  options.max_attempts = 1;
  options.backoff_base_ms = 1;
  return options;
}

std::string user_message(const ReceivedRequest& request) {
  return nlohmann::json::parse(request.body)["messages"][1]["content"].get<std::string>();
}

}  // namespace

TEST_CASE("fenced code blocks are all taken, in order, with their language tags") {
  auto blocks = extract_code_blocks("a\n```cuda\nint a;\n```\ntext\n```\nint b;\n```\n  ```hip\nint c;\n```\n```cpp\nint d;");
  REQUIRE(blocks.size() == 4);
  CHECK(blocks[0].language == "cuda");
  CHECK(blocks[0].code == "int a;\n");
  CHECK(blocks[1].language.empty());
  CHECK(blocks[2].language == "hip");
  CHECK(blocks[3].code == "int d;\n");
  CHECK(extract_code_blocks("no code").empty());
}

TEST_CASE("the shipped prompts cover the four translation directions") {
  LlmPrompts prompts = shipped_prompts();
  for (const char* direction : {"cuda2hip", "sass2rdna3", "ptx2cuda", "c2x86"}) CHECK(prompts.translators.count(direction) == 1);
  CHECK(fill_prompt("a {x} {y} {x}", {{"x", "1"}}) == "a 1 {y} 1");
}

TEST_CASE("the translator role sends its prompt with the source and returns the code") {
  FakeOpenAiServer server;
  server.enqueue({200, {}, FakeOpenAiServer::completion("```hip\n#include <hip/hip_runtime.h>\n```\n")});
  LlmClient client(fast(server.base_url()));
  AgentOutput out = llm_translate(client, shipped_prompts(), "cuda2hip", "__global__ void k() {}", nullptr);
  REQUIRE(out.response.ok);
  REQUIRE(out.programs.size() == 1);
  CHECK(out.programs[0] == "#include <hip/hip_runtime.h>\n");
  CHECK(out.prompt_hash.size() == 64);
  CHECK(user_message(server.requests()[0]).find("__global__ void k() {}") != std::string::npos);
  AgentOutput unknown = llm_translate(client, shipped_prompts(), "cobol2rust", "x", nullptr);
  CHECK(unknown.response.category == "agent.llm.unknown_direction");
}

TEST_CASE("the generator and synthesizer roles fill persona, sample, category, evidence and count") {
  FakeOpenAiServer server;
  server.enqueue({200, {}, FakeOpenAiServer::completion("```cuda\nint main() {}\n```")});
  server.enqueue({200, {}, FakeOpenAiServer::completion("Analysis.\n```cuda\nA\n```\n```cuda\nB\n```\n```cuda\nC\n```")});
  LlmClient client(fast(server.base_url()));
  LlmPrompts prompts = shipped_prompts();
  AgentOutput generated = llm_generate_program(client, prompts, "Generate a CUDA kernel for cloth simulation", nullptr);
  CHECK(generated.programs.size() == 1);
  SimilarRequest request{.failing_sample = "__shfl_down_sync(0xff, v, 1)",
                         .category = "translate.unsupported.partial_warp_mask",
                         .evidence = "line 3: a partial warp mask",
                         .count = 10};
  AgentOutput synthesized = llm_synthesize_similar(client, prompts, request, nullptr);
  REQUIRE(synthesized.response.ok);
  CHECK(synthesized.programs == std::vector<std::string>{"A\n", "B\n", "C\n"});
  auto requests = server.requests();
  CHECK(user_message(requests[0]).find("cloth simulation") != std::string::npos);
  std::string synth = user_message(requests[1]);
  CHECK(synth.find("translate.unsupported.partial_warp_mask") != std::string::npos);
  CHECK(synth.find("generate 10 new") != std::string::npos);
  CHECK(synth.find("__shfl_down_sync(0xff, v, 1)") != std::string::npos);
  CHECK(synth.find("line 3: a partial warp mask") != std::string::npos);
}

TEST_CASE("a prompt file missing a role is refused naming the file and path") {
  auto path = std::filesystem::temp_directory_path() / ("tailforge-prompts-" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << R"({"generator":{"system":"s","user":"u"},"synthesizer":{"system":"s"},"translators":{}})";
  auto prompts = load_llm_prompts(path.string());
  REQUIRE_FALSE(prompts.ok());
  CHECK(prompts.message().find(path.string()) == 0);
  CHECK(prompts.message().find("synthesizer.user") != std::string::npos);
  std::filesystem::remove(path);
}
