// The LLM synthesizer as synthesize_tails' candidate source, against the fake OpenAI server and
// a real SQLite file: the request carries the seed, its failure category and evidence; the
// reply's programs become tagged synthesized samples with lineage, prompt hash and verify jobs;
// a garbage reply gives fewer candidates; an outage is an error a re-run recovers from.
#include "daemon/llm_synthesis.h"

#include <doctest/doctest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "agents/generator/generator.h"
#include "agents/llm/roles.h"
#include "base/files.h"
#include "daemon/sample_sources.h"
#include "store/corpus.h"
#include "store/cycles.h"
#include "store/evaluations.h"
#include "store/failures.h"
#include "store/models.h"
#include "store/queue.h"
#include "store/samples.h"
#include "test_support/fake_openai_server.h"
#include "test_support/query.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

const char* kCategory = "compare.output_mismatch.reduction_order";
const char* kEvidence = "element 17: expected 1024.5, got 1024.25";

// The failing item: a warp-shuffle reduction no generator template writes.
const char* kSeedProgram = R"(#include <cstdio>
#include <cuda_runtime.h>

__global__ void warp_sum(const float* x, float* out, int n) {
  float v = threadIdx.x < n ? x[threadIdx.x] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (threadIdx.x == 0) *out = v;
}

int main() {
  float host[32], result = 0.0f;
  for (int i = 0; i < 32; ++i) host[i] = 0.5f * i;
  float *x = nullptr, *out = nullptr;
  cudaMalloc(&x, sizeof host);
  cudaMalloc(&out, sizeof(float));
  cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice);
  warp_sum<<<1, 32>>>(x, out, 32);
  cudaMemcpy(&result, out, sizeof(float), cudaMemcpyDeviceToHost);
  printf("sum %.2f\n", result);
  return 0;
}
)";

std::string user_message(const ReceivedRequest& request) {
  return json::parse(request.body)["messages"][1]["content"].get<std::string>();
}

struct Fixture {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  GeneratorCatalog catalog = std::move(load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value());
  SynthPolicy policy = std::move(load_default_synth_policy(TAILFORGE_SOURCE_DIR).value());
  FeatureRules features = std::move(load_feature_rules(data_path("policies/feature_rules.json")).value());
  DomainRules domains = std::move(load_domain_rules(data_path("policies/domains.json")).value());
  ResourceSlots slots;
  FakeOpenAiServer server;
  std::unique_ptr<LlmAgents> agents;
  int64_t cycle = 0;
  int64_t model_id = 0;
  int next_program = 0;

  Fixture() {
    slots.set_capacity("llm", 1);
    Result<std::unique_ptr<LlmAgents>> made = LlmAgents::create(server.llm_section(), db, slots);
    REQUIRE_MESSAGE(made.ok(), made.message());
    agents = std::move(*made);
    cycle = start_cycle(db, 1, 0).value();
    ModelRecord model;
    model.name = "student-v1";
    model_id = insert_model(db, model).value();
    policy.synthesis.top_k = 1;
    policy.synthesis.multiplier = 3;
    policy.synthesis.seeds_per_tail = 1;
    policy.synthesis.proposal_factor = 1;
  }

  // A verified sample the model failed with kCategory, and the tail it stands in.
  std::string add_failed_item(const std::string& text) {
    Sample sample{"", "cuda2hip", "template", "cuda", text};
    sample.status = "verified";
    sample.domain = "reduction";
    sample.cycle_id = cycle;
    std::string id = insert_sample_if_absent(db, sample).value().id;
    EvaluationRecord evaluation;
    evaluation.model_id = model_id;
    evaluation.sample_id = id;
    evaluation.track = "cuda2hip";
    evaluation.status = "fail";
    evaluation.stage = "compare";
    evaluation.category = kCategory;
    evaluation.message = kEvidence;
    evaluation.checked = "compare";
    REQUIRE(insert_evaluation(db, evaluation).value());
    return id;
  }

  TailReport model_failure_tail() const {
    TailEntry entry{"category", kCategory, "model_failure", 0.9, json{{"model_id", model_id}}};
    return TailReport{cycle, {entry}};
  }

  // A distinct, realistic CUDA program: the built-in generator's, one domain after another.
  std::string program() {
    Result<GeneratedProgram> generated = generate_program(catalog, batch_request(4242, next_program++));
    REQUIRE_MESSAGE(generated.ok(), generated.message());
    return generated->source;
  }

  std::string reply_with_programs(int count) {
    std::string reply = "The reduction order changes the float rounding. Category: reduction order.\n\n";
    for (int i = 0; i < count; ++i) reply += "```cuda\n" + program() + "```\n\n";
    return reply;
  }

  Result<SynthesisSummary> synthesize() {
    CandidateSource source = llm_candidate_source(*agents, db, {features, domains, "cuda"});
    return synthesize_tails(db, policy, model_failure_tail(), cycle, 99, source, llm_synthesizer_agent(*agents));
  }
};

}  // namespace

TEST_CASE("the LLM synthesizer's programs for a failed item become tagged synthesized samples with lineage") {
  Fixture f;
  std::string seed_id = f.add_failed_item(kSeedProgram);
  std::string reply = f.reply_with_programs(3);
  f.server.set_responder([&reply](const ReceivedRequest&) {
    return CannedResponse{200, {}, FakeOpenAiServer::completion(reply, "stop", "", 400, 900)};
  });

  Result<SynthesisSummary> summary = f.synthesize();
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  CHECK(summary->inserted == 3);
  CHECK(summary->generation_failures == 0);
  REQUIRE(summary->per_tail.size() == 1);
  CHECK(summary->per_tail[0].seed_ids == std::vector<std::string>{seed_id});

  std::vector<ReceivedRequest> requests = f.server.requests();
  REQUIRE(requests.size() == 1);
  std::string asked = user_message(requests[0]);
  CHECK(asked.find(kCategory) != std::string::npos);
  CHECK(asked.find(kEvidence) != std::string::npos);
  CHECK(asked.find("__shfl_down_sync(0xffffffff, v, offset)") != std::string::npos);
  CHECK(asked.find("generate 3 new") != std::string::npos);

  CHECK(query_int(f.db,
                  "SELECT count(*) FROM llm_call WHERE role = 'synthesizer' AND status = 'ok'"
                  " AND prompt_tokens = 400 AND completion_tokens = 900 AND model = 'fake-coder'") == 1);
  CHECK(query_int(f.db,
                  "SELECT count(*) FROM sample s JOIN llm_call c ON c.prompt_hash = s.prompt_hash"
                  " WHERE s.origin = 'synthesized' AND s.model = 'fake-coder' AND s.status = 'pending'"
                  " AND s.domain = 'reduction' AND json_extract(s.variables, '$.cass_domain') IS NOT NULL"
                  " AND c.role = 'synthesizer'") == 3);
  for (const std::string& id : summary->inserted_ids) {
    Sample sample = find_sample(f.db, id).value().value();
    CHECK(sample.features == feature_tags(f.features, "cuda", sample.text));
    CHECK_FALSE(sample.features.empty());
    std::vector<LineageEdge> up = ancestors_of(f.db, id).value();
    REQUIRE(up.size() == 1);
    CHECK(up[0].parent_id == seed_id);
    CHECK(up[0].relation == "synthesized_from");
    CHECK(up[0].agent == std::optional<std::string>("llm-synthesizer:fake-coder"));
    CHECK(up[0].model == std::optional<std::string>("fake-coder"));
    CHECK(up[0].prompt_hash == sample.prompt_hash);
    json reason = json::parse(up[0].reason.value());
    CHECK(reason["dimension"] == "category");
    CHECK(reason["name"] == kCategory);
    CHECK(reason["signal"] == "model_failure");
    CHECK(reason["score"] == 0.9);
    CHECK(reason["category"] == kCategory);
  }
  JobQueue queue(f.db);
  std::vector<Job> jobs = queue.list("pending", 100).value();
  REQUIRE(jobs.size() == 3);
  for (const Job& job : jobs) CHECK(job.kind == "verify");

  // A re-run of the cycle is answered from the response cache and stores nothing twice.
  Result<SynthesisSummary> again = f.synthesize();
  REQUIRE_MESSAGE(again.ok(), again.message());
  CHECK(again->inserted == 0);
  CHECK(again->per_tail.at(0).already_present == 3);
  CHECK(f.server.requests().size() == 1);
  CHECK(query_int(f.db, "SELECT count(*) FROM llm_call WHERE role = 'synthesizer' AND cached = 1") == 1);
  CHECK(queue.list("pending", 100).value().size() == 3);
}

TEST_CASE("a garbage LLM reply yields fewer candidates, counted as generation failures") {
  Fixture f;
  f.policy.synthesis.multiplier = 4;
  f.add_failed_item(kSeedProgram);
  std::string good = f.program();
  std::string reply = "Some analysis.\n```cuda\n\n```\n```python\nprint('not cuda')\n```\n```cuda\n" + good +
                      "```\n```\n" + good + "```\n";  // empty, not CUDA, one program, the same again
  f.server.enqueue({200, {}, FakeOpenAiServer::completion(reply)});
  Result<SynthesisSummary> summary = f.synthesize();
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  CHECK(summary->inserted == 1);
  CHECK(summary->generation_failures == 3);

  // The client asks twice (llm.max_attempts) before it gives up on a bad reply.
  SUBCASE("a reply with no code block") {
    f.server.enqueue({200, {}, FakeOpenAiServer::completion("I cannot help with that.")});
    f.server.enqueue({200, {}, FakeOpenAiServer::completion("I still cannot help with that.")});
  }
  SUBCASE("a reply that is not a chat completion") {
    f.server.enqueue({200, {}, "{\"choices\": 42}"});
    f.server.enqueue({200, {}, "<html>gateway</html>"});
  }
  SUBCASE("a request the endpoint refuses") { f.server.enqueue({400, {}, R"({"error":"context length exceeded"})"}); }
  f.policy.synthesis.seeds_per_tail = 2;  // the second seed meets the bad reply
  f.add_failed_item(std::string(kSeedProgram) + "// a second failing item\n");
  Result<SynthesisSummary> second = f.synthesize();
  REQUIRE_MESSAGE(second.ok(), second.message());
  CHECK(second->inserted == 0);
  CHECK(second->generation_failures == 3 + 4);  // the first seed's reply again (cached), and all 4
  CHECK(query_int(f.db, "SELECT count(*) FROM sample WHERE origin = 'synthesized'") == 1);
}

TEST_CASE("a reply cut at max_tokens keeps its complete programs") {
  Fixture f;
  f.add_failed_item(kSeedProgram);
  std::string first = f.program(), second = f.program(), third = f.program();
  std::string cut = "```cuda\n" + first + "```\n```cuda\n" + second + "```\n```cuda\n" + third.substr(0, 200);
  for (int attempt = 0; attempt < 2; ++attempt)
    f.server.enqueue({200, {}, FakeOpenAiServer::completion(cut, "length")});
  Result<SynthesisSummary> summary = f.synthesize();
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  CHECK(summary->inserted == 2);
  CHECK(summary->generation_failures == 1);
  CHECK(query_int(f.db,
                  "SELECT count(*) FROM llm_call WHERE role = 'synthesizer' AND status = 'agent.llm.truncated'") == 2);
}

TEST_CASE("an LLM outage fails the synthesis with its category, and a re-run stores each candidate once") {
  Fixture f;
  f.policy.synthesis.seeds_per_tail = 2;
  f.add_failed_item(kSeedProgram);
  f.add_failed_item(std::string(kSeedProgram) + "// a second failing item\n");
  std::string first_reply = f.reply_with_programs(3);
  std::atomic<int> status{500};
  std::string later_reply = f.reply_with_programs(3);
  f.server.enqueue({200, {}, FakeOpenAiServer::completion(first_reply)});  // the first seed's request
  f.server.set_responder([&](const ReceivedRequest&) {
    if (status != 200) return CannedResponse{status, {}, R"({"error":"busy"})"};
    return CannedResponse{200, {}, FakeOpenAiServer::completion(later_reply)};
  });

  Result<SynthesisSummary> down = f.synthesize();
  REQUIRE_FALSE(down.ok());
  CHECK(down.message().find("LLM synthesizer: agent.llm.server_error") != std::string::npos);
  CHECK(query_int(f.db,
                  "SELECT count(*) FROM llm_call WHERE role = 'synthesizer' AND status = 'agent.llm.server_error'") ==
        2);
  int64_t stored = query_int(f.db, "SELECT count(*) FROM sample WHERE origin = 'synthesized'");
  CHECK(stored == 3);  // the first seed's, each with its verify job

  status = 429;
  Result<SynthesisSummary> limited = f.synthesize();
  REQUIRE_FALSE(limited.ok());
  CHECK(limited.message().find("LLM synthesizer: agent.llm.rate_limited") != std::string::npos);

  status = 200;
  Result<SynthesisSummary> recovered = f.synthesize();
  REQUIRE_MESSAGE(recovered.ok(), recovered.message());
  CHECK(recovered->inserted == 3);
  CHECK(recovered->per_tail.at(0).already_present == 3);
  CHECK(query_int(f.db, "SELECT count(*) FROM sample WHERE origin = 'synthesized'") == 6);
  CHECK(query_int(f.db, "SELECT count(*) FROM job WHERE kind = 'verify'") == 6);
  CHECK(query_int(f.db, "SELECT count(*) FROM lineage WHERE relation = 'synthesized_from'") == 6);
}

TEST_CASE("an API tail's request names its uncovered names, and what the LLM writes is stored and queued for verification") {
  Fixture f;
  std::string seed_id = f.add_failed_item(kSeedProgram);
  std::string reply = f.reply_with_programs(3);
  f.server.set_responder([&reply](const ReceivedRequest&) {
    return CannedResponse{200, {}, FakeOpenAiServer::completion(reply, "stop", "", 400, 900)};
  });
  TailEntry entry{"api_family", "texture_surface_array", "corpus_share", 0.8,
                  json{{"uncovered", {"cudaCreateTextureObject", "tex2D"}}}};
  CandidateSource source = llm_candidate_source(*f.agents, f.db, {f.features, f.domains, "cuda"});
  Result<SynthesisSummary> summary =
      synthesize_tails(f.db, f.policy, TailReport{f.cycle, {entry}}, f.cycle, 7, source, llm_synthesizer_agent(*f.agents));
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  CHECK(summary->inserted == 3);
  std::vector<ReceivedRequest> requests = f.server.requests();
  REQUIRE(requests.size() == 1);
  std::string asked = user_message(requests[0]);
  CHECK(asked.find("Use these CUDA API names, which the training corpus lacks") != std::string::npos);
  CHECK(asked.find("cudaCreateTextureObject, tex2D.") != std::string::npos);
  CHECK(asked.find("generate 3 new") != std::string::npos);  // the rest of the prompt stays
  for (const std::string& id : summary->inserted_ids) {
    std::vector<LineageEdge> up = ancestors_of(f.db, id).value();
    REQUIRE(up.size() == 1);
    json reason = json::parse(up[0].reason.value());
    CHECK(reason["dimension"] == "api_family");
    CHECK(reason["name"] == "texture_surface_array");
  }
  JobQueue queue(f.db);
  CHECK(queue.list("pending", 100).value().size() == 3);

  // A prompt file without {api_request} still carries the names, after its user message.
  LlmPrompts prompts;
  prompts.synthesizer = {"system", "Write {count} like this: {sample}"};
  LlmClient client(llm_options_from_json(f.server.llm_section()).value());
  SimilarRequest request{.failing_sample = "x", .category = "c", .count = 1, .api_request = api_request_text({"cuInit"})};
  llm_synthesize_similar(client, prompts, request, nullptr);
  std::string plain = user_message(f.server.requests().back());
  CHECK(plain.rfind("Write 1 like this: x\n\nUse these CUDA API names", 0) == 0);
  CHECK(plain.find("cuInit.") != std::string::npos);
  CHECK(api_request_text({}).empty());
}

TEST_CASE("with the LLM generator, a generate job's prompt names an API tail of the newest tail list; personas stay") {
  Fixture f;
  f.server.set_responder([&f](const ReceivedRequest&) {
    return CannedResponse{200, {}, FakeOpenAiServer::completion("```cuda\n" + f.program() + "```", "stop", "", 10, 10)};
  });
  SampleSourceSetup setup{f.catalog, f.features, f.domains, f.policy, f.agents.get(), true, false};
  std::unique_ptr<SampleSource> source = make_sample_source(find_track("cuda2hip"), setup).value();
  // No tail list yet: the persona prompt alone.
  Sample plain = source->generate(f.db, 5, 0, f.cycle).value();
  std::string first = user_message(f.server.requests().back());
  CHECK(first.find("Use these CUDA API names") == std::string::npos);
  CHECK(json::parse(plain.variables.value()).count("api_tail") == 0);
  REQUIRE(replace_tail_report(f.db, f.cycle,
                              {{1, "feature", "switch", "corpus_share", 0.9, "{}"},
                               {2, "api", "cudaMemcpy2D", "corpus_share", 0.6, R"({"family": "memcpy"})"},
                               {3, "api_family", "driver_module_launch", "corpus_share", 0.5,
                                R"({"uncovered": ["cuModuleLoadData", "cuLaunchKernel"]})"}})
              .ok());
  for (uint64_t index : {0, 1}) {
    Sample sample = source->generate(f.db, 5, index, f.cycle).value();
    std::string asked = user_message(f.server.requests().back());
    GeneratedProgram choice = generate_program(f.catalog, batch_request(5, index)).value();
    CHECK(asked.find(choice.prompt_text) != std::string::npos);  // the persona and template prompt
    json variables = json::parse(sample.variables.value());
    if (index == 0) {
      CHECK(asked.find("cudaMemcpy2D.") != std::string::npos);
      CHECK(variables["api_tail"] == "api/cudaMemcpy2D");
    } else {
      CHECK(asked.find("cuModuleLoadData, cuLaunchKernel.") != std::string::npos);
      CHECK(variables["api_tail"] == "api_family/driver_module_launch");
      CHECK(variables["api_names"] == json::array({"cuModuleLoadData", "cuLaunchKernel"}));
    }
  }
}
