// The kernelopt track's built-in catalog (ConCuR): a fixed set of operator tasks with naive CUDA
// references (elementwise, transpose, reductions, fused chains, softmax, layernorm, GEMM, matvec,
// stencils, pooling) and, per task, hand-written optimized candidates with the reasoning behind
// each. It only writes kernel units (kernel_task.h); compiling, checking and timing them is the
// verifier's job. Everything is deterministic: the same call always gives the same text.
#pragma once

#include <vector>

#include "verifier/kernelopt/kernel_task.h"

namespace tailforge {

// Every built-in task, in a fixed order, with unique names.
std::vector<KernelTask> builtin_kernel_tasks();

// The built-in candidates of a task of builtin_kernel_tasks() (matched by name) or of a task with
// a recipe (generated_tasks.h: rebuilt from it), at least three with distinct strategies; none
// for a task that is neither (an imported one) or whose recipe cannot be rebuilt.
std::vector<KernelCandidate> builtin_candidates(const KernelTask& task);

}  // namespace tailforge
