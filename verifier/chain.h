// The whole verifier chain for one file: picks the stages from the file's kind and track, runs
// them in dependency order in a private scratch directory, and reports every stage's result.
// Callable from several threads at once (each with its own Database, or none).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/database.h"
#include "verifier/options.h"
#include "verifier/stage.h"
#include "verifier/stage_runner.h"
#include "verifier/toolchains.h"

namespace tailforge {

struct TranslateOutcome {
  bool ok = false;
  std::string hip_source;
  std::string category;  // the translator's failure category when !ok
  std::string message;
};

// CUDA source in, HIP source out. Supplied by the caller (agents/); the verifier owns none.
using Translator = std::function<TranslateOutcome(const std::string& cuda_source)>;

struct ChainOptions {
  VerifierOptions verifier;
  std::string track;                        // "" = from the extension: .cu/.hip cuda2hip, .c c2x86, .s sass2rdna3
  Database* cache_db = nullptr;             // the compile cache; nullptr = no cache
  ResourceGate* gate = nullptr;             // nullptr = no slot limits
  Translator translate;                     // empty: translate.hip is skipped
  // A .cu file goes through the translator to HIP, checked on AMD and through HIP-on-NVIDIA
  // beside its own NVIDIA stages; false: the NVIDIA stages only (a track that does not translate
  // to HIP: synth/tracks.h's verified_by).
  bool translate_cuda_to_hip = true;
  std::string asm_target = "gfx1100";       // for .s input
  // What the program must print: for .c input (default: the file "<path>.expected" if present),
  // and for .hip input, compared with its run on NVIDIA (stage "compare").
  std::optional<std::string> expected_stdout;
  std::string x86_driver;                   // a .c file linked with the assembly (c2x86)
  const Toolchains* toolchains = nullptr;   // nullptr: detected_toolchains()
  // A bundle's include directories, absolute, the program's own folder first (the chain compiles a
  // copy of the file, so includes relative to it resolve through these); for the translated HIP
  // program, `hip_include_dirs` (empty: the same). HIP compiles also search `hip_compat_include`
  // last ("" = <TAILFORGE_HOME>/verifier/hip_compat).
  std::vector<std::string> include_dirs, hip_include_dirs;
  std::string hip_compat_include;
  // nvidia.exe links the CUDA runtime as a shared library (shared_cuda_runtime_flags), so that the
  // ptx2cuda capture can run that executable with its library preloaded instead of building its own.
  bool shared_cuda_runtime = false;
  // nvidia.run runs with the launch recorder preloaded (needs shared_cuda_runtime); the outcome is
  // ChainResult::launch_recording.
  std::optional<LaunchRecording> record_launches;
};

struct ChainResult {
  std::string file;
  std::string track;
  bool ok = false;  // no stage failed, timed out or errored (skipped stages do not count)
  std::vector<StageResult> stages;
  // Where ChainOptions::record_launches was set and the program ran: stage "ptx2cuda.capture",
  // "ok" when nvidia.run itself recorded the launches (0 seconds of its own: the recording is in
  // nvidia.run's), else the recorded run that did not pass, with its seconds (nvidia.run is then
  // the plain run after it). Kept apart from `stages`: it judges nothing about the program.
  std::optional<StageResult> launch_recording;

  const StageResult* stage(const std::string& name) const;
};

// Verifies one file. Never throws; an internal problem becomes an "error" stage named "chain".
ChainResult verify_file(const std::string& path, const ChainOptions& options);

// In this key order: {"file","track","ok","stages":[{"name","status","seconds","reason","diagnostics",
// "category", then cached, exit_code, peak_rss_kb, toolchain_version, command}]}. Dump with
// error_handler_t::replace: diagnostics are verbatim tool output and may not be UTF-8.
nlohmann::ordered_json chain_result_to_json(const ChainResult& result);

}  // namespace tailforge
