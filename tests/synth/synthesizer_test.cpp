#include <doctest/doctest.h>

#include "agents/generator/generator.h"
#include "store/corpus.h"
#include "store/cycles.h"
#include "store/failures.h"
#include "store/queue.h"
#include "store/samples.h"
#include "synth/lineage.h"
#include "synth/synthesizer.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

struct Fixture {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  GeneratorCatalog catalog = std::move(load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value());
  SynthPolicy policy = std::move(load_default_synth_policy(TAILFORGE_SOURCE_DIR).value());

  Fixture() {
    policy.api.enabled = false;  // API tails off too: their own tests are in api_coverage_test.cpp
    policy.tails.features.tracked = {"switch"};
    policy.tails.domains.min_share = 0;  // domain tails off: the test follows one feature
    policy.tails.domains.head_fraction = 0;
    policy.tails.features.head_fraction = 0;
    policy.synthesis.top_k = 1;
  }

  // Stores a generated template program as a verified sample of the cycle.
  std::string add_verified(int64_t cycle, uint64_t seed, std::vector<std::string> required,
                           std::vector<std::string> forbidden) {
    GenerationRequest request;
    request.seed = seed;
    request.required_features = std::move(required);
    request.forbidden_features = std::move(forbidden);
    Result<GeneratedProgram> program = generate_program(catalog, request);
    REQUIRE_MESSAGE(program.ok(), program.message());
    Sample sample = sample_from_program(*program, "template", cycle);
    sample.status = "verified";
    Result<InsertOutcome> inserted = insert_sample_if_absent(db, sample);
    REQUIRE(inserted.ok());
    return inserted->id;
  }

  double share_of(const std::string& feature) {
    int64_t total = verified_count(db, "cuda2hip").value();
    auto counts = verified_count_by_feature(db, "cuda2hip").value();
    return total ? double(counts[feature]) / double(total) : 0.0;
  }
};

}  // namespace

TEST_CASE("a rare feature is the top tail, explained by its numbers, and stored for the cycle") {
  Fixture f;
  int64_t cycle = start_cycle(f.db, 1, 0).value();
  for (uint64_t s = 1; s <= 12; ++s) f.add_verified(cycle, s, {}, {"switch"});
  f.add_verified(cycle, 99, {"switch"}, {});
  Result<TailReport> report = tail_report_for_cycle(f.db, f.policy, cycle);
  REQUIRE_MESSAGE(report.ok(), report.message());
  REQUIRE_FALSE(report->entries.empty());
  const TailEntry& top = report->entries.front();
  MESSAGE(format_tail_report(*report));
  CHECK(top.dimension == "feature");
  CHECK(top.name == "switch");
  CHECK(top.signal == "corpus_share");
  CHECK(top.numbers["verified"] == 1);
  CHECK(top.numbers["verified_total"] == 13);
  CHECK(top.numbers["target_share"].get<double>() == doctest::Approx(0.15));
  CHECK(top.score > 0);
  CHECK(tail_report_rows(f.db, cycle).value().size() == report->entries.size());
}

TEST_CASE("failure categories become tails unless the policy excludes them; the share series follows cycles") {
  Fixture f;
  int64_t cycle = start_cycle(f.db, 1, 0).value();
  for (uint64_t s = 1; s <= 6; ++s) f.add_verified(cycle, s, {}, {"switch"});
  for (uint64_t s = 10; s < 14; ++s) {
    std::string id = f.add_verified(cycle, s, {}, {"switch"});
    REQUIRE(set_sample_status(f.db, id, "failed").ok());
    std::string category = s < 12 ? "translate.unsupported.grid_sync" : "amd.asm.vgpr_bank";
    REQUIRE(insert_failure(f.db, {id, std::nullopt, "translate", category, "evidence", std::nullopt, std::nullopt,
                                  "cuda2hip", "template"})
                .ok());
  }
  auto categories = [&f] {
    std::vector<std::string> names;
    std::vector<TailEntry> entries = detect_tails(f.db, f.policy).value();
    for (const TailEntry& entry : entries) {
      if (entry.dimension == "category") names.push_back(entry.name);
    }
    return names;
  };
  f.policy.tails.category_exclude_prefixes.clear();
  CHECK(categories() == std::vector<std::string>{"amd.asm.vgpr_bank", "translate.unsupported.grid_sync"});
  f.policy.tails.category_exclude_prefixes = {"translate.unsupported."};
  CHECK(categories() == std::vector<std::string>{"amd.asm.vgpr_bank"});
  CHECK(load_default_synth_policy(TAILFORGE_SOURCE_DIR).value().tails.category_exclude_prefixes ==
        std::vector<std::string>{"translate.unsupported."});

  int64_t second = start_cycle(f.db, 2, 0).value();
  f.add_verified(second, 500, {"switch"}, {});
  f.add_verified(second, 501, {"switch"}, {});
  std::vector<TailSharePoint> series = tail_share_series(f.db, "cuda2hip", "feature", "switch").value();
  REQUIRE(series.size() == 2);
  CHECK(series[0].verified_total == 6);
  CHECK(series[0].matching == 0);
  CHECK(series[1].verified_total == 8);
  CHECK(series[1].matching == 2);
  CHECK(series[1].share == doctest::Approx(0.25));
  CHECK_FALSE(tail_share_series(f.db, "cuda2hip", "persona", "x").ok());
}

TEST_CASE("with head_fraction a value is a tail below that fraction of the most common value's share") {
  Fixture f;
  f.policy.tails.features.tracked = {"atomics", "switch", "templates"};
  f.policy.tails.features.min_share = 0;
  f.policy.tails.features.targets.clear();
  int64_t cycle = start_cycle(f.db, 1, 0).value();
  for (int i = 0; i < 12; ++i) {
    Sample sample{"", "cuda2hip", "template", "cuda", "program " + std::to_string(i)};
    if (i < 10) sample.features.push_back("atomics");
    if (i < 3) sample.features.push_back("switch");
    if (i >= 6) sample.features.push_back("templates");
    sample.status = "verified";
    sample.cycle_id = cycle;
    REQUIRE(insert_sample_if_absent(f.db, sample).ok());
  }
  CHECK(detect_tails(f.db, f.policy).value().empty());  // no fixed targets, no head rule
  f.policy.tails.features.head_fraction = 0.5;  // head atomics 10/12: below 5/12 is a tail
  std::vector<TailEntry> tails = detect_tails(f.db, f.policy).value();
  REQUIRE(tails.size() == 1);
  CHECK(tails[0].name == "switch");
  CHECK(tails[0].numbers["head"] == "atomics");
  CHECK(tails[0].numbers["target_share"].get<double>() == doctest::Approx(5.0 / 12));
  CHECK(tails[0].numbers["deficit"] == 2);
}

TEST_CASE("synthesized samples link to their seeds with the reason, carry a verify job, and a re-run adds nothing") {
  Fixture f;
  int64_t cycle = start_cycle(f.db, 7, 0).value();
  for (uint64_t s = 1; s <= 10; ++s) f.add_verified(cycle, s, {}, {"switch"});
  std::string seed_id = f.add_verified(cycle, 50, {"switch"}, {});

  Result<SynthesisSummary> summary = synthesize_for_cycle(f.db, f.catalog, f.policy, cycle, 1234);
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  MESSAGE(synthesis_summary_to_json(*summary).dump());
  REQUIRE(summary->inserted > 0);
  CHECK(summary->inserted <= f.policy.synthesis.multiplier);
  for (const std::string& id : summary->inserted_ids) {
    Sample sample = find_sample(f.db, id).value().value();
    CHECK(sample.origin == "synthesized");
    CHECK(sample.track == "cuda2hip");
    CHECK(sample.status == "pending");
    CHECK(sample.template_id.has_value());
    CHECK(std::find(sample.features.begin(), sample.features.end(), "switch") != sample.features.end());
    std::vector<LineageEdge> up = ancestors_of(f.db, id).value();
    REQUIRE(up.size() == 1);
    CHECK(up[0].parent_id == seed_id);
    CHECK(up[0].relation == "synthesized_from");
    CHECK(up[0].agent == std::optional<std::string>("builtin-synthesizer"));
    nlohmann::json reason = nlohmann::json::parse(up[0].reason.value());
    CHECK(reason["dimension"] == "feature");
    CHECK(reason["name"] == "switch");
    CHECK(reason["signal"] == "corpus_share");
  }
  JobQueue queue(f.db);
  std::vector<Job> jobs = queue.list("pending", 1000).value();
  CHECK(jobs.size() == summary->inserted_ids.size());
  for (const Job& job : jobs) {
    nlohmann::json payload = nlohmann::json::parse(job.payload);
    CHECK(job.kind == "verify");
    CHECK(job.idempotency_key == "verify:" + payload["sample_id"].get<std::string>());
    CHECK(payload["cycle"] == cycle);
  }

  nlohmann::json lineage = lineage_report(f.db, summary->inserted_ids.front()).value();
  CHECK(lineage["ancestors"][0]["parent"] == seed_id);
  std::string text = format_lineage_report(lineage);
  MESSAGE(text);
  CHECK(text.find("feature/switch") != std::string::npos);
  CHECK(lineage_report(f.db, seed_id).value()["descendants"].size() == summary->inserted_ids.size());
  CHECK_FALSE(lineage_report(f.db, "no-such-id").ok());

  Result<SynthesisSummary> again = synthesize_for_cycle(f.db, f.catalog, f.policy, cycle, 1234);
  REQUIRE(again.ok());
  CHECK(again->inserted == 0);
  CHECK(again->per_tail.at(0).already_present == summary->inserted);
  CHECK(queue.list("pending", 1000).value().size() == jobs.size());
}

TEST_CASE("over five cycles the share of the top tail feature rises cycle over cycle") {
  Fixture f;
  f.policy.tails.features.targets["switch"] = 0.9;  // stays a tail for all five cycles
  int64_t first = start_cycle(f.db, 1, 0).value();
  for (uint64_t s = 1; s <= 20; ++s) f.add_verified(first, s, {}, {"switch"});
  f.add_verified(first, 500, {"switch"}, {});
  std::vector<double> series = {f.share_of("switch")};
  std::string top_name, inserted;
  for (int c = 0; c < 5; ++c) {
    int64_t cycle = c == 0 ? first : start_cycle(f.db, 100 + c, 0).value();
    for (uint64_t s = 0; s < 2; ++s) f.add_verified(cycle, 1000 * (c + 1) + s, {}, {"switch"});  // the head grows too
    Result<SynthesisSummary> summary = synthesize_for_cycle(f.db, f.catalog, f.policy, cycle, 42 + c);
    REQUIRE_MESSAGE(summary.ok(), summary.message());
    REQUIRE_FALSE(summary->tails.entries.empty());
    if (c == 0) top_name = summary->tails.entries.front().name;
    for (const std::string& id : summary->inserted_ids) REQUIRE(set_sample_status(f.db, id, "verified").ok());
    series.push_back(f.share_of(top_name));
    inserted += std::to_string(summary->inserted) + " ";
    // Closed before the next one starts, as the planner does (a later cycle's verdicts stay
    // deferred while an earlier one runs).
    REQUIRE(finish_cycle(f.db, CycleRecord{.id = cycle, .state = "done"}));
  }
  std::string printed;
  for (double share : series) printed += std::to_string(share) + " ";
  MESSAGE("share of feature '" << top_name << "' per cycle: " << printed << "(synthesized per cycle: " << inserted << ")");
  CHECK(top_name == "switch");
  for (size_t i = 1; i < series.size(); ++i) CHECK(series[i] > series[i - 1]);
}

TEST_CASE("synth.seeds_per_tail of the configuration sets how many seeds a tail takes, each multiplied") {
  Result<SynthPolicy> configured = synth_policy_from_config(
      nlohmann::json::parse(R"({"top_k": 2, "multiplier": 10, "seeds_per_tail": 1})"), TAILFORGE_SOURCE_DIR);
  REQUIRE_MESSAGE(configured.ok(), configured.message());
  CHECK(configured->synthesis.top_k == 2);
  CHECK(configured->synthesis.seeds_per_tail == 1);
  CHECK_FALSE(synth_policy_from_config(nlohmann::json::parse(R"({"seeds_per_tail": "one"})"), TAILFORGE_SOURCE_DIR).ok());

  for (int seeds : {1, 3}) {
    CAPTURE(seeds);
    Fixture f;
    f.policy.synthesis.seeds_per_tail = seeds;
    int64_t cycle = start_cycle(f.db, 7, 0).value();
    // 3 of 27 programs have a switch: below its target share, so it is the tail, with 3 seeds.
    for (uint64_t s = 1; s <= 24; ++s) f.add_verified(cycle, s, {}, {"switch"});
    for (uint64_t s = 50; s < 53; ++s) f.add_verified(cycle, s, {"switch"}, {});
    Result<SynthesisSummary> summary = synthesize_for_cycle(f.db, f.catalog, f.policy, cycle, 99);
    REQUIRE_MESSAGE(summary.ok(), summary.message());
    REQUIRE(summary->per_tail.size() == 1);
    CHECK(summary->per_tail[0].seed_ids.size() == static_cast<size_t>(seeds));
    CHECK(summary->inserted <= seeds * f.policy.synthesis.multiplier);
  }
}
