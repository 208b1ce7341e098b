// The daemon with LLM agents (agents.generator / agents.translator = "llm") against a fake
// OpenAI-compatible server: LLM samples are stored, tagged and verified with the LLM's HIP,
// every request is an llm_call row, a restart keeps the hourly budget, and a failing endpoint
// makes generate and verify jobs retry and fail without stopping the daemon or storing a result.
#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "agents/generator/generator.h"
#include "agents/llm/roles.h"
#include "base/files.h"
#include "base/process.h"
#include "daemon/planner.h"
#include "daemon/scaleout.h"
#include "store/database.h"
#include "store/metrics.h"
#include "test_support/fake_openai_server.h"
#include "test_support/query.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

const char* kModel = "fake-coder";

// A small CUDA program the fake LLM writes; `variant` makes each reply a different sample.
std::string cuda_program(int variant) {
  return "// written by the fake LLM, variant " + std::to_string(variant) + R"(
#include <cstdio>
#include <cuda_runtime.h>

__global__ void sum_scaled(const float* x, float* total, float scale, int n) {
  __shared__ float partial[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? x[i] * scale : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float block = 0.0f;
    for (int k = 0; k < blockDim.x; ++k) block += partial[k];
    atomicAdd(total, block);
  }
}

int main() {
  const int n = 1024;
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = (i % 7) * 0.5f;
  float *x = nullptr, *total = nullptr;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&total, sizeof(float));
  cudaMemcpy(x, host, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(total, 0, sizeof(float));
  sum_scaled<<<n / 128, 128>>>(x, total, )" +
         std::to_string(variant + 2) + R"(.0f, n);
  float result = 0.0f;
  cudaMemcpy(&result, total, sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(x);
  cudaFree(total);
  printf("total %.1f\n", result);
  return 0;
}
)";
}

// What the fake LLM answers a translation request with: the CUDA source with cuda -> hip.
std::string hip_of(std::string source) {
  for (size_t at = source.find("cuda_runtime.h"); at != std::string::npos; at = source.find("cuda_runtime.h", at)) {
    source.replace(at, 14, "hip/hip_runtime.h");
  }
  for (size_t at = source.find("cuda"); at != std::string::npos; at = source.find("cuda", at))
    source.replace(at, 4, "hip");
  return source;
}

// The translator prompt quotes the source in a ```cuda block ("" when it does not).
std::string quoted_source(const std::string& user) {
  size_t open = user.find("```cuda\n");
  size_t close = user.rfind("\n```");
  if (open == std::string::npos || close == std::string::npos || close < open + 8) return "";
  return user.substr(open + 8, close - open - 8);
}

bool is_translation(const json& body) {
  return body["messages"][0]["content"].get<std::string>().find("translating CUDA") != std::string::npos;
}

// Answers generator requests with a new CUDA program each, translator requests with the HIP.
void serve_programs(FakeOpenAiServer& server, std::atomic<int>& programs) {
  server.set_responder([&programs](const ReceivedRequest& request) {
    json body = json::parse(request.body);
    std::string user = body["messages"][1]["content"].get<std::string>();
    if (is_translation(body)) {
      std::string hip = hip_of(quoted_source(user));
      return CannedResponse{200, {}, FakeOpenAiServer::completion("```hip\n" + hip + "```\n", "stop", "", 120, 80)};
    }
    std::string cuda = cuda_program(programs++);
    return CannedResponse{
        200, {}, FakeOpenAiServer::completion("Here it is.\n```cuda\n" + cuda + "```\n", "stop", "", 200, 150)};
  });
}

std::string write_config(const TempDir& dir, const std::string& name, const json& overrides) {
  json config = {{"log_level", "info"},
                 {"store", {{"job_max_attempts", 3}, {"job_backoff_base_ms", 50}, {"job_backoff_max_ms", 200}}},
                 {"daemon", {{"samples_per_cycle", 2}, {"progress", false}, {"llm_slots", 2}}},
                 {"agents", {{"generator", "llm"}, {"translator", "llm"}}},
                 {"synth", {{"enabled", false}}},
                 {"retrain", {{"enabled", false}}},
                 {"verifier", {{"stages", {"translate"}}}}};
  config.merge_patch(overrides);
  std::string path = dir.file(name);
  std::ofstream(path) << config.dump(2);
  return path;
}

ProcessResult run_daemon_cycle(const std::string& db, const std::string& config) {
  ProcessSpec spec;
  spec.argv = {TAILFORGE_BINARY, "daemon", "--cycles", "1", "--db", db, "--config", config, "--no-progress"};
  spec.timeout_seconds = 120;
  return run_process(spec);
}

std::vector<std::string> query_texts(Database& db, const std::string& sql) {
  Result<Statement> statement = db.prepare(sql);
  REQUIRE_MESSAGE(statement.ok(), sql);
  std::vector<std::string> out;
  while (statement->step()) out.push_back(statement->text(0));
  return out;
}

// The generator prompts the daemon's cycle `cycle` must send: the built-in choice for each index.
std::set<std::string> expected_generator_prompts(int64_t cycle, int count) {
  Result<GeneratorCatalog> catalog = load_default_generator_catalog(data_dir());
  REQUIRE(catalog.ok());
  Result<LlmPrompts> prompts = load_llm_prompts(data_path("config/llm_prompts.json"));
  REQUIRE(prompts.ok());
  std::set<std::string> expected;
  for (int index = 0; index < count; ++index) {
    GenerationRequest request = batch_request(static_cast<uint64_t>(cycle_seed(1, cycle)), static_cast<size_t>(index));
    Result<GeneratedProgram> program = generate_program(*catalog, request);
    REQUIRE(program.ok());
    // No tail list yet in a first cycle: the prompt names no CUDA API ({api_request} is empty).
    expected.insert(fill_prompt(prompts->generator.user, {{"persona_prompt", program->prompt_text}, {"api_request", ""}}));
  }
  return expected;
}

}  // namespace

TEST_CASE("with LLM agents a cycle stores LLM samples verified with the LLM's HIP, and a restart keeps the budget") {
  TempDir dir;
  FakeOpenAiServer server;
  std::atomic<int> programs{0};
  serve_programs(server, programs);
  std::string db_path = dir.file("llm.db");
  std::string config = write_config(dir, "llm.json", {{"llm", server.llm_section(10)}});

  ProcessResult first = run_daemon_cycle(db_path, config);
  INFO(first.stderr_text);
  REQUIRE(first.exit_code == 0);
  CHECK(first.stderr_text.find("agents: LLM generator, LLM translator; LLM fake-coder") != std::string::npos);

  std::vector<ReceivedRequest> requests = server.requests();
  REQUIRE(requests.size() == 4);  // two programs, two translations
  std::set<std::string> generator_prompts;
  for (const ReceivedRequest& request : requests) {
    CHECK(request.path == "/v1/chat/completions");
    json body = json::parse(request.body);
    CHECK(body["model"] == kModel);
    if (!is_translation(body)) generator_prompts.insert(body["messages"][1]["content"].get<std::string>());
  }
  CHECK(generator_prompts == expected_generator_prompts(1, 2));

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  CHECK(query_int(*db, "SELECT count(*) FROM sample") == 2);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM sample WHERE origin = 'llm' AND model = 'fake-coder' AND track = 'cuda2hip'"
                  " AND text LIKE '// written by the fake LLM%' AND template_id IS NOT NULL AND persona IS NOT NULL"
                  " AND json_extract(variables, '$.cass_domain') IS NOT NULL"
                  " AND json_extract(variables, '$.placeholders') IS NOT NULL") == 2);
  CHECK(query_int(*db, "SELECT count(*) FROM sample_feature WHERE tag IN ('atomics', 'syncthreads')") == 4);
  // The sample's prompt hash is the one its generator request was recorded with.
  CHECK(query_int(*db,
                  "SELECT count(*) FROM sample s JOIN llm_call c ON c.prompt_hash = s.prompt_hash"
                  " WHERE c.role = 'generator'") == 2);
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE kind = 'verify' AND state = 'done'") == 2);
  CHECK(query_int(*db, "SELECT count(*) FROM sample WHERE status = 'verified'") == 2);
  CHECK(query_int(*db, "SELECT count(*) FROM verification WHERE stage = 'translate.hip' AND status = 'ok'") == 2);
  // Each stage row names the machine it ran on: here the daemon's own.
  CHECK(query_int(*db, "SELECT count(*) FROM verification WHERE host = '" + host_name() + "'") ==
        query_int(*db, "SELECT count(*) FROM verification"));
  for (const std::string& hip : query_texts(*db,
                                            "SELECT a.content FROM artifact a JOIN sample_artifact sa"
                                            " ON sa.artifact_id = a.id WHERE sa.stage = 'translate.hip'")) {
    CHECK(hip.find("#include <hip/hip_runtime.h>") != std::string::npos);
    CHECK(hip.find("hipMalloc(&x") != std::string::npos);
  }

  CHECK(query_int(*db, "SELECT count(*) FROM llm_call") == 4);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM llm_call WHERE role = 'generator' AND status = 'ok' AND prompt_tokens = 200"
                  " AND completion_tokens = 150 AND finish_reason = 'stop' AND cached = 0 AND model = 'fake-coder'"
                  " AND endpoint = '" +
                      server.base_url() + "'") == 2);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM llm_call WHERE role = 'translator' AND status = 'ok' AND prompt_tokens = 120"
                  " AND completion_tokens = 80 AND cached = 0") == 2);
  Result<StoreMetrics> metrics = query_store_metrics(*db);  // what GET /metrics prints
  REQUIRE(metrics.ok());
  CHECK(metrics->llm_requests == 4);
  CHECK(metrics->llm_tokens["prompt"] == 640);
  CHECK(metrics->llm_tokens["completion"] == 460);

  // A restart with a budget of 4 requests an hour: the first run's 4 count, nothing is sent.
  json limited = server.llm_section(10);
  limited["requests_per_hour"] = 4;
  std::string budget_config = write_config(dir, "budget.json", {{"llm", limited}});
  ProcessResult second = run_daemon_cycle(db_path, budget_config);
  INFO(second.stderr_text);
  REQUIRE(second.exit_code == 0);
  CHECK(second.stderr_text.find("LLM budget: 4 requests and 1100 tokens of the last hour count against it") !=
        std::string::npos);
  CHECK(server.requests().size() == 4);
  CHECK(query_int(*db, "SELECT count(*) FROM llm_call") == 4);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM job WHERE kind = 'generate' AND state = 'dead' AND attempts = 3"
                  " AND last_error LIKE '%agent.llm.budget_exhausted%'") == 2);
  CHECK(query_int(*db, "SELECT count(*) FROM sample") == 2);
}

TEST_CASE("an endpoint answering 500 fails generate jobs with retries, records each request, and the daemon goes on") {
  TempDir dir;
  FakeOpenAiServer server;
  server.set_responder([](const ReceivedRequest&) { return CannedResponse{500, {}, R"({"error":"model crashed"})"}; });
  std::string db_path = dir.file("down.db");
  std::string config = write_config(dir, "down.json", {{"llm", server.llm_section(10)}});

  ProcessResult run = run_daemon_cycle(db_path, config);
  INFO(run.stderr_text);
  REQUIRE(run.exit_code == 0);
  CHECK(run.stderr_text.find("failed on attempt 1: generating: LLM generator: agent.llm.server_error") !=
        std::string::npos);
  CHECK(run.stderr_text.find("cycle 1 done") != std::string::npos);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  // 2 jobs x 3 job attempts x 2 HTTP attempts per call.
  CHECK(server.requests().size() == 12);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM job WHERE kind = 'generate' AND state = 'dead' AND attempts = 3"
                  " AND last_error LIKE '%agent.llm.server_error%HTTP 500%'") == 2);
  CHECK(query_int(*db, "SELECT count(*) FROM sample") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM job WHERE kind = 'verify'") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM llm_call") == 12);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM llm_call WHERE role = 'generator' AND status = 'agent.llm.server_error'"
                  " AND prompt_tokens = 0 AND cached = 0 AND finish_reason IS NULL") == 12);
  CHECK(query_int(*db, "SELECT count(*) FROM cycle WHERE state = 'done'") == 1);
}

TEST_CASE("an unreachable LLM translator makes verify jobs retry instead of failing the samples") {
  TempDir dir;
  FakeOpenAiServer server;
  server.set_responder([](const ReceivedRequest&) { return CannedResponse{503, {}, R"({"error":"overloaded"})"}; });
  std::string db_path = dir.file("translator-down.db");
  std::string config =
      write_config(dir, "translator-down.json", {{"agents", {{"generator", "builtin"}}}, {"llm", server.llm_section(10)}});

  ProcessResult run = run_daemon_cycle(db_path, config);
  INFO(run.stderr_text);
  REQUIRE(run.exit_code == 0);
  CHECK(run.stderr_text.find("LLM translator unavailable: agent.llm.server_error") != std::string::npos);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  CHECK(query_int(*db, "SELECT count(*) FROM sample WHERE origin = 'template'") == 2);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM job WHERE kind = 'verify' AND state = 'dead' AND attempts = 3"
                  " AND last_error LIKE '%LLM translator unavailable%'") == 2);
  // Nothing of the outage is stored as the samples' result.
  CHECK(query_int(*db, "SELECT count(*) FROM failure") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM verification") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM sample WHERE status = 'failed'") == 0);
  CHECK(query_int(*db, "SELECT count(*) FROM llm_call WHERE role = 'translator' AND status = 'agent.llm.server_error'") ==
        12);
}

TEST_CASE("with only the generator on the LLM, translation failures name the built-in translator") {
  TempDir dir;
  FakeOpenAiServer server;
  server.set_responder([](const ReceivedRequest&) {
    std::string cuda = cuda_program(0);
    cuda.insert(cuda.find("  int i = "), "  asm volatile(\"membar.gl;\");\n");  // inline PTX: no HIP rule
    return CannedResponse{200, {}, FakeOpenAiServer::completion("```cuda\n" + cuda + "```\n", "stop", "", 200, 150)};
  });
  std::string db_path = dir.file("generator-only.db");
  std::string config = write_config(dir, "generator-only.json",
                                    {{"agents", {{"translator", "builtin"}}},
                                     {"daemon", {{"samples_per_cycle", 1}}},
                                     {"llm", server.llm_section(10)}});

  ProcessResult run = run_daemon_cycle(db_path, config);
  INFO(run.stderr_text);
  REQUIRE(run.exit_code == 0);
  CHECK(run.stderr_text.find("agents: LLM generator, built-in translator") != std::string::npos);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  CHECK(query_int(*db, "SELECT count(*) FROM sample WHERE origin = 'llm' AND model = 'fake-coder'") == 1);
  CHECK(query_int(*db,
                  "SELECT count(*) FROM failure WHERE stage = 'translate.hip' AND agent = 'builtin-hipify'"
                  " AND category = 'translate.unsupported.inline_ptx'") == 1);
  CHECK(query_int(*db, "SELECT count(*) FROM llm_call WHERE role = 'translator'") == 0);
}
