// AMD stages: HIP -> device assembly per gfx target (clang 15, the compiler Debian's HIP 5.2
// headers and hipcc are built for), host assembly, assembly -> object (llvm-mc, newest LLVM),
// object -> code object (ld.lld), and a run where ROCm sees an AMD GPU. No output comparison.
#pragma once

#include <string>

#include "base/result.h"
#include "verifier/stage_runner.h"

namespace tailforge {

// Adds amd.asm.<t>, amd.host_asm, amd.assemble.<t>, amd.codeobject.<t> for every target, then amd.run.
void run_amd_stages(StageContext& context, const std::string& hip_path);

// Adds amd.assemble.<target> for a hand-written or model-written .s file.
void run_amd_assemble_stage(StageContext& context, const std::string& asm_path, const std::string& target);

// Adds amd.assemble.<target>, amd.codeobject.<target> (ld.lld, no undefined symbol allowed) and
// amd.run, which is skipped: running a lone kernel's assembly needs a host harness, which
// tailforge does not generate, and an AMD GPU.
void run_amd_assembly_stages(StageContext& context, const std::string& asm_path, const std::string& target);

// A device-library directory holding the system bitcode plus any oclc_isa_version_<N>.bc the
// system lacks for these targets, generated from an existing one (nothing is downloaded).
Result<std::string> prepare_device_libs(const StageContext& context);

// The __oclc_ISA_version value of a target: gfx1100 -> 11000, gfx90a -> 9010, gfx942 -> 9402.
int isa_version_number(const std::string& target);

}  // namespace tailforge
