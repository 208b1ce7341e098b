// KernelBench-style kernelopt tasks: the reference is a PyTorch module (a Python file defining
// `Model`, `get_inputs()` and optionally `get_init_inputs()`, as KernelBench's problems do). The
// candidate kernel unit is built by nvcc into a shared library with a C entry point, and a Python
// program run in the sandbox loads the module and the library, makes the inputs with
// torch.manual_seed, and makes the same checks and timings as the CUDA harness (harness.h),
// printing the same "kernelopt ..." lines. It runs nothing itself (measure.h does).
#pragma once

#include <string>

#include "verifier/kernelopt/harness.h"
#include "verifier/kernelopt/kernel_task.h"

namespace tailforge {

// The candidate unit plus `extern "C"` entry points the Python program calls through ctypes.
std::string pytorch_candidate_library_source(const std::string& candidate_source);

// The Python program; it reads reference.py and candidate.so from its working directory.
std::string pytorch_harness_script(const KernelTask& task, const HarnessOptions& options);

// The Python that runs PyTorch references: the first python3 on PATH, probed once per process.
struct PytorchEnvironment {
  std::string unavailable_reason;  // "" when it imports torch and torch sees a CUDA GPU
  std::string executable;          // sys.executable
  std::string prefix;              // sys.prefix: a virtual environment outside /usr is bound into the sandbox
  std::string torch_version;
};
const PytorchEnvironment& pytorch_environment();
inline std::string pytorch_unavailable_reason() { return pytorch_environment().unavailable_reason; }

}  // namespace tailforge
