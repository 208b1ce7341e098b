// The kernelopt task generator: new tasks of the built-in families (builtin_tasks.h) at drawn
// shapes, for the daemon's generate jobs, and variants near a task a model fails (other sizes,
// aspect ratios, ragged edges, the neighbouring operator; for elementwise chains one op more,
// one fewer or one replaced). A generated task's recipe rebuilds it, and builtin_candidates()
// gives its hand-written candidates. Only float32 exists in the harness, so every buffer of a
// generated task is float32; no dtype is drawn. Nothing here compiles, runs or stores anything,
// and everything is deterministic: the same arguments give byte-identical tasks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "verifier/kernelopt/kernel_task.h"

namespace tailforge {

// The task of generate job `index` under `seed`: the family (and its kind: single op or chain,
// plain or fused GEMM, A x or A^T x) cycles with the index, so consecutive indexes differ; the
// shape is drawn from (seed, index) within the family's ranges and every constraint its candidates
// assume. Its name encodes the shape ("relu_n9437187", "gemm_m384n512k256") in a form no catalog
// name has, and its shape is never a catalog task's. origin "generated", family and recipe set.
KernelTask generated_kernel_task(uint64_t seed, uint64_t index);

// Up to `count` tasks near `task` (read from its recipe), each of its family, none equal to
// `task`, to a catalog task or to another (distinct names and reference texts); the kinds of change
// alternate, an elementwise chain's first variant is a fused neighbour. Deterministic in `seed`.
// None for a task without a readable recipe (an imported task).
std::vector<KernelTask> kernel_task_variants(const KernelTask& task, uint64_t seed, int count);

// Tags for the long-tail detector, sorted and unique:
//   "operator/<operator_type>", "family/<family>" (none when the family is empty),
//   "size/small" (must_read_bytes() < 16 MiB), "size/medium" (< 64 MiB), "size/large",
// and from the recipe: "shape/ragged" (a size that is not a multiple of the candidates' vector
// width or tile) or "shape/aligned", "fused/<n>_ops" (a fusion whose reference runs n kernels),
// "op/<op>" (an elementwise chain's ops, the reduction, the stencil), "inputs/<n>" (elementwise).
std::vector<std::string> kernel_task_features(const KernelTask& task);

}  // namespace tailforge
