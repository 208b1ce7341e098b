// What a synthesis seed shows of its tail (synth/synthesizer.h seed_evidence): the model's
// failed evaluation for a model-failure tail, else the seed's own failure; and the lineage
// reason that carries its category next to the tail's keys.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "agents/generator/generator.h"
#include "store/cycles.h"
#include "store/evaluations.h"
#include "store/failures.h"
#include "store/models.h"
#include "store/sample_failures.h"
#include "store/samples.h"
#include "synth/synthesizer.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

struct Fixture {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  GeneratorCatalog catalog = std::move(load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value());
  int64_t cycle = start_cycle(db, 1, 0).value();

  Sample add(uint64_t seed, const std::string& status) {
    GenerationRequest request;
    request.seed = seed;
    Result<GeneratedProgram> program = generate_program(catalog, request);
    REQUIRE_MESSAGE(program.ok(), program.message());
    Sample sample = sample_from_program(*program, "template", cycle);
    sample.status = status;
    sample.id = insert_sample_if_absent(db, sample).value().id;
    return sample;
  }

  void fail(const Sample& sample, const std::string& stage, const std::string& category, const std::string& message) {
    REQUIRE(insert_failure(db, {sample.id, std::nullopt, stage, category, message, std::nullopt, std::nullopt,
                                "cuda2hip", "template"})
                .ok());
  }
};

TailEntry tail(const std::string& dimension, const std::string& name, const std::string& signal,
               json numbers = json::object()) {
  return TailEntry{dimension, name, signal, 0.5, std::move(numbers)};
}

}  // namespace

TEST_CASE("a seed's evidence is its failure, the one in the tail's category when it has several") {
  Fixture f;
  Sample failed = f.add(1, "failed");
  f.fail(failed, "translate.hip", "translate.unsupported.grid_sync", "grid.sync() has no HIP rule");
  f.fail(failed, "compile.hip", "amd.compile.undeclared", "use of undeclared identifier 'warpSize_'");
  std::vector<FailureRecord> stored = failures_of_sample(f.db, failed.id).value();
  REQUIRE(stored.size() == 2);
  CHECK(stored[0].stage == "translate.hip");
  CHECK(stored[1].category == "amd.compile.undeclared");

  SeedEvidence first = seed_evidence(f.db, tail("feature", "switch", "corpus_share"), failed).value();
  CHECK(first.category == std::optional<std::string>("translate.unsupported.grid_sync"));
  CHECK(first.message == "grid.sync() has no HIP rule");
  SeedEvidence in_tail = seed_evidence(f.db, tail("category", "amd.compile", "pipeline_yield"), failed).value();
  CHECK(in_tail.category == std::optional<std::string>("amd.compile.undeclared"));
  CHECK(in_tail.message == "use of undeclared identifier 'warpSize_'");

  Sample verified = f.add(2, "verified");
  SeedEvidence none = seed_evidence(f.db, tail("feature", "switch", "corpus_share"), verified).value();
  CHECK_FALSE(none.category.has_value());
  CHECK(none.message.empty());
}

TEST_CASE("a model-failure seed's evidence is the model's verdict on it") {
  Fixture f;
  Sample item = f.add(3, "verified");
  ModelRecord model;
  model.name = "student-v1";
  int64_t model_id = insert_model(f.db, model).value();
  EvaluationRecord evaluation;
  evaluation.model_id = model_id;
  evaluation.sample_id = item.id;
  evaluation.track = "cuda2hip";
  evaluation.category = "compare.output_mismatch";
  evaluation.message = "line 3: expected 12, got 13";
  evaluation.checked = "compare";
  REQUIRE(insert_evaluation(f.db, evaluation).value());

  TailEntry entry = tail("category", "compare.output_mismatch", "model_failure", json{{"model_id", model_id}});
  Result<SeedEvidence> found = seed_evidence(f.db, entry, item);
  REQUIRE_MESSAGE(found.ok(), found.message());
  SeedEvidence evidence = *found;
  CHECK(evidence.category == std::optional<std::string>("compare.output_mismatch"));
  CHECK(evidence.message == "line 3: expected 12, got 13");
  // Another model never evaluated it: the seed did not fail otherwise.
  TailEntry other = tail("category", "compare.output_mismatch", "model_failure", json{{"model_id", model_id + 1}});
  CHECK_FALSE(seed_evidence(f.db, other, item).value().category.has_value());
}

TEST_CASE("synthesized samples' lineage reason adds the seed's failure category to the tail's keys") {
  Fixture f;
  SynthPolicy policy = std::move(load_default_synth_policy(TAILFORGE_SOURCE_DIR).value());
  policy.synthesis.top_k = 1;
  policy.synthesis.multiplier = 2;
  policy.synthesis.seeds_per_tail = 1;
  Sample failed = f.add(4, "failed");
  f.fail(failed, "compile.hip", "amd.compile.undeclared", "use of undeclared identifier 'x'");
  TailReport report{f.cycle, {tail("category", "amd.compile.undeclared", "pipeline_yield")}};

  Result<SynthesisSummary> summary =
      synthesize_tails(f.db, policy, report, f.cycle, 7, builtin_candidate_source(f.catalog), "builtin-synthesizer");
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  REQUIRE(summary->inserted > 0);
  for (const std::string& id : summary->inserted_ids) {
    std::vector<LineageEdge> up = ancestors_of(f.db, id).value();
    REQUIRE(up.size() == 1);
    CHECK(up[0].parent_id == failed.id);
    json reason = json::parse(up[0].reason.value());
    CHECK(reason["dimension"] == "category");
    CHECK(reason["name"] == "amd.compile.undeclared");
    CHECK(reason["signal"] == "pipeline_yield");
    CHECK(reason["score"] == 0.5);
    CHECK(reason["category"] == "amd.compile.undeclared");
    // The built-in generator's prompt gives the sample's prompt hash.
    CHECK(find_sample(f.db, id).value().value().prompt_hash.has_value());
  }
}
