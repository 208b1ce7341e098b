// The tracks, one row each, and what each brings: to the loop (what generates its samples, how
// they are verified), to evaluating a model (the question a model reads, the judge of its answer,
// a small input for `model check`, which kinds of model it takes), and to the commands (whether
// `verify` checks a file of it, the tools `doctor` checks, what `import` takes and `export`
// writes). The pipeline, evaluation, model registration and the commands look a track up here
// instead of comparing its name; a new track adds its row here and its judge in its own files.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/models.h"
#include "store/samples.h"
#include "synth/evaluation_setup.h"

namespace tailforge {

// What a judge gets: the item's sample, the model's answer, the item's reference output (when it
// has one) and a work folder of its own.
struct JudgeInput {
  Database& db;
  const Sample& item;
  const std::string& answer;
  const std::optional<std::string>& expected_stdout;
  const EvaluationSetup& setup;
  const std::string& work_dir;
  std::string_view model_name = {};  // the model that answered
  std::string_view reasoning = {};   // what it said besides its answer (ModelAnswer::reasoning)
};

// A tool the daemon needs to grow a track, as `tailforge doctor` checks it.
struct ToolNeed {
  std::string_view tool;     // a Toolchains role: nvcc, hip_clang, llvm_mc, cuobjdump, gcc
  bool required = false;     // without it nothing of the track verifies (else: less does)
  std::string_view needed_for;  // what it does for the track, or what is lost without it
  std::string_view fix;      // how to get it
};

struct Track {
  std::string_view name;
  std::string_view summary;  // one line: what is translated into what
  // `tailforge verify FILE --track` takes it: the verifier chain checks a file of the track by
  // itself (a ptx2cuda pair needs its program, a kernelopt kernel its task).
  bool verifies_files = false;
  // What `tailforge doctor` checks when the daemon grows the track (synth.track), and whether the
  // GPU targets of verifier.amd_targets and the NVIDIA ones are checked too.
  std::vector<ToolNeed> tools;
  bool checks_gpu_targets = false;
  // What the daemon's generate jobs and synthesis, and `tailforge generate`, make for it (none:
  // the track is cut from another track's samples, or measured apart).
  enum class Generated { none, cuda_programs, c_functions, kernel_tasks };
  Generated generated = Generated::none;
  // How the daemon verifies a sample of it: the verifier chain as it is; the chain after the
  // daemon's translator made the HIP side, a verified program then also yielding the derived
  // tracks' pairs; the C function check; or a kernel task's check (its reference built and, on a
  // GPU, run by the harness; its built-in candidates measured as training data).
  enum class Verified { chain, chain_after_hip_translation, c_function_check, kernel_task_check };
  Verified verified_by = Verified::chain;
  // What `tailforge import PATH` takes for it, and what `tailforge export` writes from.
  enum class Imported { none, cuda_tree, task_file };
  Imported imported = Imported::none;
  enum class Exported { verified_pairs, curated_kernels };
  Exported exported = Exported::verified_pairs;
  // Said when an export of the track found nothing: what usually keeps its pairs from being made.
  std::string (*why_none_exported)(Database& db) = nullptr;
  // The loop's evaluation asks the track's models.
  bool evaluated = true;
  // Models of the track must be of this kind ("" = any of openai, command, builtin), and why.
  std::string_view model_kind;
  std::string_view model_kind_reason;
  // A built-in model (kind builtin) answers this track, and what it is.
  bool builtin_model = false;
  std::string_view builtin_model_summary;
  // A small input of the track, for `model check` to ask a command model.
  std::string_view check_input;
  // The question a model reads for an item; null: the item's own text (training_text of it).
  Result<std::string> (*question)(Database& db, const Sample& item) = nullptr;
  // The stages an answer goes through, in order, as a chain result's.
  Result<std::vector<StageResult>> (*judge)(const JudgeInput& input) = nullptr;
};

// Every track, in the order help and reports list them.
const std::vector<Track>& tracks();
// The track of that name; nullptr for none.
const Track* find_track(std::string_view name);
// The names of the tracks `which` accepts (every track when empty), in table order, for
// messages: "cuda2hip, sass2rdna3, ..." (or joined by `separator`: "cuda2hip or c2x86").
std::string track_names(const std::function<bool(const Track&)>& which = {}, std::string_view separator = ", ");

// Whether `model` may be registered on its track: a known track, of the kind the track takes,
// builtin only where the rule translator answers.
Status check_model_track(const ModelRecord& model);

}  // namespace tailforge
