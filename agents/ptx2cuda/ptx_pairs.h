// ptx2cuda: per-kernel PTX/CUDA pairs from one verified CUDA program's chain result (PtxDec's
// dataset). The PTX side is the kernel's `.entry` as nvcc wrote it for the first sm target, with
// its Rolled-PTX; the CUDA side is the kernel's unit (agents/ptx2cuda/kernel_units.h) after
// refactoring (refactor.h). Checks: the Rolled-PTX unrolls back to the PTX, the refactored unit
// compiles alone, and where an NVIDIA GPU exists the program's launches are captured and the
// refactored kernel, replayed on each recorded launch, gives the recorded outputs. Storing the
// pairs is the daemon's (daemon/verify/ptx_pairs_store.h).
#pragma once

#include <string>
#include <vector>

#include "verifier/chain.h"
#include "verifier/ptx2cuda/launch_harness.h"

namespace tailforge {

struct PtxPair {
  std::string kernel;           // mangled name of the PTX entry
  std::string sm;               // the target of `ptx`
  std::string ptx;              // the entry as nvcc wrote it
  std::string rolled_ptx;       // the pair's source
  std::string unit;             // the kernel's unit as extracted
  std::string cuda;             // the unit refactored: the pair's target
  size_t ptx_chars = 0, rolled_ptx_chars = 0, unit_chars = 0, cuda_chars = 0;
  StoredLaunch launch;          // the captured launch, empty where none was captured
  std::vector<StageResult> checks;  // ptx2cuda.reroll, ptx2cuda.compile, ptx2cuda.launch, ptx2cuda.compare
  bool ok = false;                  // every check that ran passed
};

struct PtxPairing {
  std::vector<PtxPair> pairs;
  std::vector<std::string> unmatched;  // "kernel NAME: why" for a unit without a pair, "ptx:ENTRY" for an entry without a unit
  std::string none_reason;             // why there are no pairs at all
  StageResult capture;                 // ptx2cuda.capture: the program run that recorded launches
};

// Pairs the kernels of `program` (the chain result of `cuda_source`, with nvidia.ptx's per-kernel
// artifacts). Compiles and runs in `scratch_dir` with `options`; include_dirs are a bundle's.
PtxPairing pair_ptx_kernels(const std::string& cuda_source, const ChainResult& program, const ChainOptions& options,
                            const std::string& scratch_dir);

// The file-scope __device__ and __constant__ variables of a program, which a kernel may read or
// write besides its parameters.
std::vector<std::string> device_variable_names(const std::string& source);

// How each parameter of `kernel` in `unit` points at its buffer's elements: f32 for float*, f64
// for double*, i32, u32, i64, u64, i8, u8; "bytes" for other pointers and for non-pointers.
// Empty when the kernel's definition is not found.
std::vector<std::string> parameter_element_types(const std::string& unit, const std::string& kernel);

}  // namespace tailforge
