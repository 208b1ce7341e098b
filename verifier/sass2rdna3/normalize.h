// sass2rdna3: the training form of both sides, as CASS normalizes assembly. Comments, addresses,
// encodings and blank lines go; whitespace becomes canonical; labels and registers stay. SASS
// branch targets, which cuobjdump prints as addresses, become labels (nvdisasm's form), so the
// text needs no addresses. RDNA3's metadata block keeps its indentation (it is YAML), and a
// normalized kernel still assembles. Also counts instructions and registers of either side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tailforge {

// One function of cuobjdump or nvdisasm output (kernel_split.h) in training form.
std::string normalize_sass(const std::string& function_text);
// An RDNA3 assembly file in training form.
std::string normalize_rdna3(const std::string& assembly);

struct AssemblyStats {
  int64_t instructions = 0;
  int64_t registers = 0;         // SASS: R0..Rn in use (n + 1); RDNA3: .amdhsa_next_free_vgpr
  int64_t scalar_registers = 0;  // SASS: uniform UR0..URn (n + 1); RDNA3: .amdhsa_next_free_sgpr
  int64_t predicates = 0;        // SASS: P0..Pn (n + 1); RDNA3: 0
  int64_t labels = 0;
  std::vector<std::string> unparsed;  // lines that are neither instruction, label nor directive
};

// Counts of a normalized SASS function.
AssemblyStats sass_stats(const std::string& normalized_sass);
// Counts of an RDNA3 kernel file (raw or normalized): instructions outside descriptor and metadata.
AssemblyStats rdna3_stats(const std::string& assembly);

nlohmann::json assembly_stats_to_json(const AssemblyStats& stats);

}  // namespace tailforge
