#include "daemon/verify/ptx_pairs_store.h"

#include <nlohmann/json.hpp>

#include "daemon/verify/kernel_pairs_store.h"
#include "synth/artifact_kinds.h"

namespace tailforge {
namespace {

const KernelPairTrack kPtx2CudaPairs{"ptx2cuda", "cuda", "nvcc -ptx/kernel unit", "nvcc"};

std::vector<ArtifactRecord> pair_artifacts(const PtxPair& pair) {
  std::vector<ArtifactRecord> artifacts = {{.name = kPtxKind, .kind = kPtxKind, .content = pair.ptx},
                                           {.name = kRolledPtxKind, .kind = kRolledPtxKind, .content = pair.rolled_ptx},
                                           {.name = "kernel_unit", .kind = "kernel_unit", .content = pair.unit}};
  if (pair.launch.empty()) return artifacts;
  artifacts.push_back({.name = "launch", .kind = "launch", .content = pair.launch.launch_txt});
  for (size_t k = 0; k < pair.launch.inputs.size(); ++k) {
    std::string index = std::to_string(k);
    artifacts.push_back({.name = "launch_input:" + index, .kind = "launch_buffer", .content = pair.launch.inputs[k]});
    artifacts.push_back({.name = "launch_output:" + index, .kind = "launch_buffer", .content = pair.launch.outputs[k]});
  }
  for (const StoredLaunch::Variable& variable : pair.launch.globals) {
    artifacts.push_back(
        {.name = "launch_global_input:" + variable.name, .kind = "launch_global", .content = variable.input});
    artifacts.push_back(
        {.name = "launch_global_output:" + variable.name, .kind = "launch_global", .content = variable.output});
  }
  return artifacts;
}

}  // namespace

Result<StoredDerivedSamples> store_ptx_pairs(Database& db, const Sample& program, const PtxPairing& pairing,
                                             const Taxonomy& taxonomy, const std::string& host) {
  return store_pair_samples(db, program, pairing.pairs, taxonomy, host, [&](const PtxPair& pair) {
    nlohmann::json sizes = {{"ptx_chars", pair.ptx_chars}, {"rolled_ptx_chars", pair.rolled_ptx_chars},
                            {"unit_chars", pair.unit_chars}, {"cuda_chars", pair.cuda_chars}};
    nlohmann::json variables = {
        {"sm", pair.sm}, {"launch_captured", !pair.launch.empty()}, {"buffer_types", pair.launch.element_types}};
    variables.update(sizes);
    DerivedSample kernel =
        kernel_pair_sample(program, kPtx2CudaPairs, pair, pair.cuda, pair_artifacts(pair), variables);
    // A template kernel's instantiations share one unit: the entry tells their pairs apart.
    kernel.sample.id = sample_id_for(pair.cuda + "\n// ptx entry " + pair.kernel + "\n");
    return kernel;
  });
}

}  // namespace tailforge
