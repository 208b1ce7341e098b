#include "agents/sass2rdna3/kernel_pairs.h"

#include <filesystem>
#include <fstream>

#include "verifier/sass2rdna3/kernel_split.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

StageResult sass_parse_check(const KernelPair& pair) {
  StageResult stage;
  stage.name = "nvidia.sass.parse";
  if (pair.sass_stats.instructions > 0 && pair.sass_stats.unparsed.empty()) {
    stage.status = "ok";
    stage.diagnostics = assembly_stats_to_json(pair.sass_stats).dump();
  } else {
    stage.status = "fail";
    stage.reason = pair.sass_stats.instructions == 0 ? "no SASS instruction in the kernel" : "SASS lines not parsed";
    for (const std::string& line : pair.sass_stats.unparsed) stage.diagnostics += "unparsed SASS line: " + line + "\n";
    if (stage.diagnostics.empty()) stage.diagnostics = stage.reason;
  }
  return stage;
}

}  // namespace

std::string missing_sass_reason(const ChainResult& program) {
  const StageResult* sass = program.stage("nvidia.sass");
  if (!sass) return "the chain has no nvidia.sass stage";
  if (sass->status == "skipped") return "nvidia.sass skipped: " + sass->reason;
  if (!sass->ok()) return "nvidia.sass failed";
  if (!sass->artifact("sass")) return "nvidia.sass made no SASS";
  return "";
}

KernelPairing pair_kernels(const ChainResult& program, const ChainOptions& options, const std::string& scratch_dir) {
  KernelPairing pairing;
  const std::vector<std::string>& sms = options.verifier.sm_targets;
  const std::string target = options.verifier.amd_targets.empty() ? "gfx1100" : options.verifier.amd_targets.front();
  pairing.none_reason = missing_sass_reason(program);
  if (!pairing.none_reason.empty()) return pairing;
  const StageResult* device_asm = program.stage("amd.asm." + target);
  if (!device_asm || !device_asm->ok() || !device_asm->artifact("rdna3_asm")) {
    pairing.none_reason = "no " + target + " device assembly (amd.asm." + target + " did not pass)";
    return pairing;
  }
  std::string first_sm = sms.empty() ? "sm_80" : sms.front();
  std::map<std::string, std::map<std::string, std::string>> sass_by_kernel;  // name -> arch -> text
  for (SassFunction& function :
       split_sass_functions_by_arch(program.stage("nvidia.sass")->artifact("sass")->content, first_sm)) {
    sass_by_kernel[function.name][function.arch] = std::move(function.text);
  }
  std::vector<Rdna3Kernel> rdna3 = split_rdna3_kernels(device_asm->artifact("rdna3_asm")->content);
  std::map<std::string, bool> sass_matched;
  for (const auto& entry : sass_by_kernel) sass_matched[entry.first] = false;

  std::error_code ec;
  fs::create_directories(scratch_dir, ec);
  for (Rdna3Kernel& kernel : rdna3) {
    auto sass = sass_by_kernel.find(kernel.name);
    if (sass == sass_by_kernel.end() || !sass->second.count(first_sm)) {
      pairing.unmatched.push_back("rdna3:" + kernel.name);
      continue;
    }
    sass_matched[kernel.name] = true;
    KernelPair pair;
    pair.kernel = kernel.name;
    pair.sass_arch = first_sm;
    pair.sass_raw = sass->second;
    pair.sass = normalize_sass(sass->second.at(first_sm));
    pair.rdna3_raw = kernel.text;
    pair.rdna3 = normalize_rdna3(kernel.text);
    pair.sass_stats = sass_stats(pair.sass);
    pair.rdna3_stats = rdna3_stats(pair.rdna3);
    pair.checks.push_back(sass_parse_check(pair));

    fs::path file = fs::path(scratch_dir) / ("kernel" + std::to_string(pairing.pairs.size()) + ".s");
    std::ofstream(file, std::ios::binary) << pair.rdna3;
    ChainOptions check = options;
    check.track = "sass2rdna3";
    check.asm_target = target;
    check.translate = nullptr;
    ChainResult assembled = verify_file(file.string(), check);
    for (StageResult& stage : assembled.stages) pair.checks.push_back(std::move(stage));
    pair.ok = true;
    bool any_ran = false;
    for (const StageResult& stage : pair.checks) {
      if (stage.status == "skipped") continue;
      any_ran = true;
      pair.ok = pair.ok && stage.ok();
    }
    pair.ok = pair.ok && any_ran;
    pairing.pairs.push_back(std::move(pair));
  }
  for (const auto& [name, matched] : sass_matched) {
    if (!matched) pairing.unmatched.push_back("sass:" + name);
  }
  return pairing;
}

}  // namespace tailforge
