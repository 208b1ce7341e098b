#include "verifier/options.h"

#include <unistd.h>

#include <cstdlib>

#include "text/regex.h"

namespace tailforge {

Result<VerifierOptions> verifier_options_from_json(const nlohmann::json& config) {
  VerifierOptions options;
  try {
    if (config.contains("verifier")) {
      const auto& section = config.at("verifier");
      options.sm_targets = section.value("sm_targets", options.sm_targets);
      options.amd_targets = section.value("amd_targets", options.amd_targets);
      options.compile_timeout_seconds = section.value("compile_timeout_seconds", options.compile_timeout_seconds);
      options.compare_tolerance = section.value("compare_tolerance", options.compare_tolerance);
      options.measurement_units = section.value("measurement_units", options.measurement_units);
      options.cache_dir = section.value("cache_dir", options.cache_dir);
      options.scratch_root = section.value("scratch_root", options.scratch_root);
      options.keep_scratch = section.value("keep_scratch", options.keep_scratch);
      options.stages = section.value("stages", options.stages);
      options.hip_on_cuda_include = section.value("hip_on_cuda_include", options.hip_on_cuda_include);
      options.nvcc_single_pass = section.value("nvcc_single_pass", options.nvcc_single_pass);
      options.cuda_single_queue_first = section.value("cuda_single_queue_first", options.cuda_single_queue_first);
    }
    if (config.contains("sandbox")) {
      Result<SandboxOptions> sandbox = sandbox_options_from_json(config.at("sandbox"));
      if (!sandbox) return sandbox.error();
      options.sandbox = sandbox.value();
    }
  } catch (const std::exception& error) {
    return make_error(std::string("config verifier section: ") + error.what());
  }
  static const text::Regex sm(R"(sm_\d+[a-z]?)"), gfx(R"(gfx[0-9a-f]+)");
  for (const auto& target : options.sm_targets) {
    if (!text::regex_match(target, sm)) return make_error("verifier.sm_targets: '" + target + "' is not sm_NN");
  }
  for (const auto& target : options.amd_targets) {
    if (!text::regex_match(target, gfx)) return make_error("verifier.amd_targets: '" + target + "' is not gfxNNN");
  }
  if (options.compile_timeout_seconds <= 0) return make_error("verifier.compile_timeout_seconds must be > 0");
  if (options.compare_tolerance < 0) return make_error("verifier.compare_tolerance must be >= 0");
  return options;
}

bool stage_enabled(const VerifierOptions& options, const std::string& stage) {
  if (options.stages.empty()) return true;
  for (const std::string& prefix : options.stages) {
    if (stage.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string resolved_cache_dir(const VerifierOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/tailforge";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/tailforge";
  return "/tmp/tailforge-cache-" + std::to_string(getuid());
}

}  // namespace tailforge
