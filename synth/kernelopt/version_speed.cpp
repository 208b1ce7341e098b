#include "synth/kernelopt/version_speed.h"

#include <set>

#include <fmt/format.h>

#include "store/evaluations.h"
#include "synth/kernelopt/store.h"
#include "synth/kernelopt/task_samples.h"

namespace tailforge {

Result<std::map<std::string, KernelFigures>> kernel_figures_by_version(Database& db) {
  Result<std::set<std::string>> items = eval_item_ids(db, "kernelopt");
  if (!items) return items.error();
  std::set<std::string> tasks;
  for (const std::string& id : *items) {
    Result<std::optional<Sample>> sample = find_sample(db, id);
    if (!sample) return sample.error();
    if (!*sample) continue;
    if (Result<KernelTask> task = kernel_task_of(**sample)) tasks.insert(task->name);
  }
  Result<std::vector<CandidateRecord>> records = load_kernelopt_candidates(db);
  if (!records) return records.error();
  std::vector<CandidateOutcome> outcomes;
  for (const CandidateRecord& record : *records) {
    const KernelCandidate& candidate = record.stored.candidate;
    if (candidate.origin != "model" || !tasks.count(candidate.task)) continue;
    outcomes.push_back({candidate.model, candidate.task, record.stored.operator_type,
                        record.status.empty() ? "skipped" : record.status, record.timed && record.status == "ok",
                        record.speedup, record.category, record.roofline_fraction()});
  }
  std::map<std::string, KernelFigures> figures;
  for (ModelKernelReport& model : kernel_report(outcomes)) figures[model.model] = model.overall;
  return figures;
}

nlohmann::json kernel_figures_json(const KernelFigures& figures) {
  bool timed = figures.timed_tasks > 0;
  auto when_timed = [&](double value) { return timed ? nlohmann::json(value) : nlohmann::json(); };
  return {{"tasks", figures.tasks},
          {"timed_tasks", figures.timed_tasks},
          {"candidates", figures.candidates},
          {"measured", figures.measured},
          {"right", figures.right},
          {"correctness", figures.measured ? nlohmann::json(figures.correctness()) : nlohmann::json()},
          {"fast_1", when_timed(figures.fast_1)},
          {"fast_2", when_timed(figures.fast_2)},
          {"mean_speedup", when_timed(figures.mean_speedup)},
          {"roofline_fraction", when_timed(figures.mean_roofline_fraction)},
          {"rejected", figures.rejected}};
}

std::string describe_kernel_figures(const KernelFigures& figures) {
  if (figures.measured == 0) {
    int rejected = 0;
    for (const auto& [category, count] : figures.rejected) rejected += count;
    return fmt::format("{} of {} candidates built and inspected, none run ({} tasks); fast_p not measured: timing "
                       "needs an NVIDIA GPU",
                       figures.candidates - rejected, figures.candidates, figures.tasks);
  }
  std::string text = fmt::format("correct {}/{}", figures.right, figures.measured);
  if (figures.timed_tasks == 0) {
    return text + fmt::format(" of {} tasks; fast_p not measured: timing needs an NVIDIA GPU", figures.tasks);
  }
  text += fmt::format(", fast_1 {:.2f}, fast_2 {:.2f}, mean {:.2f}x", figures.fast_1, figures.fast_2, figures.mean_speedup);
  if (figures.mean_roofline_fraction > 0) text += fmt::format(", {:.2f} of the roofline", figures.mean_roofline_fraction);
  return text + fmt::format(" ({} of {} tasks timed)", figures.timed_tasks, figures.tasks);
}

}  // namespace tailforge
