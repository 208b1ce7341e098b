#include "daemon/verify/sample_verification.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "agents/ptx2cuda/ptx_pairs.h"
#include "agents/translate/hipify.h"
#include "agents/translate/tree_translate.h"
#include "base/files.h"
#include "daemon/verify/c2x86_jobs.h"
#include "daemon/verify/derived_pairs.h"
#include "synth/tracks.h"
#include "verifier/ptx2cuda/launch_harness.h"
#include "verifier/stage_runner.h"

namespace tailforge {

namespace fs = std::filesystem;

namespace {

const char* extension_for(const Sample& sample) {
  if (sample.language == "c") return ".c";
  if (sample.language == "hip") return ".hip";
  if (sample.language == "rdna3" || sample.language == "sass") return ".s";
  return ".cu";
}

TranslateOutcome builtin_translation(const HipifyRules& rules, const std::string& cuda) {
  TranslationResult translated = translate_cuda_to_hip(rules, cuda);
  TranslateOutcome outcome;
  outcome.ok = translated.ok;
  outcome.hip_source = translated.hip_source;
  outcome.category = translated.category;
  // Every construct left, one per line: the first names the category the stage fails with.
  for (const TranslationIssue& issue : translated.issues) outcome.message += issue.message + "\n";
  return outcome;
}

}  // namespace

Result<VerifyInput> read_verify_input(Database& db, const std::string& sample_id) {
  Result<std::optional<Sample>> found = find_sample(db, sample_id);
  if (!found) return found.error();
  if (!found->has_value()) return make_error("verify job for unknown sample " + sample_id);
  VerifyInput input{std::move(**found), std::nullopt};
  Result<std::optional<Bundle>> bundle = read_bundle(db, sample_id);
  if (!bundle) return bundle.error();
  if (bundle->has_value() && !(*bundle)->headers.empty()) input.bundle = std::move(**bundle);
  return input;
}

Result<VerifyOutput> SampleVerifier::run(const VerifyInput& input, Database* cache_db, const Translator& translate) const {
  const Sample& sample = input.sample;
  const Track* track = find_track(sample.track);
  if (track && track->verified_by == Track::Verified::c_function_check) return run_c2x86(sample, cache_db);
  if (track && track->verified_by == Track::Verified::kernel_task_check) return run_kernel_task(sample, cache_db);
  // The daemon's translator makes the HIP side, and a verified program yields the derived pairs.
  const bool translates = track && track->verified_by == Track::Verified::chain_after_hip_translation;

  // Absolute: the bundle's include directories are made relative to it.
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(work_dir_) / sample.id.substr(0, 16), ec);
  if (ec) return make_error("cannot resolve the work folder " + work_dir_ + ": " + ec.message());
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (ec) return make_error("cannot create " + dir.string() + ": " + ec.message());
  ChainOptions options;
  // An imported program comes with the headers it includes: written out as its tree was, and
  // for cuda2hip translated together with them (the program's own translation stays the
  // translator's: the rule translator's tree-aware one, or the LLM's).
  std::optional<TreeFileReport> tree_translation;
  std::string tree_hip_source;
  fs::path file;
  if (input.bundle) {
    Result<MaterializedBundle> written = write_bundle(*input.bundle, (dir / "cuda").string());
    if (!written) return written.error();
    file = written->program_path;
    options.include_dirs.push_back(file.parent_path().string());
    options.include_dirs.insert(options.include_dirs.end(), written->include_dirs.begin(), written->include_dirs.end());
    if (translates) {
      TreeTranslateOptions tree_options;
      tree_options.compat_dir = data_path("verifier/hip_compat");
      Result<TreeTranslation> hip_tree =
          translate_tree(resources_.hipify, (dir / "cuda").string(), (dir / "hip").string(), tree_options);
      if (!hip_tree) return hip_tree.error();
      fs::path relative = file.lexically_relative(dir / "cuda");
      for (const TreeFileReport& report : hip_tree->files)
        if (report.path == relative.generic_string()) tree_translation = report;
      tree_hip_source = read_text_file_or_empty((dir / "hip" / relative).string());
      for (const std::string& include : options.include_dirs)
        options.hip_include_dirs.push_back((dir / "hip" / fs::path(include).lexically_relative(dir / "cuda")).string());
    }
  } else {
    file = dir / (std::string("program") + extension_for(sample));
    std::ofstream out(file, std::ios::binary);
    out << sample.text;
    if (!out) return make_error("cannot write " + file.string() + " (disk full?)");
  }
  options.verifier = resources_.verifier;
  options.track = sample.track;
  options.translate_cuda_to_hip = translates;
  // A verified program's launches are captured for ptx2cuda's pairs (derive_pairs) from its own
  // executable where a GPU runs it.
  options.shared_cuda_runtime =
      translates && toolchains_.has_gpu("nvidia") && stage_enabled(resources_.verifier, "ptx2cuda.capture");
  // nvidia.run itself records them: one GPU program fewer per program. Where the recorder cannot
  // be built, derive_pairs says why.
  if (options.shared_cuda_runtime) {
    StageContext tools_context{resources_.verifier, toolchains_, nullptr, gate_, "", {}};
    if (Result<HarnessTools> tools = build_harness_tools(tools_context)) {
      options.record_launches =
          LaunchRecording{tools->capture_library, device_variable_names(read_text_file_or_empty(file.string())), (dir / "launches").string()};
    }
  }
  options.cache_db = cache_db;
  options.gate = gate_;
  options.toolchains = &toolchains_;
  options.translate = [&](const std::string& cuda) {
    if (translate) return translate(cuda);
    if (tree_translation) {  // translated with its headers, knowing the tree
      TranslateOutcome outcome;
      outcome.ok = tree_translation->ok;
      outcome.hip_source = tree_hip_source;
      if (!outcome.ok) {
        outcome.category = tree_translation->issues.front().category;
        for (const TranslationIssue& issue : tree_translation->issues) outcome.message += issue.message + "\n";
      }
      return outcome;
    }
    return builtin_translation(resources_.hipify, cuda);
  };
  VerifyOutput output;
  output.chain = verify_file(file.string(), options);
  const ChainResult& result = output.chain;
  bool translated = !translates || (result.stage("translate.hip") && result.stage("translate.hip")->ok());
  bool any_ok = std::any_of(result.stages.begin(), result.stages.end(), [](const StageResult& s) { return s.ok(); });
  output.verified = result.ok && any_ok && translated;
  // A verified program also yields the derived tracks' pairs.
  if (output.verified && translates) derive_pairs(file.string(), options, dir.string(), output);
  fs::remove_all(dir, ec);
  return output;
}

// A C function: recorded outputs, oracle, jump-table check, assemble, link, IO tests.
Result<VerifyOutput> SampleVerifier::run_c2x86(const Sample& sample, Database* cache_db) const {
  C2x86Verification result = verify_c2x86_sample(sample, {resources_.verifier, toolchains_, cache_db, gate_});
  VerifyOutput output;
  output.chain.file = sample.id;
  output.chain.track = "c2x86";
  output.chain.stages = std::move(result.stages);
  output.verified = result.verified;
  output.not_run = result.not_run;
  return output;
}

// A kernelopt task: its reference checked, then its built-in candidates measured.
Result<VerifyOutput> SampleVerifier::run_kernel_task(const Sample& sample, Database* cache_db) const {
  KernelTaskVerification result = verify_kernel_task_sample(sample, {resources_.verifier, toolchains_, cache_db, gate_});
  VerifyOutput output;
  output.chain.file = sample.id;
  output.chain.track = "kernelopt";
  output.chain.stages = result.stages;
  output.verified = result.verified;
  output.kernel_task = std::move(result);
  return output;
}

}  // namespace tailforge
