#include "agents/ptx2cuda/ptx_pairs.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "agents/ptx2cuda/kernel_units.h"
#include "agents/ptx2cuda/refactor.h"
#include "agents/ptx2cuda/top_level_declarations.h"
#include "agents/token_diff.h"
#include "base/files.h"
#include "verifier/nvidia.h"
#include "verifier/ptx2cuda/reroll.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

StageResult reroll_check(const RerolledPtx& rolled) {
  StageResult stage;
  stage.name = "ptx2cuda.reroll";
  stage.status = rolled.fell_back ? "fail" : "ok";
  stage.reason = rolled.fell_back ? "the Rolled-PTX did not unroll back to the PTX; the PTX is kept unrolled" : "";
  stage.diagnostics = std::to_string(rolled.chars_in) + " -> " + std::to_string(rolled.chars_out) + " characters, " +
                      std::to_string(rolled.loops) + " loops";
  return stage;
}

// Runs the program with the capture library preloaded, as stage ptx2cuda.capture: its own
// nvidia.exe where the chain linked that with the shared CUDA runtime, else a build of it that
// does. On success `capture_dir` names the folder of launches.
StageResult run_program_for_launches(StageContext& context, const std::string& cuda_source, const ChainResult& program,
                                     const ChainOptions& options, const HarnessTools& tools, std::string& capture_dir) {
  std::string dir = make_subdirectory(context, "capture-build");
  std::string source = dir + "/program.cu", exe = dir + "/program";
  const StageResult* linked = program.stage("nvidia.exe");
  const Artifact* executable = linked && linked->ok() ? linked->artifact("executable") : nullptr;
  if (options.shared_cuda_runtime && executable) {
    if (!write_text_file(exe, executable->content).ok()) {
      return skipped_stage("ptx2cuda.capture", "cannot write the program's executable to " + exe);
    }
  } else {
    if (!write_text_file(source, cuda_source)) {
      return skipped_stage("ptx2cuda.capture", "cannot write the program's source to " + source);
    }
    // Built as the nvidia.exe that ran: for the configured targets and this GPU, with PTX.
    std::vector<std::string> args = executable_gencode_flags(context.options.sm_targets, context.toolchains);
    std::string sm = context.options.sm_targets.empty() ? "" : context.options.sm_targets.back();
    for (const std::string& flag : include_flags(options.include_dirs)) args.push_back(flag);
    args.insert(args.end(), {source, "-o", exe});
    for (const std::string& flag : shared_cuda_runtime_flags(context.toolchains)) args.push_back(flag);
    StageResult built = run_tool_stage(context, {"ptx2cuda.capture.exe", "nvcc", args, {source},
                                                 {{"executable", exe, true}}, sm, {}, ""});
    if (!built.ok()) {
      return skipped_stage("ptx2cuda.capture", "the program does not build with the shared CUDA runtime: " + built.reason);
    }
  }
  return run_capture_stage(context, tools, exe, device_variable_names(cuda_source), capture_dir);
}

// The launches of the program, by kernel name: those nvidia.run recorded where the chain ran it
// with the recorder (ChainOptions::record_launches); else a run of the program with the capture
// library preloaded, of its own nvidia.exe where the chain linked that with the shared CUDA
// runtime (ChainOptions::shared_cuda_runtime), else of a build of it that does.
std::map<std::string, CapturedLaunch> capture_program(StageContext& context, const std::string& cuda_source,
                                                      const ChainResult& program, const ChainOptions& options,
                                                      std::optional<HarnessTools>& harness, StageResult& capture) {
  std::map<std::string, CapturedLaunch> by_kernel;
  if (!stage_enabled(context.options, "ptx2cuda.capture")) {
    capture = skipped_stage("ptx2cuda.capture", kDisabledByStages);
    return by_kernel;
  }
  if (!context.toolchains.has_gpu("nvidia")) {
    capture = skipped_stage("ptx2cuda.capture", "no NVIDIA GPU: launches are recorded where the program can run");
    return by_kernel;
  }
  const StageResult* ran = program.stage("nvidia.run");
  if (!ran || !ran->ok()) {
    capture = skipped_stage("ptx2cuda.capture", "the program did not run here (nvidia.run did not pass)");
    return by_kernel;
  }
  Result<HarnessTools> tools = build_harness_tools(context);
  if (!tools) {
    capture = skipped_stage("ptx2cuda.capture", tools.message());
    return by_kernel;
  }
  harness = *tools;
  std::string capture_dir;
  if (program.launch_recording && options.record_launches) {
    capture = *program.launch_recording;
    if (!capture.ok()) return by_kernel;
    capture_dir = options.record_launches->keep_dir;
  } else {
    capture = run_program_for_launches(context, cuda_source, program, options, *tools, capture_dir);
    if (!capture.ok()) return by_kernel;
  }
  Result<std::vector<CapturedLaunch>> launches = read_captured_launches(capture_dir);
  if (!launches) {
    capture.status = "error";
    capture.reason = launches.message();
    return by_kernel;
  }
  for (CapturedLaunch& launch : *launches) by_kernel.emplace(launch.kernel, std::move(launch));
  return by_kernel;
}

bool every_check_that_ran_passed(const std::vector<StageResult>& checks) {
  bool any_ran = false;
  for (const StageResult& check : checks) {
    if (check.status == "skipped") continue;
    any_ran = true;
    if (!check.ok()) return false;
  }
  return any_ran;
}

}  // namespace

std::vector<std::string> device_variable_names(const std::string& source) {
  std::vector<std::string> names;
  Result<std::vector<TopLevelDeclaration>> declarations = split_top_level_declarations(source);
  if (!declarations) return names;
  for (const TopLevelDeclaration& declaration : *declarations) {
    if (declaration.kind != DeclarationKind::variable) continue;
    const std::vector<std::string>& words = declaration.mentioned_names;
    bool on_device = std::find(words.begin(), words.end(), "__device__") != words.end() ||
                     std::find(words.begin(), words.end(), "__constant__") != words.end();
    if (on_device) names.insert(names.end(), declaration.declared_names.begin(), declaration.declared_names.end());
  }
  return names;
}

std::vector<std::string> parameter_element_types(const std::string& unit, const std::string& kernel) {
  static const std::map<std::string, std::string> types = {
      {"float", "f32"},    {"double", "f64"},  {"int", "i32"},      {"int32_t", "i32"}, {"unsigned", "u32"},
      {"uint32_t", "u32"}, {"int64_t", "i64"}, {"uint64_t", "u64"}, {"size_t", "u64"},  {"char", "i8"},
      {"int8_t", "i8"},    {"uint8_t", "u8"}};
  static const std::set<std::string> qualifiers = {"const", "volatile", "__restrict__", "restrict", "struct"};
  std::vector<Token> tokens;
  for (const Token& token : tokenize_source(unit).tokens) {
    if (token.kind != TokenKind::comment) tokens.push_back(token);
  }
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i].text != "__global__") continue;
    size_t name = i + 1;
    while (name + 1 < tokens.size() && tokens[name].text != "(" &&
           !(tokens[name].text == kernel && tokens[name + 1].text == "(")) {
      ++name;
    }
    if (name + 1 >= tokens.size() || tokens[name].text != kernel) continue;
    std::vector<std::string> parameters, words;
    bool pointer = false;
    int depth = 0;
    for (size_t t = name + 1; t < tokens.size(); ++t) {
      const std::string& text = tokens[t].text;
      if (text == "(") ++depth;
      if (text == ")") --depth;
      if ((text == "," && depth == 1) || depth == 0) {
        std::string type = words.empty() ? "" : words.front();
        if (words.size() >= 2 && words[0] == "unsigned") type = words[1] == "char" ? "uint8_t" : "unsigned";
        auto known = types.find(type);
        if (!words.empty()) parameters.push_back(pointer && known != types.end() ? known->second : "bytes");
        words.clear();
        pointer = false;
        if (depth == 0) break;
        continue;
      }
      if (text == "*") pointer = true;
      if (tokens[t].kind == TokenKind::identifier && !qualifiers.count(text) && !pointer) words.push_back(text);
    }
    return parameters;
  }
  return {};
}

PtxPairing pair_ptx_kernels(const std::string& cuda_source, const ChainResult& program, const ChainOptions& options,
                            const std::string& scratch_dir) {
  PtxPairing pairing;
  const StageResult* ptx = program.stage("nvidia.ptx");
  if (!ptx || !ptx->ok()) {
    pairing.none_reason = "no PTX (nvidia.ptx did not pass)";
    return pairing;
  }
  std::vector<std::string> entry_names;
  std::map<std::string, std::string> entry_text;
  for (const Artifact& artifact : ptx->artifacts) {
    if (artifact.kind != "ptx_kernel") continue;
    entry_names.push_back(artifact.name);
    entry_text[artifact.name] = artifact.content;
  }
  Result<std::vector<KernelUnit>> units = extract_kernel_units(cuda_source);
  if (!units) {
    pairing.none_reason = "no kernel units: " + units.message();
    return pairing;
  }
  std::error_code ignored;
  fs::create_directories(scratch_dir, ignored);
  chmod(scratch_dir.c_str(), 0755);
  StageContext context{options.verifier, options.toolchains ? *options.toolchains : detected_toolchains(),
                       options.cache_db, options.gate, scratch_dir, {}};
  std::string sm = options.verifier.sm_targets.empty() ? "sm_80" : options.verifier.sm_targets.front();
  std::set<std::string> paired;

  // Each kernel unit as it will be paired: cut out, instantiated, refactored.
  struct UnitWork {
    KernelUnit unit;
    std::vector<std::string> entries;
    RefactorResult refactored;
    StageContext compiled;  // the unit's compile stage, in its own scratch folder
    std::string module;     // the compiled unit, for the replays
  };
  std::vector<UnitWork> work;
  for (size_t u = 0; u < units->size(); ++u) {
    Result<KernelUnit> unit = instantiate_kernel_unit(cuda_source, (*units)[u], entry_names);
    Result<std::vector<std::string>> entries = kernel_entry_names((*units)[u].name, entry_names);
    if (!unit || !entries) {
      pairing.unmatched.push_back("kernel " + (*units)[u].name + ": " + (unit ? entries.message() : unit.message()));
      continue;
    }
    StageContext compiled{options.verifier, context.toolchains, options.cache_db, options.gate,
                          scratch_dir + "/unit" + std::to_string(u), {}};
    fs::create_directories(compiled.scratch_dir, ignored);
    chmod(compiled.scratch_dir.c_str(), 0755);
    RefactorResult refactored = refactor_cuda(unit->source);
    work.push_back({std::move(*unit), std::move(*entries), std::move(refactored), std::move(compiled), ""});
  }

  // The program's launches are recorded while the units compile: neither needs the other.
  std::optional<HarnessTools> harness;
  std::map<std::string, CapturedLaunch> launches;
  std::vector<Branch> branches = {[&](StageContext& own) {
    launches = capture_program(own, cuda_source, program, options, harness, pairing.capture);
  }};
  for (UnitWork& item : work) {
    branches.push_back([&](StageContext& own) {
      item.compiled.cache_db = own.cache_db;
      item.module = run_candidate_compile_stage(item.compiled, item.refactored.text, options.include_dirs);
      item.compiled.cache_db = nullptr;
    });
  }
  run_branches(context, branches);

  for (UnitWork& item : work) {
    for (const std::string& entry : item.entries) {
      PtxPair pair;
      pair.kernel = entry;
      pair.sm = sm;
      pair.ptx = entry_text[entry];
      RerolledPtx rolled = reroll_ptx(pair.ptx);
      pair.rolled_ptx = rolled.text;
      pair.unit = item.unit.source;
      pair.cuda = item.refactored.text;
      pair.ptx_chars = rolled.chars_in;
      pair.rolled_ptx_chars = rolled.chars_out;
      pair.unit_chars = item.unit.source.size();
      pair.cuda_chars = item.refactored.text.size();
      StageContext pair_context{options.verifier, context.toolchains, options.cache_db, options.gate,
                                item.compiled.scratch_dir, {}};
      pair_context.stages = item.compiled.stages;  // the unit's compile
      auto launch = launches.find(entry);
      if (launch == launches.end()) {
        std::string why = pairing.capture.ok() ? "the program did not launch this kernel" : pairing.capture.reason;
        pair_context.add(skipped_stage("ptx2cuda.launch", "no recorded launch: " + why));
      } else {
        pair.launch = load_captured_launch(launch->second);
        // The recorder keeps every module variable at each launch; the pair keeps those its unit
        // declares, which are the ones its kernel can read or write.
        keep_module_variables(pair.launch, device_variable_names(item.unit.source));
        std::vector<std::string> parameter_types = parameter_element_types(pair.cuda, item.unit.name);
        for (int parameter : launch->second.buffer_parameters) {
          bool known = parameter >= 0 && static_cast<size_t>(parameter) < parameter_types.size();
          pair.launch.element_types.push_back(known ? parameter_types[parameter] : "bytes");
        }
        run_replay_stages(pair_context, *harness, launch->second, item.module, pair.launch.element_types);
      }
      pair.checks.push_back(reroll_check(rolled));
      for (StageResult& stage : pair_context.stages) pair.checks.push_back(std::move(stage));
      pair.ok = every_check_that_ran_passed(pair.checks);
      paired.insert(entry);
      pairing.pairs.push_back(std::move(pair));
    }
  }
  for (const std::string& entry : entry_names) {
    if (!paired.count(entry)) pairing.unmatched.push_back("ptx:" + entry);
  }
  if (pairing.pairs.empty() && pairing.none_reason.empty()) pairing.none_reason = "no kernel unit matched a PTX entry";
  return pairing;
}

}  // namespace tailforge
