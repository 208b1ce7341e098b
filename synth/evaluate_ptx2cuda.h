// The ptx2cuda track's side of model evaluation (synth/evaluate.h): what the model reads, the
// pair's Rolled-PTX, and how its CUDA answer is judged: compiled alone (ptx2cuda.compile) and,
// where an NVIDIA GPU exists, launched on the launch recorded with the pair, rebuilt from the
// store alone (ptx2cuda.launch), its outputs compared with the recorded ones within a normalized
// absolute error of 1e-3 (ptx2cuda.compare). A pair whose kernel was never launched is judged by
// the compile alone.
#pragma once

#include <string>
#include <vector>

#include "store/samples.h"
#include "synth/evaluation_setup.h"
#include "verifier/ptx2cuda/launch_harness.h"

namespace tailforge {

// The pair's Rolled-PTX: the source a model decompiles.
Result<std::string> ptx2cuda_question(Database& db, const Sample& pair);

// The launch recorded with the pair, from its artifacts and variables; empty when none was.
Result<StoredLaunch> stored_launch_of(Database& db, const Sample& pair);

// Judges a candidate kernel for the pair; the stages in order, as a chain result's. It works in a
// scratch directory of its own (verifier.scratch_root, else $TMPDIR), which the sandbox user
// reaches wherever the daemon's work folder is.
std::vector<StageResult> judge_ptx2cuda_answer(Database& db, const Sample& pair, const std::string& answer,
                                               const EvaluationSetup& setup);

}  // namespace tailforge
