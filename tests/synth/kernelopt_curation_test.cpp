#include "synth/kernelopt/curation.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

using namespace tailforge;

namespace {

MeasuredCandidate timed(int64_t id, const std::string& task, const std::string& type, int64_t words, double speedup) {
  return {id, task, type, words, true, true, speedup};
}

MeasuredCandidate wrong(int64_t id, const std::string& task, const std::string& type, int64_t words, bool was_timed,
                        double speedup = 0) {
  return {id, task, type, words, false, was_timed, speedup};
}

MeasuredCandidate untimed(int64_t id, const std::string& task, const std::string& type, int64_t words) {
  return {id, task, type, words, true, false, 0};
}

// Ten tasks; the comment on each says what the rules must make of it (default options).
std::vector<MeasuredCandidate> measured_track() {
  return {
      // add_bias (single), ARL 620/3: shortest 1 (120 words, 2.00x) is fastest -> (a) 1; 3 is wrong.
      timed(1, "add_bias", "single", 120, 2.0),
      timed(2, "add_bias", "single", 300, 1.5),
      wrong(3, "add_bias", "single", 200, true),
      // gemm_bias_gelu (fusion), ARL 1170/4: shortest 4 is slow -> skipped; 5 > 5x -> (b); 7 is exactly 5x.
      timed(4, "gemm_bias_gelu", "fusion", 100, 1.1),
      timed(5, "gemm_bias_gelu", "fusion", 450, 5.5),
      wrong(6, "gemm_bias_gelu", "fusion", 300, false),
      timed(7, "gemm_bias_gelu", "fusion", 320, 5.0),
      // gemm_tiled (matmul), ARL 1050/3: (a) 8, which is also > 5x; 9 -> (b).
      timed(8, "gemm_tiled", "matmul", 200, 8.0),
      timed(9, "gemm_tiled", "matmul", 350, 6.0),
      timed(10, "gemm_tiled", "matmul", 500, 3.0),
      // layernorm (reduction), ARL 800/3: 11 and 12 tie on words and speedup, 13 ties on speedup -> (a) 11.
      timed(12, "layernorm", "reduction", 150, 1.7),
      timed(11, "layernorm", "reduction", 150, 1.7),
      timed(13, "layernorm", "reduction", 500, 1.7),
      // relu (single), ARL 110: correct but never timed -> skipped, not eligible for (c).
      untimed(14, "relu", "single", 80),
      untimed(15, "relu", "single", 140),
      // scale (single), ARL 740/3: shortest 16 is not fastest -> skipped; best 17 (2.30x).
      timed(16, "scale", "single", 90, 1.2),
      timed(17, "scale", "single", 400, 2.3),
      timed(18, "scale", "single", 250, 1.8),
      // tanh (single), ARL 430/3: shortest 25 is slow; 26 and 27 tie at 2.40x, 27 is shorter -> best 27.
      timed(25, "tanh", "single", 70, 1.0),
      timed(26, "tanh", "single", 200, 2.4),
      timed(27, "tanh", "single", 160, 2.4),
      // sigmoid (single), ARL 920/3: shortest 19 is slow -> skipped; best 20 (2.40x).
      timed(19, "sigmoid", "single", 100, 0.9),
      timed(20, "sigmoid", "single", 220, 2.4),
      wrong(21, "sigmoid", "single", 600, true),
      // softmax (reduction), ARL 500/3: the shortest (22, 9x) is wrong, so it neither counts for (a) nor (b);
      // among the correct, 23 is shortest and fastest -> (a) 23.
      wrong(22, "softmax", "reduction", 60, true, 9.0),
      timed(23, "softmax", "reduction", 180, 1.4),
      timed(24, "softmax", "reduction", 260, 1.1),
      // stencil_3d (stencil), ARL 800: nothing correct -> skipped.
      wrong(28, "stencil_3d", "stencil", 700, true),
      wrong(29, "stencil_3d", "stencil", 900, false),
  };
}

std::vector<int64_t> chosen_ids(const CurationResult& result) {
  std::vector<int64_t> ids;
  for (const CurationChoice& choice : result.chosen) ids.push_back(choice.candidate_id);
  return ids;
}

std::vector<std::string> chosen_rules(const CurationResult& result) {
  std::vector<std::string> rules;
  for (const CurationChoice& choice : result.chosen) rules.push_back(choice.rule);
  return rules;
}

std::map<std::string, std::string> buckets(const CurationResult& result) {
  std::map<std::string, std::string> by_task;
  for (const TaskDifficulty& task : result.difficulty) by_task[task.task] = task.bucket;
  return by_task;
}

const std::string rule_a = "shortest_is_fastest";
const std::string rule_b = "high_speedup";
const std::string rule_c = "single_operator_balance";

}  // namespace

TEST_CASE("curation: shortest-is-fastest, high speedups, then single-operator tasks until none is left") {
  CurationResult result = curate_kernelopt(measured_track());
  // (a) add_bias, gemm_tiled, layernorm, softmax; (b) 5, 9; singles are then 1 of 6, so (c) adds
  // sigmoid (2.40x), tanh (2.40x, name after sigmoid), scale (2.30x) and runs out at 4 of 9.
  CHECK(chosen_ids(result) == std::vector<int64_t>{1, 8, 11, 23, 5, 9, 20, 27, 17});
  CHECK(chosen_rules(result) ==
        std::vector<std::string>{rule_a, rule_a, rule_a, rule_a, rule_b, rule_b, rule_c, rule_c, rule_c});
  CHECK(result.chosen_by_operator_type ==
        std::map<std::string, int>{{"fusion", 1}, {"matmul", 2}, {"reduction", 2}, {"single", 4}});

  CHECK(result.chosen[0].task == "add_bias");
  CHECK(result.chosen[0].why ==
        "shortest reasoning (120 words) is also the fastest (2.00x) of 2 correct timed candidates");
  CHECK(result.chosen[1].why ==
        "shortest reasoning (200 words) is also the fastest (8.00x) of 3 correct timed candidates; "
        "also above the high-speedup bar (8.00x > 5x)");
  CHECK(result.chosen[4].why == "speedup above the high-speedup bar (5.50x > 5x, 450 words)");
  CHECK(result.chosen[6].why ==
        "fastest (2.40x, 220 words) of 2 correct timed candidates of a single-operator task; "
        "single share was 1/6, below 0.5");
  CHECK(result.chosen[7].why ==
        "fastest (2.40x, 160 words) of 3 correct timed candidates of a single-operator task; "
        "single share was 2/7, below 0.5");

  REQUIRE(result.skipped.size() == 6);
  CHECK(result.skipped[0].task == "gemm_bias_gelu");
  CHECK(result.skipped[0].reason ==
        "shortest reasoning (candidate 4, 100 words, 1.10x) is not the fastest (candidate 5, 5.50x)");
  CHECK(result.skipped[1].task == "relu");
  CHECK(result.skipped[1].reason == "2 correct candidates, none timed");
  CHECK(result.skipped[2].task == "scale");
  CHECK(result.skipped[2].reason ==
        "shortest reasoning (candidate 16, 90 words, 1.20x) is not the fastest (candidate 17, 2.30x)");
  CHECK(result.skipped[3].task == "sigmoid");
  CHECK(result.skipped[4].task == "stencil_3d");
  CHECK(result.skipped[4].reason == "no correct candidate among 2");
  CHECK(result.skipped[5].task == "tanh");
  CHECK(result.skipped[5].reason ==
        "shortest reasoning (candidate 25, 70 words, 1.00x) is not the fastest (candidate 27, 2.40x)");
  CHECK(result.note ==
        "chose 9 of 29 candidates in 10 tasks (shortest_is_fastest 4, high_speedup 2, single_operator_balance 3); "
        "difficulty: easy below 206.67 words, hard from 292.50 words (terciles)");
}

TEST_CASE("curation: single-operator balance stops as soon as the share is reached") {
  CurationOptions options;
  options.single_share = 0.3;  // 2/7 < 0.3 after sigmoid, 3/8 >= 0.3 after tanh
  CHECK(chosen_ids(curate_kernelopt(measured_track(), options)) == std::vector<int64_t>{1, 8, 11, 23, 5, 9, 20, 27});

  options.single_share = 0;
  CHECK(chosen_ids(curate_kernelopt(measured_track(), options)) == std::vector<int64_t>{1, 8, 11, 23, 5, 9});

  options.single_share = 0.5;
  options.high_speedup = 7;  // only 8 (already chosen by (a)) clears it; singles 1/4, 2/5, then 3/6 = 0.5
  CurationResult result = curate_kernelopt(measured_track(), options);
  CHECK(chosen_ids(result) == std::vector<int64_t>{1, 8, 11, 23, 20, 27});
  CHECK(chosen_rules(result) == std::vector<std::string>{rule_a, rule_a, rule_a, rule_a, rule_c, rule_c});
  CHECK(result.chosen[1].why ==
        "shortest reasoning (200 words) is also the fastest (8.00x) of 3 correct timed candidates; "
        "also above the high-speedup bar (8.00x > 7x)");
}

TEST_CASE("curation: ARL over all candidates, buckets from the terciles by default") {
  CurationResult result = curate_kernelopt(measured_track());
  REQUIRE(result.difficulty.size() == 10);
  const TaskDifficulty& add_bias = result.difficulty[0];
  CHECK(add_bias.task == "add_bias");
  CHECK(add_bias.operator_type == "single");
  CHECK(add_bias.arl == doctest::Approx(620.0 / 3));
  CHECK(add_bias.candidates == 3);
  CHECK(add_bias.correct == 2);
  const TaskDifficulty& gelu = result.difficulty[1];
  CHECK(gelu.task == "gemm_bias_gelu");
  CHECK(gelu.arl == doctest::Approx(292.5));
  CHECK(gelu.candidates == 4);
  CHECK(gelu.correct == 3);
  const TaskDifficulty& stencil = result.difficulty[8];
  CHECK(stencil.task == "stencil_3d");
  CHECK(stencil.operator_type == "stencil");
  CHECK(stencil.arl == doctest::Approx(800));
  CHECK(stencil.correct == 0);
  CHECK(result.difficulty[4].arl == doctest::Approx(110));        // relu
  CHECK(result.difficulty[7].arl == doctest::Approx(500.0 / 3));  // softmax: the wrong 60 words count

  // Sorted ARLs: 110 relu, 143.3 tanh, 166.7 softmax, 206.7 add_bias, 246.7 scale, 266.7 layernorm,
  // 292.5 gemm_bias_gelu, 306.7 sigmoid, 350 gemm_tiled, 800 stencil_3d; cuts a[3] = 206.7, a[6] = 292.5.
  CHECK(buckets(result) == std::map<std::string, std::string>{{"add_bias", "medium"},
                                                              {"gemm_bias_gelu", "hard"},
                                                              {"gemm_tiled", "hard"},
                                                              {"layernorm", "medium"},
                                                              {"relu", "easy"},
                                                              {"scale", "medium"},
                                                              {"sigmoid", "hard"},
                                                              {"softmax", "easy"},
                                                              {"stencil_3d", "hard"},
                                                              {"tanh", "easy"}});
}

TEST_CASE("curation: explicit difficulty thresholds, strict at both ends") {
  CurationOptions options;
  options.difficulty_thresholds = std::pair<double, double>{200, 300};
  CurationResult result = curate_kernelopt(measured_track(), options);
  CHECK(buckets(result) == std::map<std::string, std::string>{{"add_bias", "medium"},
                                                              {"gemm_bias_gelu", "medium"},
                                                              {"gemm_tiled", "hard"},
                                                              {"layernorm", "medium"},
                                                              {"relu", "easy"},
                                                              {"scale", "medium"},
                                                              {"sigmoid", "hard"},
                                                              {"softmax", "easy"},
                                                              {"stencil_3d", "hard"},
                                                              {"tanh", "easy"}});
  CHECK(result.note.find("easy below 200.00 words, hard above 300.00 words (given)") != std::string::npos);

  options.difficulty_thresholds = std::pair<double, double>{110, 350};  // relu is exactly 110, gemm_tiled 350
  std::map<std::string, std::string> at_edges = buckets(curate_kernelopt(measured_track(), options));
  CHECK(at_edges["relu"] == "medium");
  CHECK(at_edges["gemm_tiled"] == "medium");
  CHECK(at_edges["stencil_3d"] == "hard");
  CHECK(at_edges["tanh"] == "medium");
}

TEST_CASE("curation: tercile cuts for few tasks and for equal ARLs") {
  std::vector<MeasuredCandidate> three = {wrong(1, "t10", "single", 10, false), wrong(2, "t20", "single", 20, false),
                                          wrong(3, "t30", "single", 30, false)};
  CHECK(buckets(curate_kernelopt(three)) ==
        std::map<std::string, std::string>{{"t10", "easy"}, {"t20", "medium"}, {"t30", "hard"}});

  std::vector<MeasuredCandidate> one = {timed(1, "only", "fusion", 100, 1.5)};
  CHECK(buckets(curate_kernelopt(one)) == std::map<std::string, std::string>{{"only", "medium"}});

  std::vector<MeasuredCandidate> equal = {timed(1, "x", "single", 50, 1.0), timed(2, "y", "single", 50, 1.0),
                                          timed(3, "z", "single", 50, 1.0), timed(4, "w", "single", 50, 1.0)};
  CHECK(buckets(curate_kernelopt(equal)) ==
        std::map<std::string, std::string>{{"w", "medium"}, {"x", "medium"}, {"y", "medium"}, {"z", "medium"}});
}

TEST_CASE("curation: a lone correct timed candidate is shortest and fastest") {
  CurationResult result =
      curate_kernelopt({timed(1, "only", "fusion", 100, 1.5), wrong(2, "only", "fusion", 40, true)});
  CHECK(chosen_ids(result) == std::vector<int64_t>{1});
  CHECK(result.chosen[0].why == "the only correct timed candidate (100 words, 1.50x) is shortest and fastest");
  CHECK(result.skipped.empty());
}

TEST_CASE("curation: empty input and untimed candidates choose nothing, with a note") {
  CurationResult empty = curate_kernelopt({});
  CHECK(empty.chosen.empty());
  CHECK(empty.skipped.empty());
  CHECK(empty.difficulty.empty());
  CHECK(empty.chosen_by_operator_type.empty());
  CHECK(empty.note == "no candidates");

  std::vector<MeasuredCandidate> no_gpu = {untimed(1, "relu", "single", 80), untimed(2, "relu", "single", 140),
                                           untimed(3, "gemm", "matmul", 300), wrong(4, "gemm", "matmul", 500, false)};
  CurationResult result = curate_kernelopt(no_gpu);
  CHECK(result.chosen.empty());
  CHECK(result.chosen_by_operator_type.empty());
  CHECK(result.note == "no candidate was timed (no GPU measurement), so nothing was chosen");
  REQUIRE(result.skipped.size() == 2);
  CHECK(result.skipped[0].task == "gemm");
  CHECK(result.skipped[0].reason == "1 correct candidate, none timed");
  CHECK(result.skipped[1].reason == "2 correct candidates, none timed");
  REQUIRE(result.difficulty.size() == 2);
  CHECK(result.difficulty[0].arl == doctest::Approx(400));
  CHECK(result.difficulty[1].arl == doctest::Approx(110));
  CHECK(result.difficulty[0].bucket == "hard");  // cuts a[0] = 110, a[1] = 400
  CHECK(result.difficulty[1].bucket == "medium");

  std::vector<MeasuredCandidate> all_wrong = {wrong(1, "relu", "single", 80, true, 3.0)};
  CurationResult wrong_result = curate_kernelopt(all_wrong);
  CHECK(wrong_result.chosen.empty());
  CHECK(wrong_result.note == "no timed candidate was correct, so nothing was chosen");
}
