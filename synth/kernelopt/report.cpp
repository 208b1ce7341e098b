#include "synth/kernelopt/report.h"

#include <fmt/format.h>

namespace tailforge {
namespace {

KernelFigures figures_of(const std::vector<const CandidateOutcome*>& outcomes) {
  KernelFigures figures;
  std::map<std::string, double> best;   // task -> best right speedup (0 when right but untimed)
  std::map<std::string, bool> right_task, timed_task;
  double speedup_sum = 0, roofline_sum = 0;
  int speedup_count = 0, roofline_count = 0;
  for (const CandidateOutcome* outcome : outcomes) {
    ++figures.candidates;
    best.emplace(outcome->task, 0);
    if (outcome->status != "skipped") ++figures.measured;
    if (outcome->status == "fail") ++figures.rejected[outcome->category.empty() ? "unknown" : outcome->category];
    if (outcome->status != "ok") continue;
    ++figures.right;
    right_task[outcome->task] = true;
    if (!outcome->timed) continue;
    timed_task[outcome->task] = true;
    best[outcome->task] = std::max(best[outcome->task], outcome->speedup);
    speedup_sum += outcome->speedup;
    ++speedup_count;
    if (outcome->roofline_fraction > 0) {
      roofline_sum += outcome->roofline_fraction;
      ++roofline_count;
    }
  }
  figures.mean_roofline_fraction = roofline_count ? roofline_sum / roofline_count : 0;
  figures.tasks = static_cast<int>(best.size());
  figures.timed_tasks = static_cast<int>(timed_task.size());
  int fast[3] = {0, 0, 0};
  for (const auto& [task, speedup] : best) {
    if (right_task.count(task)) ++fast[0];
    if (speedup > 1) ++fast[1];
    if (speedup > 2) ++fast[2];
  }
  if (figures.tasks > 0) {
    figures.fast_0 = static_cast<double>(fast[0]) / figures.tasks;
    figures.fast_1 = static_cast<double>(fast[1]) / figures.tasks;
    figures.fast_2 = static_cast<double>(fast[2]) / figures.tasks;
  }
  figures.mean_speedup = speedup_count ? speedup_sum / speedup_count : 0;
  return figures;
}

nlohmann::json figures_json(const KernelFigures& figures) {
  return {{"tasks", figures.tasks},           {"timed_tasks", figures.timed_tasks},
          {"candidates", figures.candidates}, {"measured", figures.measured},
          {"right", figures.right},           {"correctness", figures.correctness()},
          {"fast_0", figures.fast_0},         {"fast_1", figures.fast_1},
          {"fast_2", figures.fast_2},         {"mean_speedup", figures.mean_speedup},
          {"mean_roofline_fraction", figures.mean_roofline_fraction > 0 ? nlohmann::json(figures.mean_roofline_fraction)
                                                                         : nlohmann::json()},
          {"rejected", figures.rejected}};
}

std::string figures_row(const std::string& label, const KernelFigures& figures) {
  return fmt::format("  {:<12} {:>5} {:>6} {:>5}/{:<5} {:>11.1f}% {:>7.1f}% {:>7.1f}% {:>7.1f}% {:>8} {:>9}\n", label,
                     figures.tasks, figures.timed_tasks, figures.right, figures.measured, 100 * figures.correctness(),
                     100 * figures.fast_0, 100 * figures.fast_1, 100 * figures.fast_2,
                     figures.mean_speedup > 0 ? fmt::format("{:.2f}x", figures.mean_speedup) : "-",
                     figures.mean_roofline_fraction > 0 ? fmt::format("{:.2f}", figures.mean_roofline_fraction) : "-");
}

}  // namespace

std::vector<ModelKernelReport> kernel_report(const std::vector<CandidateOutcome>& outcomes) {
  std::map<std::string, std::vector<const CandidateOutcome*>> by_model;
  std::map<std::string, std::map<std::string, std::vector<const CandidateOutcome*>>> by_model_type;
  for (const CandidateOutcome& outcome : outcomes) {
    by_model[outcome.model].push_back(&outcome);
    by_model_type[outcome.model][outcome.operator_type].push_back(&outcome);
  }
  std::vector<ModelKernelReport> report;
  for (const auto& [model, rows] : by_model) {
    ModelKernelReport entry{model, figures_of(rows), {}};
    for (const auto& [type, typed] : by_model_type[model]) entry.by_operator_type[type] = figures_of(typed);
    report.push_back(std::move(entry));
  }
  return report;
}

nlohmann::json kernel_report_to_json(const std::vector<ModelKernelReport>& report) {
  nlohmann::json models = nlohmann::json::array();
  for (const ModelKernelReport& entry : report) {
    nlohmann::json types = nlohmann::json::object();
    for (const auto& [type, figures] : entry.by_operator_type) types[type] = figures_json(figures);
    models.push_back({{"model", entry.model}, {"overall", figures_json(entry.overall)}, {"by_operator_type", types}});
  }
  return {{"models", models}};
}

std::string format_kernel_report(const std::vector<ModelKernelReport>& report) {
  if (report.empty()) return "no kernelopt candidates yet (tailforge kernelopt run)\n";
  std::string out;
  for (const ModelKernelReport& entry : report) {
    out += "model " + entry.model + "\n";
    out += fmt::format("  {:<12} {:>5} {:>6} {:>11} {:>12} {:>8} {:>8} {:>8} {:>8} {:>9}\n", "operator", "tasks", "timed",
                       "right", "correctness", "fast_0", "fast_1", "fast_2", "mean", "roofline");
    out += figures_row("all", entry.overall);
    for (const auto& [type, figures] : entry.by_operator_type) out += figures_row(type, figures);
    if (!entry.overall.rejected.empty()) {
      out += "  rejected:";
      for (const auto& [category, count] : entry.overall.rejected) out += fmt::format(" {} {};", category, count);
      out += "\n";
    }
  }
  out += "fast_p: share of tasks with a right kernel faster than p x the reference (fast_0: right at all), counting "
         "only candidates that passed every check; mean: mean speedup of right, timed candidates; roofline: their "
         "mean fraction of the task's physical limit on the GPU (its bytes at peak bandwidth, its FLOPs at peak rate)\n";
  return out;
}

}  // namespace tailforge
