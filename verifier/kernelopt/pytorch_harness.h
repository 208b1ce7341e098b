// KernelBench-style kernelopt tasks: the reference is a PyTorch module (a Python file defining
// `Model`, `get_inputs()` and optionally `get_init_inputs()`, as KernelBench's problems do). The
// candidate's unit (candidate_unit, harness.h) is built by nvcc into an object, inspected as the
// CUDA path's is, and linked with C entry points (the launch, the clocks, the task's physical
// limit: roofline_code) into a shared library. A Python program run in the sandbox loads the
// module and the library, makes the inputs with torch.manual_seed, and makes the CUDA harness's
// checks in its order (fixed, fresh and nudged inputs, input writes, other streams, output reuse,
// then every timed call on fresh inputs checked against the module's answer, the synchronize after
// the stop event and the roofline), printing the same "kernelopt ..." lines. It runs nothing
// itself (measure.h does).
#pragma once

#include <string>

#include "verifier/kernelopt/harness.h"
#include "verifier/kernelopt/kernel_task.h"

namespace tailforge {

// The `extern "C"` entry points the Python program calls through ctypes, linked with the
// candidate's object (which defines tf_candidate::tf_launch): tf_candidate_entry (launch; the CUDA
// error), tf_device_clocks and tf_roofline_ms (the task's physical limit on this GPU).
std::string pytorch_entry_unit(const KernelTask& task);

// The Python program; it reads reference.py and candidate.so from its working directory.
std::string pytorch_harness_script(const KernelTask& task, const HarnessOptions& options);
// Its first part, which needs no torch: the task's constants, verdict(), median() and
// finish_timing(), which prints the time, calls and roofline lines and the timing's verdict.
std::string pytorch_harness_helpers(const KernelTask& task, const HarnessOptions& options);

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
