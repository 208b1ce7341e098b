// The kernelopt figures users compare (KernelBench's fast_p and ConCuR's tables): per model (the
// built-in optimizer counts as the model "builtin"), over the tasks it wrote candidates for,
// fast_p = share of tasks with a right kernel faster than p x the reference (p = 0: a right
// kernel at all; only candidates that passed every check count), the share of right candidates,
// the mean speedup of right, timed ones and their mean fraction of the physical limit, and the
// rejected ones by category; overall and by operator type. Pure: the caller reads the measurements from the store.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tailforge {

struct CandidateOutcome {
  std::string model;          // "builtin" or the model's name
  std::string task;
  std::string operator_type;
  std::string status;         // the latest measurement: ok, fail, skipped, error
  bool timed = false;
  double speedup = 0;         // right and timed only
  std::string category;       // a wrong or cheating one's category ("kernelopt.cheat.stateful")
  double roofline_fraction = 0;  // right and timed, with its task's physical limit known
};

struct KernelFigures {
  int tasks = 0;              // tasks with at least one candidate of the model
  int timed_tasks = 0;        // tasks where at least one right candidate was timed
  int candidates = 0;
  int measured = 0;           // candidates that ran (not skipped)
  int right = 0;
  double fast_0 = 0, fast_1 = 0, fast_2 = 0;  // shares of `tasks`
  double mean_speedup = 0;    // over right, timed candidates
  double mean_roofline_fraction = 0;  // over right, timed candidates whose limit is known
  std::map<std::string, int> rejected;  // failed candidates by category: never in fast_p or curation
  double correctness() const { return measured ? static_cast<double>(right) / measured : 0; }
};

struct ModelKernelReport {
  std::string model;
  KernelFigures overall;
  std::map<std::string, KernelFigures> by_operator_type;
};

std::vector<ModelKernelReport> kernel_report(const std::vector<CandidateOutcome>& outcomes);

nlohmann::json kernel_report_to_json(const std::vector<ModelKernelReport>& report);
std::string format_kernel_report(const std::vector<ModelKernelReport>& report);

}  // namespace tailforge
