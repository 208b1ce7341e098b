#include "daemon/kernel_pairs_store.h"

#include <nlohmann/json.hpp>

#include "daemon/stage_records.h"

namespace tailforge {

Result<StoredKernelPairs> store_kernel_pairs(Database& db, const Sample& program, const KernelPairing& pairing,
                                             const Taxonomy& taxonomy) {
  StoredKernelPairs stored;
  for (const KernelPair& pair : pairing.pairs) {
    Sample kernel = sample_derived_from(program, "sass2rdna3", "sass", pair.sass);
    kernel.variables = nlohmann::json{{"kernel", pair.kernel},
                                      {"program", program.id},
                                      {"sass_arch", pair.sass_arch},
                                      {"sass_stats", assembly_stats_to_json(pair.sass_stats)},
                                      {"rdna3_stats", assembly_stats_to_json(pair.rdna3_stats)}}
                           .dump();
    Result<InsertOutcome> inserted = insert_sample_if_absent(db, kernel);
    if (!inserted) return inserted.error();
    kernel.id = inserted->id;
    LineageEdge edge{.parent_id = program.id,
                     .child_id = kernel.id,
                     .relation = "compiled_to",
                     .agent = "nvcc+cuobjdump/clang-amdgpu",
                     .reason = "kernel " + pair.kernel};
    if (Status s = insert_lineage_edge(db, edge); !s) return s.error();
    if (!inserted->inserted) {
      ++stored.already_stored;
      continue;
    }
    ++stored.inserted;
    std::vector<ArtifactRecord> artifacts = {
        {.stage = "sass2rdna3.pair", .name = kRdna3KernelKind, .kind = kRdna3KernelKind, .content = pair.rdna3},
        {.stage = "sass2rdna3.pair", .name = "rdna3_kernel_raw", .kind = "rdna3_kernel_raw", .content = pair.rdna3_raw},
        {.stage = "sass2rdna3.pair",
         .name = "asm_stats",
         .kind = "asm_stats",
         .content = nlohmann::json{{"sass", assembly_stats_to_json(pair.sass_stats)},
                                   {"rdna3", assembly_stats_to_json(pair.rdna3_stats)}}
                        .dump()}};
    for (const auto& [arch, text] : pair.sass_raw) {
      artifacts.push_back({.stage = "sass2rdna3.pair", .name = "sass_kernel:" + arch, .kind = "sass_kernel", .content = text});
    }
    if (Status s = store_derived_checks(db, kernel, artifacts, pair.checks, pair.ok, taxonomy, "clang-amdgpu"); !s) {
      return s.error();
    }
    if (pair.ok) ++stored.verified;
  }
  return stored;
}

}  // namespace tailforge
