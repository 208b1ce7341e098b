#include "daemon/verify/ptx_pairs_store.h"

#include <nlohmann/json.hpp>

#include "synth/artifact_kinds.h"

namespace tailforge {
namespace {

std::vector<ArtifactRecord> pair_artifacts(const PtxPair& pair) {
  const char* stage = "ptx2cuda.pair";
  std::vector<ArtifactRecord> artifacts = {
      {.stage = stage, .name = kPtxKind, .kind = kPtxKind, .content = pair.ptx},
      {.stage = stage, .name = kRolledPtxKind, .kind = kRolledPtxKind, .content = pair.rolled_ptx},
      {.stage = stage, .name = "kernel_unit", .kind = "kernel_unit", .content = pair.unit}};
  if (pair.launch.empty()) return artifacts;
  artifacts.push_back({.stage = stage, .name = "launch", .kind = "launch", .content = pair.launch.launch_txt});
  for (size_t k = 0; k < pair.launch.inputs.size(); ++k) {
    std::string index = std::to_string(k);
    artifacts.push_back({.stage = stage, .name = "launch_input:" + index, .kind = "launch_buffer",
                         .content = pair.launch.inputs[k]});
    artifacts.push_back({.stage = stage, .name = "launch_output:" + index, .kind = "launch_buffer",
                         .content = pair.launch.outputs[k]});
  }
  for (const StoredLaunch::Variable& variable : pair.launch.globals) {
    artifacts.push_back({.stage = stage, .name = "launch_global_input:" + variable.name, .kind = "launch_global",
                         .content = variable.input});
    artifacts.push_back({.stage = stage, .name = "launch_global_output:" + variable.name, .kind = "launch_global",
                         .content = variable.output});
  }
  return artifacts;
}

}  // namespace

Result<StoredDerivedSamples> store_ptx_pairs(Database& db, const Sample& program, const PtxPairing& pairing,
                                             const Taxonomy& taxonomy, const std::string& host) {
  StoredDerivedSamples stored;
  for (const PtxPair& pair : pairing.pairs) {
    DerivedSample kernel{.sample = sample_derived_from(program, "ptx2cuda", "cuda", pair.cuda),
                         .edge_agent = "nvcc -ptx/kernel unit",
                         .reason = "kernel " + pair.kernel,
                         .artifacts = pair_artifacts(pair),
                         .checks = pair.checks,
                         .check_agent = "nvcc",
                         .ok = pair.ok};
    kernel.sample.variables = nlohmann::json{{"kernel", pair.kernel},
                                             {"program", program.id},
                                             {"sm", pair.sm},
                                             {"ptx_chars", pair.ptx_chars},
                                             {"rolled_ptx_chars", pair.rolled_ptx_chars},
                                             {"unit_chars", pair.unit_chars},
                                             {"cuda_chars", pair.cuda_chars},
                                             {"launch_captured", !pair.launch.empty()},
                                             {"buffer_types", pair.launch.element_types}}
                                  .dump();
    // A template kernel's instantiations share one unit: the entry tells their pairs apart.
    kernel.sample.id = sample_id_for(pair.cuda + "\n// ptx entry " + pair.kernel + "\n");
    if (Status s = store_derived_sample(db, program, kernel, taxonomy, host, stored); !s) return s.error();
  }
  return stored;
}

}  // namespace tailforge
