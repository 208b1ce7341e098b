#include "daemon/verify/kernel_pairs_store.h"

#include <nlohmann/json.hpp>

namespace tailforge {
namespace {

std::vector<ArtifactRecord> pair_artifacts(const KernelPair& pair) {
  const char* stage = "sass2rdna3.pair";
  std::vector<ArtifactRecord> artifacts = {
      {.stage = stage, .name = kRdna3KernelKind, .kind = kRdna3KernelKind, .content = pair.rdna3},
      {.stage = stage, .name = "rdna3_kernel_raw", .kind = "rdna3_kernel_raw", .content = pair.rdna3_raw},
      {.stage = stage,
       .name = "asm_stats",
       .kind = "asm_stats",
       .content = nlohmann::json{{"sass", assembly_stats_to_json(pair.sass_stats)},
                                 {"rdna3", assembly_stats_to_json(pair.rdna3_stats)}}
                      .dump()}};
  for (const auto& [arch, text] : pair.sass_raw) {
    artifacts.push_back({.stage = stage, .name = "sass_kernel:" + arch, .kind = "sass_kernel", .content = text});
  }
  return artifacts;
}

}  // namespace

Result<StoredDerivedSamples> store_kernel_pairs(Database& db, const Sample& program, const KernelPairing& pairing,
                                               const Taxonomy& taxonomy, const std::string& host) {
  StoredDerivedSamples stored;
  for (const KernelPair& pair : pairing.pairs) {
    DerivedSample kernel{.sample = sample_derived_from(program, "sass2rdna3", "sass", pair.sass),
                         .edge_agent = "nvcc+cuobjdump/clang-amdgpu",
                         .reason = "kernel " + pair.kernel,
                         .artifacts = pair_artifacts(pair),
                         .checks = pair.checks,
                         .check_agent = "clang-amdgpu",
                         .ok = pair.ok};
    kernel.sample.variables = nlohmann::json{{"kernel", pair.kernel},
                                             {"program", program.id},
                                             {"sass_arch", pair.sass_arch},
                                             {"sass_stats", assembly_stats_to_json(pair.sass_stats)},
                                             {"rdna3_stats", assembly_stats_to_json(pair.rdna3_stats)}}
                                  .dump();
    if (Status s = store_derived_sample(db, program, kernel, taxonomy, host, stored); !s) return s.error();
  }
  return stored;
}

}  // namespace tailforge
