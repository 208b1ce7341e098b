// The artifact kind names the export reads (as the verifier stores them in artifact.kind), in one
// place so the verifier and the export agree. It does not read or write artifacts.
#pragma once

#include <string>
#include <vector>

namespace tailforge {

inline constexpr const char* kSampleTextKind = "text";  // the sample's own source, not an artifact
inline constexpr const char* kHipKind = "hip";          // stage translate.hip
inline constexpr const char* kPtxKind = "ptx";
inline constexpr const char* kSassKind = "sass";        // stage nvidia.sass
inline constexpr const char* kRdna3AsmKind = "rdna3_asm";  // stage amd.asm.gfx1100
inline constexpr const char* kX86AsmKind = "x86_asm";
// c2x86: the oracle assembly with float and double constants as literals (daemon/verify/c2x86_jobs.h)
inline constexpr const char* kX86AsmSymbolicKind = "x86_asm_symbolic";
inline constexpr const char* kHostAsmKind = "host_asm";
inline constexpr const char* kRolledPtxKind = "rolled_ptx";
// sass2rdna3: one kernel's normalized RDNA3, assembling alone (daemon/verify/kernel_pairs_store.h)
inline constexpr const char* kRdna3KernelKind = "rdna3_kernel";

// Every kind an export pair may name.
inline std::vector<std::string> known_export_kinds() {
  return {kSampleTextKind, kHipKind, kPtxKind, kSassKind, kRdna3AsmKind, kX86AsmKind, kX86AsmSymbolicKind, kHostAsmKind, kRolledPtxKind,
          kRdna3KernelKind};
}

}  // namespace tailforge
