#include "daemon/verify/kernel_pairs_store.h"

#include <nlohmann/json.hpp>

namespace tailforge {
namespace {

const KernelPairTrack kSass2Rdna3Pairs{"sass2rdna3", "sass", "nvcc+cuobjdump/clang-amdgpu", "clang-amdgpu"};

std::vector<ArtifactRecord> pair_artifacts(const KernelPair& pair) {
  std::vector<ArtifactRecord> artifacts = {
      {.name = kRdna3KernelKind, .kind = kRdna3KernelKind, .content = pair.rdna3},
      {.name = "rdna3_kernel_raw", .kind = "rdna3_kernel_raw", .content = pair.rdna3_raw},
      {.name = "asm_stats",
       .kind = "asm_stats",
       .content = nlohmann::json{{"sass", assembly_stats_to_json(pair.sass_stats)},
                                 {"rdna3", assembly_stats_to_json(pair.rdna3_stats)}}
                      .dump()}};
  for (const auto& [arch, text] : pair.sass_raw) {
    artifacts.push_back({.name = "sass_kernel:" + arch, .kind = "sass_kernel", .content = text});
  }
  return artifacts;
}

}  // namespace

Result<StoredDerivedSamples> store_kernel_pairs(Database& db, const Sample& program, const KernelPairing& pairing,
                                               const Taxonomy& taxonomy, const std::string& host) {
  return store_pair_samples(db, program, pairing.pairs, taxonomy, host, [&](const KernelPair& pair) {
    nlohmann::json variables = {{"sass_arch", pair.sass_arch},
                                {"sass_stats", assembly_stats_to_json(pair.sass_stats)},
                                {"rdna3_stats", assembly_stats_to_json(pair.rdna3_stats)}};
    return kernel_pair_sample(program, kSass2Rdna3Pairs, pair, pair.sass, pair_artifacts(pair), variables);
  });
}

}  // namespace tailforge
