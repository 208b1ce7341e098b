#include "synth/tracks.h"

#include <filesystem>
#include <fstream>

#include "synth/evaluate_c2x86.h"
#include "synth/evaluate_ptx2cuda.h"
#include "synth/kernelopt/judge.h"
#include "synth/kernelopt/task_samples.h"
#include "verifier/chain.h"
#include "verifier/toolchains.h"

namespace tailforge {

namespace {

// The answer, named as its track's target form (which picks the chain's stages), through the
// verifier chain, compared with the item's reference output where it has one.
Result<std::vector<StageResult>> judge_by_chain(const JudgeInput& input, const char* file_name, const char* track) {
  std::filesystem::path file = std::filesystem::path(input.work_dir) / file_name;
  {
    std::ofstream out(file, std::ios::binary);
    out << input.answer;
    if (!out) return make_error("cannot write " + file.string() + " (disk full?)");
  }
  ChainOptions options;
  options.verifier = input.setup.verifier;
  options.track = track;
  options.cache_db = &input.db;
  options.gate = input.setup.gate;
  options.expected_stdout = input.expected_stdout;
  options.toolchains = input.setup.toolchains;
  return verify_file(file.string(), options).stages;
}

Result<std::vector<StageResult>> judge_hip(const JudgeInput& input) { return judge_by_chain(input, "answer.hip", "cuda2hip"); }

Result<std::vector<StageResult>> judge_rdna3(const JudgeInput& input) {
  return judge_by_chain(input, "answer.s", "sass2rdna3");
}

Result<std::vector<StageResult>> judge_cuda_for_ptx(const JudgeInput& input) {
  return judge_ptx2cuda_answer(input.db, input.item, input.answer, input.setup);
}

Result<std::vector<StageResult>> judge_kernel(const JudgeInput& input) {
  return judge_kernel_answer(input.db, input.item, {input.answer, input.reasoning, input.model_name}, input.setup,
                             input.work_dir);
}

Result<std::vector<StageResult>> judge_x86(const JudgeInput& input) {
  return judge_c2x86_answer(input.db, input.item, input.answer, input.setup);
}

// sass2rdna3 pairs come from verified CUDA programs whose SASS was dumped: say what stopped that.
std::string why_no_kernel_pairs(Database& db) {
  std::string why = "no sass2rdna3 pairs: each comes from a verified CUDA program's SASS (cuobjdump or nvdisasm) and its "
                    "gfx1100 assembly.\n";
  Result<std::optional<std::string>> skipped = latest_skip_reason(db, "nvidia.sass");
  if (skipped && *skipped) why += "the newest nvidia.sass stage was skipped: " + **skipped + "\n";
  const Toolchains& toolchains = detected_toolchains();
  if (!toolchains.tool("cuobjdump").found() && !toolchains.tool("nvdisasm").found()) {
    why += "this host has neither cuobjdump nor nvdisasm (both come with the CUDA toolkit): run the daemon on a host "
           "that has them.\n";
  }
  return why;
}

}  // namespace

const std::vector<Track>& tracks() {
  static const std::vector<Track> table = {
      {.name = "cuda2hip",
       .summary = "CUDA programs to HIP, verified on AMD (gfx1100) and, through HIP-on-NVIDIA, on NVIDIA",
       .verifies_files = true,
       .tools = {{"nvcc", true, "CUDA programs cannot be compiled",
                  "install the CUDA toolkit and put its bin folder on PATH (/usr/local/cuda/bin is searched too)"},
                 {"hip_clang", false, "the gfx targets' HIP compile is skipped", "apt install hipcc clang (Debian's ROCm packages)"},
                 {"llvm_mc", false, "RDNA3 assembly is not checked", "apt install llvm"},
                 {"cuobjdump", false, "no SASS, so no sass2rdna3 pairs", "install the CUDA toolkit's binary utilities"}},
       .checks_gpu_targets = true,
       .generated = Track::Generated::cuda_programs,
       .verified_by = Track::Verified::chain_after_hip_translation,
       .imported = Track::Imported::cuda_tree,
       .builtin_model = true,
       .builtin_model_summary = "the CUDA->HIP rule translator",
       .check_input = "__global__ void add_one(float* x, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                      "  if (i < n) x[i] += 1.0f;\n}\n",
       .judge = judge_hip},
      {.name = "sass2rdna3",
       .summary = "a kernel's NVIDIA SASS to AMD RDNA3 assembly, cut from verified CUDA programs",
       .verifies_files = true,
       .why_none_exported = why_no_kernel_pairs,
       .check_input = "        /*0000*/                   EXIT ;\n",
       .judge = judge_rdna3},
      {.name = "ptx2cuda",
       .summary = "a kernel's Rolled-PTX back to CUDA, judged on the pair's recorded launch",
       .check_input = ".version 8.0\n.target sm_80\n.address_size 64\n\n.visible .entry noop()\n{\n\tret;\n}\n",
       .question = ptx2cuda_question,
       .judge = judge_cuda_for_ptx},
      {.name = "c2x86",
       .summary = "C functions to x86-64 assembly, checked against gcc -O0 on IO tests",
       .verifies_files = true,
       .tools = {{"gcc", true, "the c2x86 oracle, assembler and linker", "apt install gcc"}},
       .generated = Track::Generated::c_functions,
       .verified_by = Track::Verified::c_function_check,
       .check_input = "int add_one(int x) { return x + 1; }\n",
       .judge = judge_x86},
      {.name = "kernelopt",
       .summary = "faster CUDA kernels for a task, with reasoning, measured against the task's reference",
       .tools = {{"nvcc", true, "no task or candidate can be built", "install the CUDA toolkit"},
                 {"nm", false, "the candidates' objects are not inspected for streams, threads or dlsym",
                  "apt install binutils"}},
       .generated = Track::Generated::kernel_tasks,
       .verified_by = Track::Verified::kernel_task_check,
       .imported = Track::Imported::task_file,
       .exported = Track::Exported::curated_kernels,
       .builtin_model = true,
       .builtin_model_summary = "the built-in strategies (the catalog's optimized candidates, chosen as learned)",
       .check_input = kernel_check_question(),
       .question = kernelopt_question,
       .judge = judge_kernel},
  };
  return table;
}

const Track* find_track(std::string_view name) {
  for (const Track& track : tracks())
    if (track.name == name) return &track;
  return nullptr;
}

std::string track_names(const std::function<bool(const Track&)>& which, std::string_view separator) {
  std::string names;
  for (const Track& track : tracks()) {
    if (which && !which(track)) continue;
    if (!names.empty()) names += separator;
    names += track.name;
  }
  return names;
}

Status check_model_track(const ModelRecord& model) {
  std::string at = "model '" + model.name + "': ";
  const Track* track = find_track(model.track);
  if (!track) return make_error(at + "track '" + model.track + "' has no evaluator (" + track_names() + " have)");
  if (!track->model_kind.empty() && model.kind != track->model_kind) {
    return make_error(at + "a " + model.track + " model " + std::string(track->model_kind_reason) + ": kind " +
                      std::string(track->model_kind));
  }
  if (model.kind == "builtin" && !track->builtin_model) {
    std::string which;
    for (const Track& known : tracks()) {
      if (!known.builtin_model) continue;
      which += (which.empty() ? "" : "; ") + std::string(known.builtin_model_summary) + " for " + std::string(known.name);
    }
    return make_error(at + "no built-in model answers " + model.track + " (a builtin model is " + which + ")");
  }
  return {};
}

}  // namespace tailforge
