// The speed figures of each kernelopt model version on the evaluation set, for `tailforge models`
// and the dashboard: over the evaluation items' tasks it answered, KernelBench's fast_1 and
// fast_2, the share of right candidates, the mean speedup of right, timed ones and their mean
// fraction of the physical limit (synth/kernelopt/report.h's figures, restricted to the items).
// Only timed runs have speed: where no GPU measured, timed_tasks is 0 and the text says so.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "synth/kernelopt/report.h"

namespace tailforge {

// Per model name.
Result<std::map<std::string, KernelFigures>> kernel_figures_by_version(Database& db);

nlohmann::json kernel_figures_json(const KernelFigures& figures);
// One line: "correct 12/12, fast_1 0.83, fast_2 0.42, mean 2.31x, 0.41 of the roofline (12 of 12 tasks
// timed)"; where nothing ran, how many candidates were built and that timing needs a GPU.
std::string describe_kernel_figures(const KernelFigures& figures);

}  // namespace tailforge
