// sass2rdna3: per-kernel SASS/RDNA3 pairs from one verified CUDA program's chain result. Kernels
// are matched by mangled name (the translation keeps kernel names); each pair carries both sides
// raw and normalized, SASS per sm target, the counts of both sides, and the checks of its
// normalized RDNA3: llvm-mc assembles it for the AMD target and ld.lld links it into a code
// object. Storing the pairs is the daemon's (daemon/verify/kernel_pairs_store.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "verifier/chain.h"
#include "verifier/sass2rdna3/normalize.h"

namespace tailforge {

struct KernelPair {
  std::string kernel;                          // mangled name
  std::string sass_arch;                       // the sm target of `sass` (the first configured)
  std::string sass;                            // normalized SASS of that target: the pair's source
  std::map<std::string, std::string> sass_raw;  // per sm target, as cuobjdump/nvdisasm printed it
  std::string rdna3_raw;                       // the kernel's file, as split from clang's module
  std::string rdna3;                           // normalized: the pair's target
  AssemblyStats sass_stats, rdna3_stats;
  std::vector<StageResult> checks;             // nvidia.sass.parse, amd.assemble.<t>, amd.codeobject.<t>
  bool ok = false;                             // every check that ran passed
};

struct KernelPairing {
  std::vector<KernelPair> pairs;
  std::vector<std::string> unmatched;  // kernels found on one side only, as "sass:<name>" or "rdna3:<name>"
  std::string none_reason;             // why there are no pairs at all (no SASS on this host, ...)
};

// Pairs the kernels of a chain result that has nvidia.sass and amd.asm.<target> artifacts. The
// checks run through verify_file in `scratch_dir` with `options` (track sass2rdna3).
KernelPairing pair_kernels(const ChainResult& program, const ChainOptions& options, const std::string& scratch_dir);

// Why a chain result holds no SASS, or "" when it holds some.
std::string missing_sass_reason(const ChainResult& program);

}  // namespace tailforge
