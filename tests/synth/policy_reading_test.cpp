// The synth policy, retrain and eval readers (policies/config_section.h underneath): what each
// key's error says, the values kept when a key is absent, and the presets of nested sections.
#include <doctest/doctest.h>

#include "synth/eval_set.h"
#include "synth/policy.h"
#include "synth/retrain.h"

using namespace tailforge;
using nlohmann::json;

namespace {

std::string policy_error(const std::string& text) {
  Result<SynthPolicy> policy = synth_policy_from_json(json::parse(text), "p.json");
  return policy.ok() ? "" : policy.message();
}

}  // namespace

TEST_CASE("a synth policy's errors name the file and the key path") {
  CHECK(policy_error(R"({"colour": 1})") == "p.json:.colour is not a known key");
  CHECK(policy_error(R"({"track": 1})") == "p.json:.track must be a string");
  CHECK(policy_error(R"({"dedup": {"threshold": "high"}})") == "p.json:.dedup.threshold must be a number");
  CHECK(policy_error(R"({"dedup": {"permutations": 1.5}})") == "p.json:.dedup.permutations must be an integer");
  CHECK(policy_error(R"({"dedup": {"mask_numbers": 1}})") == "p.json:.dedup.mask_numbers must be true or false");
  CHECK(policy_error(R"({"dedup": []})") == "p.json:.dedup must be an object");
  CHECK(policy_error(R"({"synthesis": {"top_k": -1}})") == "p.json:.synthesis.top_k must not be negative");
  CHECK(policy_error(R"({"resampling": {"max_weight": -2}})") == "p.json:.resampling.max_weight must not be negative");
  CHECK(policy_error(R"({"tails": {"features": {"min_share": -0.1}}})") ==
        "p.json:.tails.features.min_share must not be negative");
  CHECK(policy_error(R"({"tails": {"yield": {"min_evaluated": 3}}})") ==
        "p.json:.tails.yield.min_evaluated is not a known key");
  CHECK(policy_error(R"({"tails": {"model": {"min_finished": 3}}})") ==
        "p.json:.tails.model.min_finished is not a known key");
  CHECK(policy_error(R"({"tails": {"categories": {"min_failures": 0.5}}})") ==
        "p.json:.tails.categories.min_failures must be an integer");
  CHECK(policy_error(R"({"export": {"pairs": {"cuda2hip": {"target_kind": "hip", "io_tests": "yes"}}}})") ==
        "p.json:.export.pairs.cuda2hip.io_tests must be true or false");
  CHECK(policy_error(R"({"export": {"pairs": {"cuda2hip": {"target_kind": "hip", "length_reductions": {"x": [1]}}}}})") ==
        R"(p.json:.export.pairs.cuda2hip.length_reductions.x must be ["<variable before>", "<variable after>"])");
  CHECK(policy_error(R"({"export": {"pairs": {"cuda2hip": {"target_kind": "binary"}}}})") ==
        "p.json:.export.pairs.cuda2hip names unknown artifact kind 'binary'");
  CHECK(policy_error(R"({"api": {"family_floor_share": 2}})") == "p.json: api.family_floor_share must be at most 1");
  CHECK(policy_error(R"({"dedup": {"threshold": 0}})") == "p.json: dedup.threshold must be in (0, 1]");
  CHECK(policy_error(R"({"tails": {"signal_weights": {"corpus_share": "x"}}})")
            .rfind("p.json:.tails.signal_weights: wrong type (", 0) == 0);
}

TEST_CASE("a synth policy keeps the defaults of absent keys and the presets of its sections") {
  Result<SynthPolicy> policy = synth_policy_from_json(json::parse(R"({
    "tails": {"yield": {"min_finished": 7}, "model": {"excess_ratio": 2}, "categories": {"min_share": 0.1}},
    "export": {"pairs": {"c2x86": {"target_kind": "text"}}},
    "api": {"prior_file": "/abs/prior.json", "max_identifier_tails": 9}
  })"), "dir/p.json");
  REQUIRE_MESSAGE(policy.ok(), policy.message());
  SynthPolicy defaults;
  CHECK(policy->tails.yield_min_finished == 7);
  CHECK(policy->tails.yield_min_failure_rate == defaults.tails.yield_min_failure_rate);
  CHECK(policy->tails.model_excess_ratio == 2.0);
  CHECK(policy->tails.model_min_evaluated == defaults.tails.model_min_evaluated);
  CHECK(policy->tails.category_min_share == 0.1);
  CHECK(policy->tails.category_min_failures == defaults.tails.category_min_failures);
  CHECK(policy->dedup.threshold == defaults.dedup.threshold);
  CHECK(policy->dedup.seed == defaults.dedup.seed);
  REQUIRE(policy->export_pairs.count("c2x86") == 1);
  CHECK(policy->export_pairs["c2x86"].sample_tracks == std::vector<std::string>{"c2x86"});
  CHECK(policy->export_pairs["c2x86"].source_kind == "text");
  CHECK(policy->api.enabled);
  CHECK(policy->api.rules_file == "dir/hipify_rules.json");
  CHECK(policy->api.families_file == "dir/api_families.json");
  CHECK(policy->api.prior_file == "/abs/prior.json");
  CHECK(policy->api.max_identifier_tails == 9);
  CHECK(policy->api.floor_weight == defaults.api.floor_weight);
}

TEST_CASE("the config's synth section overrides only the settings it names") {
  Result<SynthPolicy> shipped = load_default_synth_policy(TAILFORGE_SOURCE_DIR);
  REQUIRE(shipped.ok());
  Result<SynthPolicy> configured =
      synth_policy_from_config(json::parse(R"({"enabled": true, "multiplier": 4, "model_under_test": "m"})"),
                               TAILFORGE_SOURCE_DIR);
  REQUIRE_MESSAGE(configured.ok(), configured.message());
  CHECK(configured->synthesis.multiplier == 4);
  CHECK(configured->synthesis.top_k == shipped->synthesis.top_k);
  CHECK(configured->synthesis.seeds_per_tail == shipped->synthesis.seeds_per_tail);
  CHECK(configured->eval_fraction == shipped->eval_fraction);
  CHECK(configured->model_under_test == std::optional<std::string>("m"));
  Result<SynthPolicy> wrong = synth_policy_from_config(json::parse(R"({"top_k": -3})"), TAILFORGE_SOURCE_DIR);
  CHECK(wrong.message() == "config synth.top_k must not be negative");
  Result<SynthPolicy> unknown = synth_policy_from_config(json::parse(R"({"topk": 3})"), TAILFORGE_SOURCE_DIR);
  CHECK(unknown.message() == "config synth.topk is not a known key");
}

TEST_CASE("the retrain and eval sections: kinds, unknown keys and ranges, each naming the key") {
  SynthPolicy synth;
  synth.track = "c2x86";
  Result<RetrainPolicy> retrain = retrain_policy_from_json(json::parse(R"({"max_attempts": 2})"), synth);
  REQUIRE_MESSAGE(retrain.ok(), retrain.message());
  CHECK(retrain->track == "c2x86");  // the synth policy's track unless the section names one
  CHECK(retrain->max_attempts == 2);
  CHECK(retrain->min_new_verified == RetrainPolicy{}.min_new_verified);
  CHECK(retrain_policy_from_json(json::parse(R"({"max_attempts": 1.5})"), synth).message() ==
        "retrain.max_attempts must be an integer");
  CHECK(retrain_policy_from_json(json::parse(R"({"webhook": 1})"), synth).message() == "retrain.webhook must be a string");
  CHECK(retrain_policy_from_json(json::parse(R"({"keep_snapshots": -1})"), synth).message() ==
        "retrain.keep_snapshots must not be negative (0 keeps every snapshot)");
  CHECK(retrain_policy_from_json(json::parse(R"({"command": "train.sh"})"), synth).message() ==
        "retrain.command must be an array");
  CHECK(retrain_policy_from_json(json::array(), synth).message() == "retrain: the section must be an object");

  Result<EvalPolicy> eval = eval_policy_from_json(json::parse(R"({"fraction": 0.5, "held_out_trees": ["t"]})"));
  REQUIRE_MESSAGE(eval.ok(), eval.message());
  CHECK(eval->fraction == 0.5);
  CHECK(eval->max_items == EvalPolicy{}.max_items);
  CHECK(eval->held_out.trees == std::vector<std::string>{"t"});
  CHECK(eval_policy_from_json(json::parse(R"({"fractions": 0.5})")).message() == "eval.fractions is not a known key");
  CHECK(eval_policy_from_json(json::parse(R"({"enabled": "yes"})")).message() == "eval.enabled must be true or false");
  CHECK(eval_policy_from_json(json::parse(R"({"max_items": -1})")).message() == "eval.max_items must not be negative");
  CHECK(eval_policy_from_json(json::parse(R"({"keep_versions": -1})")).message() ==
        "eval.keep_versions must not be negative (0 evaluates every version)");
}
