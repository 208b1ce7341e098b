// kernelopt report: fast_p over tasks from each task's best right kernel, correctness over the
// candidates that ran, mean speedup of right timed ones, overall and by operator type.
#include <doctest/doctest.h>

#include "synth/kernelopt/report.h"

namespace tailforge {

TEST_CASE("kernelopt report: fast_0, fast_1, fast_2, correctness and mean speedup per model and operator type") {
  std::vector<CandidateOutcome> outcomes = {
      // builtin: relu has a 2.5x and a 0.8x; sum has a 1.5x and a wrong one; gemm only a 0.5x;
      // blur was not run (no GPU there).
      {"builtin", "relu", "single", "ok", true, 2.5},
      {"builtin", "relu", "single", "ok", true, 0.8},
      {"builtin", "sum", "reduction", "ok", true, 1.5},
      {"builtin", "sum", "reduction", "fail", false, 0},
      {"builtin", "gemm", "matmul", "ok", true, 0.5},
      {"builtin", "blur", "stencil", "skipped", false, 0},
      // a model: right on relu only, 3.0x; a cheat on sum.
      {"m1", "relu", "single", "ok", true, 3.0},
      {"m1", "sum", "reduction", "fail", false, 0},
  };
  std::vector<ModelKernelReport> report = kernel_report(outcomes);
  REQUIRE(report.size() == 2);
  const ModelKernelReport& builtin = report[0];
  CHECK(builtin.model == "builtin");
  CHECK(builtin.overall.tasks == 4);
  CHECK(builtin.overall.timed_tasks == 3);
  CHECK(builtin.overall.candidates == 6);
  CHECK(builtin.overall.measured == 5);
  CHECK(builtin.overall.right == 4);
  CHECK(builtin.overall.correctness() == doctest::Approx(0.8));
  CHECK(builtin.overall.fast_0 == doctest::Approx(0.75));  // relu, sum, gemm of 4
  CHECK(builtin.overall.fast_1 == doctest::Approx(0.5));   // relu 2.5, sum 1.5
  CHECK(builtin.overall.fast_2 == doctest::Approx(0.25));  // relu
  CHECK(builtin.overall.mean_speedup == doctest::Approx((2.5 + 0.8 + 1.5 + 0.5) / 4));
  REQUIRE(builtin.by_operator_type.count("matmul"));
  CHECK(builtin.by_operator_type.at("matmul").fast_0 == doctest::Approx(1.0));
  CHECK(builtin.by_operator_type.at("matmul").fast_1 == doctest::Approx(0.0));
  CHECK(builtin.by_operator_type.at("stencil").fast_0 == doctest::Approx(0.0));
  CHECK(builtin.by_operator_type.at("stencil").measured == 0);

  const ModelKernelReport& model = report[1];
  CHECK(model.model == "m1");
  CHECK(model.overall.tasks == 2);
  CHECK(model.overall.fast_1 == doctest::Approx(0.5));
  CHECK(model.overall.fast_2 == doctest::Approx(0.5));
  CHECK(model.overall.correctness() == doctest::Approx(0.5));

  nlohmann::json json = kernel_report_to_json(report);
  CHECK(json["models"][0]["overall"]["fast_1"].get<double>() == doctest::Approx(0.5));
  std::string table = format_kernel_report(report);
  CHECK(table.find("model builtin") != std::string::npos);
  CHECK(table.find("fast_1") != std::string::npos);
  CHECK(format_kernel_report({}).find("no kernelopt candidates") == 0);
}

}  // namespace tailforge

namespace tailforge {

TEST_CASE("kernelopt report: rejected candidates by category never count, and right ones give their roofline fraction") {
  std::vector<CandidateOutcome> outcomes = {
      {"m1", "relu", "single", "ok", true, 1.2, "", 0.6},
      {"m1", "sum", "reduction", "ok", true, 2.0, "", 0.2},
      {"m1", "relu", "single", "fail", false, 0, "kernelopt.cheat.stateful", 0},
      {"m1", "sum", "reduction", "fail", false, 0, "kernelopt.cheat.stateful", 0},
      {"m1", "copy", "single", "fail", false, 0, "kernelopt.cheat.beyond_roofline", 0},
  };
  std::vector<ModelKernelReport> report = kernel_report(outcomes);
  REQUIRE(report.size() == 1);
  const KernelFigures& all = report[0].overall;
  CHECK(all.right == 2);
  CHECK(all.fast_0 == doctest::Approx(2.0 / 3));  // copy has no right candidate
  CHECK(all.mean_roofline_fraction == doctest::Approx(0.4));
  CHECK(all.rejected == std::map<std::string, int>{{"kernelopt.cheat.beyond_roofline", 1}, {"kernelopt.cheat.stateful", 2}});
  nlohmann::json json = kernel_report_to_json(report);
  CHECK(json["models"][0]["overall"]["rejected"]["kernelopt.cheat.stateful"] == 2);
  CHECK(json["models"][0]["overall"]["mean_roofline_fraction"].get<double>() == doctest::Approx(0.4));
  std::string table = format_kernel_report(report);
  CHECK(table.find("rejected: kernelopt.cheat.beyond_roofline 1; kernelopt.cheat.stateful 2;") != std::string::npos);
  CHECK(table.find("0.40") != std::string::npos);
}

}  // namespace tailforge
