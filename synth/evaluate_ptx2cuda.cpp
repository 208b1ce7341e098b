#include "synth/evaluate_ptx2cuda.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>

#include <nlohmann/json.hpp>

#include "synth/artifact_kinds.h"

namespace tailforge {
namespace {

// More buffers than any launch's parameters can point to: a larger K is not a recorded buffer.
constexpr long kMaxBuffers = 4096;

// The K of "launch_input:K"; -1 for another name, LONG_MAX for a K too large for a long.
long index_after(const std::string& name, const std::string& prefix) {
  if (name.compare(0, prefix.size(), prefix) != 0) return -1;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  if (first == last || std::find_if_not(first, last, ::isdigit) != last) return -1;
  long index = 0;
  if (std::from_chars(first, last, index).ec != std::errc()) return LONG_MAX;
  return index;
}

}  // namespace

Result<std::string> ptx2cuda_question(Database& db, const Sample& pair) {
  Result<std::vector<ArtifactRecord>> artifacts = artifacts_of(db, pair.id);
  if (!artifacts) return artifacts.error();
  for (const ArtifactRecord& artifact : *artifacts) {
    if (artifact.name == kRolledPtxKind) return artifact.content;
  }
  return make_error("ptx2cuda pair " + pair.id + " has no " + kRolledPtxKind + " artifact");
}

Result<StoredLaunch> stored_launch_of(Database& db, const Sample& pair) {
  Result<std::vector<ArtifactRecord>> artifacts = artifacts_of(db, pair.id);
  if (!artifacts) return artifacts.error();
  StoredLaunch stored;
  std::map<std::string, StoredLaunch::Variable> globals;
  for (const ArtifactRecord& artifact : *artifacts) {
    const std::string& name = artifact.name;
    if (name == "launch") stored.launch_txt = artifact.content;
    for (auto [prefix, buffers] : {std::pair{"launch_input:", &stored.inputs}, std::pair{"launch_output:", &stored.outputs}}) {
      long k = index_after(name, prefix);
      if (k < 0) continue;
      if (k >= kMaxBuffers) {
        return make_error("ptx2cuda pair " + pair.id + " has artifact " + name + ": more than " +
                          std::to_string(kMaxBuffers) + " buffers");
      }
      if (buffers->size() <= static_cast<size_t>(k)) buffers->resize(k + 1);
      (*buffers)[k] = artifact.content;
    }
    for (const char* prefix : {"launch_global_input:", "launch_global_output:"}) {
      std::string head = prefix;
      if (name.compare(0, head.size(), head) != 0) continue;
      StoredLaunch::Variable& variable = globals[name.substr(head.size())];
      variable.name = name.substr(head.size());
      (head == "launch_global_input:" ? variable.input : variable.output) = artifact.content;
    }
  }
  for (auto& [name, variable] : globals) stored.globals.push_back(std::move(variable));
  if (stored.inputs.size() != stored.outputs.size()) {
    return make_error("ptx2cuda pair " + pair.id + " has " + std::to_string(stored.inputs.size()) +
                      " recorded inputs but " + std::to_string(stored.outputs.size()) + " outputs");
  }
  nlohmann::json variables = nlohmann::json::parse(pair.variables.value_or("{}"), nullptr, false);
  if (variables.is_object() && variables.contains("buffer_types") && variables["buffer_types"].is_array()) {
    for (const nlohmann::json& type : variables["buffer_types"]) {
      stored.element_types.push_back(type.is_string() ? type.get<std::string>() : "bytes");
    }
  }
  return stored;
}

namespace {

std::vector<StageResult> judge_in(Database& db, const Sample& pair, const std::string& answer,
                                  const EvaluationSetup& setup, const std::string& scratch_dir) {
  const Toolchains& toolchains = setup.toolchains ? *setup.toolchains : detected_toolchains();
  StageContext context{setup.verifier, toolchains, &db, setup.gate, scratch_dir, {}};
  if (!toolchains.tool("nvcc").found()) {
    context.add(skipped_stage("ptx2cuda.compile", "nvcc not found"));
    return context.stages;
  }
  std::string module = run_candidate_compile_stage(context, answer, {});

  Result<StoredLaunch> stored = stored_launch_of(db, pair);
  if (!stored) {
    StageResult broken = skipped_stage("ptx2cuda.launch", "the recorded launch cannot be read: " + stored.message());
    broken.status = "error";
    context.add(broken);
    return context.stages;
  }
  if (stored->empty()) {
    context.add(skipped_stage("ptx2cuda.launch", "the pair has no recorded launch (its program never launched this "
                                                 "kernel, or ran where no NVIDIA GPU was)"));
    return context.stages;
  }
  if (!toolchains.has_gpu("nvidia")) {
    context.add(skipped_stage("ptx2cuda.launch", "no NVIDIA GPU (" + toolchains.nvidia_gpu_note + ")"));
    return context.stages;
  }
  Result<HarnessTools> tools = build_harness_tools(context);
  if (!tools) {
    StageResult broken = skipped_stage("ptx2cuda.launch", "the replay program does not build: " + tools.message());
    broken.status = "error";
    context.add(broken);
    return context.stages;
  }
  Result<CapturedLaunch> launch = restore_captured_launch(*stored, make_subdirectory(context, "recorded"));
  if (!launch) {
    StageResult broken = skipped_stage("ptx2cuda.launch", "the recorded launch cannot be rebuilt: " + launch.message());
    broken.status = "error";
    context.add(broken);
    return context.stages;
  }
  run_replay_stages(context, *tools, *launch, module, stored->element_types);
  return context.stages;
}

}  // namespace

std::vector<StageResult> judge_ptx2cuda_answer(Database& db, const Sample& pair, const std::string& answer,
                                               const EvaluationSetup& setup) {
  Result<std::string> scratch = make_scratch_directory(setup.verifier, "tailforge-ptx2cuda");
  if (!scratch) return {error_stage("ptx2cuda.compile", scratch.message())};
  std::vector<StageResult> stages = judge_in(db, pair, answer, setup, *scratch);
  remove_scratch_directory(setup.verifier, *scratch);
  return stages;
}

}  // namespace tailforge
