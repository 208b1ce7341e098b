// Judging a model's answer with the real verifier chain (clang for gfx1100, nvcc for the HIP
// program on NVIDIA) and real model commands: what a correct answer, an untranslated one, and a
// model that fails, hangs or says nothing each become.
#include <doctest/doctest.h>

#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <filesystem>

#include "agents/generator/generator.h"
#include "agents/translate/hipify_rules.h"
#include "store/evaluations.h"
#include "store/models.h"
#include "store/samples.h"
#include "synth/evaluate.h"
#include "synth/model_registry.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"

using namespace tailforge;
using nlohmann::json;

namespace {

struct Bench {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("t.db")).value());
  HipifyRules rules = std::move(load_hipify_rules(std::string(TAILFORGE_SOURCE_DIR) + "/policies/hipify_rules.json").value());
  Taxonomy taxonomy = std::move(load_taxonomy(std::string(TAILFORGE_SOURCE_DIR) + "/policies/taxonomy.json").value());
  LlmPrompts prompts = std::move(load_llm_prompts(std::string(TAILFORGE_SOURCE_DIR) + "/config/llm_prompts.json").value());
  EvalItem item;
  std::string cuda;

  // One evaluation item: a generated program that uses __constant__ memory.
  Bench() {
    GeneratorCatalog catalog = std::move(load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value());
    GenerationRequest request;
    request.seed = 11;
    request.required_features = {"constant_memory"};
    GeneratedProgram program = generate_program(catalog, request).value();
    cuda = program.source;
    Sample sample = sample_from_program(program, "template", std::nullopt);
    sample.status = "verified";
    item = {"cuda2hip", insert_sample_if_absent(db, sample).value().id, 1, std::nullopt, std::nullopt, 0};
    REQUIRE(add_eval_items(db, {item}).ok());
  }

  ModelRecord model(json definition) {
    Result<ModelRecord> made = register_model(db, definition);
    REQUIRE_MESSAGE(made.ok(), made.message());
    return *made;
  }

  Result<JudgedAnswer> judge(const ModelRecord& record, LlmOptions llm = {}) {
    ModelRuntime runtime{.hipify_rules = &rules, .llm = llm, .prompts = &prompts, .command_timeout_seconds = 30};
    std::unique_ptr<ModelUnderTest> caller = std::move(make_model_under_test(record, runtime).value());
    EvaluationSetup setup{.taxonomy = &taxonomy, .work_dir = dir.path()};
    setup.verifier.scratch_root = dir.path();
    setup.verifier.cache_dir = dir.file("cache");
    return evaluate_item(db, *caller, record, item, setup);
  }
};

bool clang_for_amd() { return testing::amd_tools_here("the judge's amd.* stages"); }

}  // namespace

TEST_CASE("a correct answer passes every check that can run here, and an untranslated one fails with its category") {
  if (!clang_for_amd()) return;
  Bench bench;
  ModelRecord builtin = bench.model({{"name", "rules"}, {"kind", "builtin"}});
  Result<JudgedAnswer> right = bench.judge(builtin);
  REQUIRE_MESSAGE(right.ok(), right.message());
  const EvaluationRecord& ok = right->evaluation;
  CHECK(ok.ok);
  CHECK(ok.status == "ok");
  CHECK_FALSE(ok.category.has_value());
  CHECK((ok.checked == "compile" || ok.checked == "compare"));
  CHECK(ok.stages.front().stage == "answer");
  CHECK(std::any_of(ok.stages.begin(), ok.stages.end(),
                    [](const EvaluationStageRecord& s) { return s.stage == "amd.asm.gfx1100" && s.status == "ok"; }));
  REQUIRE(store_evaluation(bench.db, builtin, *right).value());
  CHECK_FALSE(store_evaluation(bench.db, builtin, *right).value());  // one per model and item
  std::optional<EvaluationRecord> stored = find_evaluation(bench.db, builtin.id, bench.item.sample_id).value();
  REQUIRE(stored);
  REQUIRE(stored->output_id);
  CHECK(artifact_text(bench.db, *stored->output_id).value() == right->answer);

  // A "model" that answers with the CUDA source unchanged: the AMD compile names what is missing.
  ModelRecord echo = bench.model({{"name", "echo"}, {"kind", "command"}, {"command", {"/bin/cat"}}});
  Result<JudgedAnswer> wrong = bench.judge(echo);
  REQUIRE_MESSAGE(wrong.ok(), wrong.message());
  const EvaluationRecord& failed = wrong->evaluation;
  MESSAGE(failed.stage.value_or("") << " " << failed.category.value_or("") << " " << failed.message.value_or(""));
  CHECK_FALSE(failed.ok);
  CHECK(failed.stage == "amd.asm.gfx1100");
  CHECK(failed.category == "amd.compile.missing_header");
  CHECK(failed.message->find("cuda_runtime.h") != std::string::npos);
  CHECK(wrong->answer == bench.cuda);
}

TEST_CASE("a command model that fails, hangs or prints nothing is a categorized failure of its answer") {
  Bench bench;
  struct Case {
    std::vector<std::string> argv;
    std::string category;
  };
  std::vector<Case> cases = {{{"/bin/sh", "-c", "echo no model here >&2; exit 3"}, "model.command.exit"},
                             {{"/bin/sh", "-c", "exec sleep 30"}, "model.command.timeout"},
                             {{"/bin/true"}, "model.command.empty"},
                             {{"/nonexistent/model"}, "model.command.not_started"}};
  for (const Case& c : cases) {
    json definition = {{"name", "m" + std::to_string(&c - cases.data())}, {"kind", "command"}, {"command", c.argv},
                       {"timeout_seconds", 1}};
    Result<JudgedAnswer> judged = bench.judge(bench.model(definition));
    REQUIRE_MESSAGE(judged.ok(), judged.message());
    CHECK(judged->evaluation.category == c.category);
    CHECK(judged->evaluation.stage == "answer");
    CHECK(judged->evaluation.checked == "answer");
    CHECK_FALSE(judged->answer.has_value());
  }
}

TEST_CASE("an endpoint that cannot answer leaves the item unjudged, to be tried again") {
  Bench bench;
  int listener = socket(AF_INET, SOCK_STREAM, 0);  // a port nobody listens on
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  REQUIRE(bind(listener, reinterpret_cast<sockaddr*>(&address), length) == 0);
  REQUIRE(getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  close(listener);
  std::string endpoint = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  ModelRecord remote = bench.model({{"name", "remote"}, {"kind", "openai"}, {"endpoint", endpoint}});
  LlmOptions llm;
  llm.max_attempts = 1;
  llm.use_cache = false;
  Result<JudgedAnswer> judged = bench.judge(remote, llm);
  REQUIRE_MESSAGE(judged.ok(), judged.message());
  REQUIRE(judged->fault.has_value());
  CHECK(judged->fault->category == "agent.llm.connection");
  CHECK(judged->fault->message.find(endpoint + "/v1/chat/completions") != std::string::npos);
  CHECK_FALSE(store_evaluation(bench.db, remote, *judged).ok());
  CHECK_FALSE(find_evaluation(bench.db, remote.id, bench.item.sample_id).value().has_value());
}
