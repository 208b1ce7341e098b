#include "verifier/options.h"

#include <unistd.h>

#include <cstdlib>

#include "policies/config_section.h"
#include "text/regex.h"

namespace tailforge {

// The "verifier" section's keys are VerifierOptions' fields (policies/config_section.h); the
// sandbox has its own section.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(VerifierOptions, sm_targets, amd_targets, compile_timeout_seconds,
                                                compare_tolerance, measurement_units, cache_dir, scratch_root,
                                                keep_scratch, stages, hip_on_cuda_include, nvcc_single_pass,
                                                cuda_single_queue_first)

Result<VerifierOptions> verifier_options_from_json(const nlohmann::json& config) {
  VerifierOptions options;
  if (config.contains("verifier")) {
    // Its other keys (cache_max_mb) are the daemon's; merge_config checks every key of the config.
    const SectionRules rules{.unknown_keys_allowed = true};
    if (Status s = read_config_section(config.at("verifier"), "verifier", options, rules); !s) return s.error();
  }
  if (config.contains("sandbox")) {
    Result<SandboxOptions> sandbox = sandbox_options_from_json(config.at("sandbox"));
    if (!sandbox) return sandbox.error();
    options.sandbox = sandbox.value();
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
