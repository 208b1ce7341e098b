// The daemon's kernelopt samples: a task grown by the loop is a sample of track kernelopt whose
// text is its reference kernel unit and whose variables carry the whole task, so generate jobs,
// synthesis, the evaluation set and verify jobs pass tasks through the store like any sample.
// What a model under test reads for a task (kernelopt_question) ends with one machine-readable
// line, so a command or built-in model knows the task without parsing prose. Candidates are
// samples of their own (store.h); this module tells the two apart and stores nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"
#include "store/database.h"
#include "store/samples.h"
#include "verifier/kernelopt/kernel_task.h"

namespace tailforge {

// The sample of a task: origin "template" (generated), "synthesized" or "imported"; features
// `features` (the tail detector's tags).
Sample kernel_task_sample(const KernelTask& task, const std::string& origin, std::optional<int64_t> cycle,
                          std::vector<std::string> features);

// The task a sample carries; an error for a sample that is not a task (a candidate, another
// track's sample, variables that are not a task).
Result<KernelTask> kernel_task_of(const Sample& sample);

// What a model reads for a task item (kernelopt_question_text of its task).
Result<std::string> kernelopt_question(Database& db, const Sample& item);

// A small task's question (relu over 1024 floats), for `model check` to ask a kernelopt model.
const std::string& kernel_check_question();

}  // namespace tailforge
