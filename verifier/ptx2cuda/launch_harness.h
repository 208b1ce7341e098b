// The ptx2cuda test harness (PtxDec's test reconstruction): a CUDA program runs once with a capture
// library preloaded that records the first launch of each kernel (grid, block, dynamic shared
// memory, parameter bytes, and the device allocations it reads and writes, before and after); a
// candidate kernel (a decompilation) is then compiled alone, launched on copies of the recorded
// inputs, and its allocations compared with the recorded outputs (normalized absolute error <=
// 1e-3). Capture and replay run only where an NVIDIA GPU exists; it stores nothing.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "verifier/stage_runner.h"

namespace tailforge {

// The two runtime programs of verifier/ptx2cuda/runtime/, built by this host's nvcc.
struct HarnessTools {
  std::string capture_library;  // LD_PRELOAD library (launch_capture.cu)
  std::string replay;           // launch_replay.cu: MODULE LAUNCH_DIR OUT_DIR
};

// Builds both with nvcc under the verifier's cache directory, once per source and nvcc version.
Result<HarnessTools> build_harness_tools(const StageContext& context);

struct CapturedLaunch {
  std::string dir;      // holds launch.txt and buffer_K.in / buffer_K.out
  std::string kernel;   // mangled name
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t shared_bytes = 0;
  size_t parameters = 0;
  std::vector<size_t> buffer_bytes;
  std::vector<int> buffer_parameters;  // the first parameter pointing into each buffer (-1: unknown)
  std::vector<std::string> globals;    // module variables recorded: global_NAME.in / .out
  std::string skipped;  // why no buffers were kept (over the cap, the launch failed), else empty
};

// The launches a capture run left in `capture_dir` (launch_N folders), in launch order. The folders
// were written by an untrusted program: one holding anything but plain files (a link to a file
// of the daemon's, say) is an error, never followed.
Result<std::vector<CapturedLaunch>> read_captured_launches(const std::string& capture_dir);

// One captured launch as data, for storage: launch.txt, each buffer before and after the launch,
// each module variable before and after, and how each buffer's elements are compared.
struct StoredLaunch {
  struct Variable {
    std::string name, input, output;
  };
  std::string launch_txt;  // empty: no launch was recorded
  std::vector<std::string> inputs, outputs;
  std::vector<Variable> globals;
  std::vector<std::string> element_types;  // per buffer: f32, i32, ..., bytes
  bool empty() const { return launch_txt.empty(); }
};

// Reads a captured launch's files into data.
StoredLaunch load_captured_launch(const CapturedLaunch& launch);

// Drops the module variables not named in `names` from the launch, its data and its launch.txt
// alike (the recorder keeps every variable of the program at each launch).
void keep_module_variables(StoredLaunch& launch, const std::vector<std::string>& names);

// Writes a stored launch into `dir` in the capture's layout and reads it back, so a test is
// rebuilt from storage alone; errors when launch.txt is malformed or its buffers are missing.
Result<CapturedLaunch> restore_captured_launch(const StoredLaunch& stored, const std::string& dir);

// Runs `executable` (linked with shared_cuda_runtime_flags) in the sandbox with the capture library
// `library` preloaded (and kCudaSingleQueue where verifier.cuda_single_queue_first), as stage
// `name`; on success `capture_dir` names the folder of launches (the
// run's private folder, under the scratch directory). `global_names` are the program's
// __device__/__constant__ variables to record with each launch.
StageResult run_recorded_program_stage(StageContext& context, const std::string& name, const std::string& library,
                                       const std::string& executable, const std::vector<std::string>& global_names,
                                       std::string& capture_dir);

// run_recorded_program_stage as stage "ptx2cuda.capture" with the harness's capture library.
StageResult run_capture_stage(StageContext& context, const HarnessTools& tools, const std::string& executable,
                              const std::vector<std::string>& global_names, std::string& capture_dir);

// Moves the launch_N folders of a capture into `keep_dir` (created; it must not exist), so that
// they outlive the run's scratch directory.
Status keep_captured_launches(const std::string& capture_dir, const std::string& keep_dir);

// How a buffer's bytes are read for comparison: f32, f64, i32, u32, i64, u64, i8, u8 or bytes
// (exact). Unknown names compare as bytes.
struct BufferComparison {
  bool equal = true;
  double max_error = 0;  // the largest normalized error over the elements (numeric types)
  std::string message;   // the first differing element, or why the sizes differ
};
BufferComparison compare_buffers(const std::string& expected, const std::string& actual, const std::string& element_type);

// Compiles a candidate kernel source alone for the last sm target (stage ptx2cuda.compile) and
// returns the cubin's path, which exists when the stage passed.
std::string run_candidate_compile_stage(StageContext& context, const std::string& candidate_source,
                                        const std::vector<std::string>& include_dirs);

// Runs a compiled candidate on a captured launch (ptx2cuda.launch, in the sandbox on the GPU) and
// compares each allocation with the recorded output (ptx2cuda.compare), as run_candidate_stages.
void run_replay_stages(StageContext& context, const HarnessTools& tools, const CapturedLaunch& launch,
                       const std::string& module, const std::vector<std::string>& element_types);

// Judges a candidate kernel source against a captured launch, adding stages to `context`:
// ptx2cuda.compile (nvcc -cubin for the first sm target), ptx2cuda.launch (the replay, in the
// sandbox, on the GPU) and ptx2cuda.compare (each allocation against the recorded output, read as
// element_types[K], "bytes" where missing).
void run_candidate_stages(StageContext& context, const HarnessTools& tools, const CapturedLaunch& launch,
                          const std::string& candidate_source, const std::vector<std::string>& element_types);

}  // namespace tailforge
