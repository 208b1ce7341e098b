// Runs one stage of a chain: a trusted tool (compiler, assembler) through the compile cache, or
// an untrusted program through the sandbox, turning the child's outcome into a StageResult.
// It does not know which stages a track has (see chain.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/database.h"
#include "verifier/options.h"
#include "verifier/stage.h"
#include "verifier/toolchains.h"

namespace tailforge {

// Where set, a chain's nvidia.run runs the program with a launch recorder preloaded (ptx2cuda's
// capture library, verifier/ptx2cuda/launch_harness.h), so that the one run both judges the
// program and records its kernel launches. A run that does not pass with the recorder is run
// again without it, so the verdict stays the program's own.
struct LaunchRecording {
  std::string library;               // the LD_PRELOAD library; the executable must load the CUDA runtime shared
  std::vector<std::string> globals;  // the program's __device__/__constant__ variables to record
  std::string keep_dir;              // where a passing run's launches are moved (must not exist yet)
};
// The name of the recorded run's outcome (ChainResult::launch_recording).
inline constexpr const char* kLaunchRecordingStage = "ptx2cuda.capture";

// The state one chain run shares between its stages. Not shared between threads.
struct StageContext {
  const VerifierOptions& options;
  const Toolchains& toolchains;
  Database* cache_db = nullptr;    // nullptr: no compile cache
  ResourceGate* gate = nullptr;    // nullptr: no gate
  std::string scratch_dir;
  std::vector<StageResult> stages;
  // The program's include directories (a bundle's), for the CUDA and the HIP compiles; the HIP
  // ones end with tailforge's compatibility headers. A program without main() is compiled only:
  // its link and run stages are recorded as skipped, not as failures.
  std::vector<std::string> cuda_include_dirs, hip_include_dirs;
  bool compile_only = false;
  std::vector<std::string> cuda_libraries;  // linked into the CUDA executable: "cublas", "curand", ...
  bool shared_cuda_runtime = false;         // nvidia.exe loads the CUDA runtime as a shared library
  const LaunchRecording* launch_recording = nullptr;  // nvidia.run records launches (nullptr: it does not)

  const StageResult* find(const std::string& name) const;
  bool ok(const std::string& name) const;
  void add(StageResult stage) { stages.push_back(std::move(stage)); }
};

struct OutputFile {
  std::string kind;   // artifact kind
  std::string path;
  bool binary = false;
};

struct ToolStep {
  std::string stage_name;
  std::string tool_role;               // a Toolchains role: "nvcc", "llvm_mc", ...
  std::vector<std::string> args;       // after the tool path
  std::vector<std::string> inputs;     // files whose content decides the result
  std::vector<OutputFile> outputs;     // read into artifacts after a successful run
  std::string target;
  std::vector<std::string> key_extra;  // anything else the result depends on
  std::string stdout_kind;             // non-empty: the tool's stdout becomes an artifact of this kind
  // An output missing after a successful run makes the stage an error (not cached) instead of an
  // empty artifact: for outputs a tool writes as a side effect (nvcc --keep).
  bool outputs_required = false;
};

// One independent part of a chain (the NVIDIA compiles, the AMD stages, ...): it adds its stages
// to the context it is given.
using Branch = std::function<void(StageContext&)>;

// Runs independent branches at once, so that one sample keeps several cores busy (each tool
// step still holds a slot of the gate). Each branch works on a copy of `context` that sees the
// stages before the split; their stages are appended in branch order, as if they had run one
// after another. The last branch runs on the calling thread with the context's compile-cache
// connection, so a callback that uses the caller's database belongs there; the others run on
// threads of their own, each with its own connection to the cache's file. An exception in a
// branch becomes an "error" stage named "chain".
void run_branches(StageContext& context, const std::vector<Branch>& branches);

// Adds "<name> skipped: disabled by verifier.stages" and returns false when verifier.stages leaves
// the stage out, as run_tool_stage does for a tool step; for the stages that run a program.
bool stage_enabled_here(StageContext& context, const std::string& name);

// Runs (or fetches from the cache) one tool step; on a hit the outputs are written back to disk.
StageResult run_tool_stage(StageContext& context, const ToolStep& step);

// Adds "<name> skipped: upstream: <dependency>" and returns false when a dependency is not ok.
bool dependencies_ok(StageContext& context, const std::string& name,
                     const std::vector<std::string>& dependencies);

// Runs an untrusted executable in the sandbox inside a fresh private directory; its stdout
// becomes a "stdout" artifact. The status is "ok" only for exit code 0.
StageResult run_program_stage(StageContext& context, const std::string& name,
                              const std::string& executable, bool gpu);

// The setting that gives a CUDA program one hardware work queue. Each queue the driver sets up
// when it makes a context costs system time under a lock it holds for every process: on an H200,
// four programs started at once took 0.84 s each with the default of 8 queues, 0.42 s with 1.
// Streams still work; their kernels may no longer overlap, which CUDA never promised them.
inline constexpr const char* kCudaSingleQueue = "CUDA_DEVICE_MAX_CONNECTIONS=1";

// The environment a CUDA program's GPU run starts with: kCudaSingleQueue where
// verifier.cuda_single_queue_first asks for it, else nothing.
std::vector<std::string> cuda_single_queue_settings(const StageContext& context);

// `argv` run with the NAME=VALUE `settings` set by /usr/bin/env (the sandbox passes the program no
// environment of the daemon's); `argv` itself when there are none.
std::vector<std::string> with_environment(const std::vector<std::string>& settings, std::vector<std::string> argv);

// A CUDA program's GPU run (nvidia.run, hip_on_nvidia.run): run_program_stage, first with
// kCudaSingleQueue (verifier.cuda_single_queue_first). A run that does not pass that way runs
// again as the program is, and that run is the stage: a failure is never the setting's. Its
// seconds include the first run's, and its diagnostics say how the first run ended.
StageResult run_cuda_program_stage(StageContext& context, const std::string& name, const std::string& executable);

// Runs an untrusted command line in the sandbox, in `private_dir` (its only writable directory,
// made by make_subdirectory), as run_program_stage does; `read_only_paths` are bound in besides the
// system's and `timeout_seconds` > 0 replaces the sandbox's limit (see SandboxRun).
StageResult run_untrusted_stage(StageContext& context, const std::string& name, const std::vector<std::string>& argv,
                                const std::string& private_dir, bool gpu,
                                const std::vector<std::string>& read_only_paths = {}, double timeout_seconds = 0);

// A fresh scratch directory "<root>/<prefix>-XXXXXX" for one chain run, reachable by the sandbox
// user; root is verifier.scratch_root, else $TMPDIR, else /tmp. The error names the root.
Result<std::string> make_scratch_directory(const VerifierOptions& options, const std::string& prefix);

// Removes a directory make_scratch_directory made, unless verifier.keep_scratch keeps it to look at.
void remove_scratch_directory(const VerifierOptions& options, const std::string& path);

// A new directory under the scratch directory, readable by the sandbox user.
std::string make_subdirectory(const StageContext& context, const std::string& name);

// A new private directory `name` under the scratch directory holding a copy of `executable` as
// "program", which the sandbox user may run; the copy's path.
Result<std::string> place_program(const StageContext& context, const std::string& name, const std::string& executable);

// "-I dir" for each directory, in order.
std::vector<std::string> include_flags(const std::vector<std::string>& dirs);

// The headers (.h .hh .hpp .hxx .cuh .inl .inc) under the directories a tool's arguments name with
// -I and -idirafter, sorted, at most 4096 of them: a compile depends on their content as much as
// on the source's (a program's own header, tailforge's compatibility headers), so the compile
// cache's key covers them.
std::vector<std::string> included_header_files(const std::vector<std::string>& args);

// The reason a link or run stage is skipped for a program without main().
inline constexpr const char* kCompileOnlyReason = "compile stages only: the file has no main()";
}  // namespace tailforge
