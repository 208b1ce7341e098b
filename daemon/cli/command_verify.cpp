// `tailforge verify FILE`: the whole verifier chain for one file, with categorized failures.
#include <iostream>

#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "base/files.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "policies/categorizer.h"
#include "synth/tracks.h"
#include "verifier/chain.h"

namespace tailforge {

namespace {

void print_chain_table(const ChainResult& result, std::ostream& out) {
  out << result.file << " (" << result.track << "): " << (result.ok ? "ok" : "FAILED") << "\n";
  for (const StageResult& stage : result.stages) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%7.2fs", stage.seconds);
    std::string name = stage.name + std::string(stage.name.size() < 24 ? 24 - stage.name.size() : 1, ' ');
    out << "  " << name << (stage.status + std::string(9 - std::min<size_t>(8, stage.status.size()), ' ')) << seconds
        << (stage.cached ? " cached" : "       ");
    if (stage.category) out << "  " << *stage.category;
    if (!stage.reason.empty()) out << "  " << stage.reason;
    out << "\n";
  }
}

}  // namespace

int command_verify(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  if (args.positionals.size() != 1) {
    std::cerr << "tailforge: verify needs one file (.cu, .hip, .c or .s)\n";
    return 2;
  }
  std::string track = args.get("--track");
  if (const Track* named = find_track(track); !track.empty() && !(named && named->verifies_files)) {
    std::cerr << "tailforge: --track must be one of " << track_names([](const Track& t) { return t.verifies_files; })
              << ", got '" << track << "'\n";
    return 2;
  }
  Result<VerifierOptions> verifier = verifier_options_from_json(context->config);
  if (!verifier) return report_failure(verifier.message());
  Result<HipifyRules> rules = load_hipify_rules(data_path(context->config["translator"]["rules_file"].get<std::string>()));
  if (!rules) return report_failure(rules.message());
  Result<Taxonomy> taxonomy = load_taxonomy(data_path(context->config["taxonomy"]["file"].get<std::string>()));
  if (!taxonomy) return report_failure(taxonomy.message());
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());

  ChainOptions options;
  options.verifier = *verifier;
  options.track = track;
  // A .cu file is translated to HIP for the tracks whose samples the daemon translates (and when
  // no track is named: a .cu file is a cuda2hip program then).
  const Track* named = find_track(track);
  options.translate_cuda_to_hip = !named || named->verified_by == Track::Verified::chain_after_hip_translation;
  options.cache_db = args.has("--no-cache") ? nullptr : &*db;
  options.asm_target = args.get("--target", "gfx1100");
  options.translate = [&rules](const std::string& cuda) {
    TranslationResult translated = translate_cuda_to_hip(*rules, cuda);
    return TranslateOutcome{translated.ok, translated.hip_source, translated.category,
                            translated.ok ? "" : "line " + std::to_string(translated.line) + ": " + translated.message};
  };
  ChainResult result = verify_file(args.positionals[0], options);
  for (StageResult& stage : result.stages) {
    if (stage.status != "fail" && stage.status != "timeout" && stage.status != "error") continue;
    FailureEvidence evidence{.stage = stage.name,
                             .diagnostics = stage.diagnostics,
                             .exit_code = stage.exit_code,
                             .signal = stage.signal ? std::optional<int>(stage.signal) : std::nullopt,
                             .timed_out = stage.status == "timeout",
                             .reason = stage.reason};
    stage.category = categorize(*taxonomy, evidence).category;
  }
  if (args.has("--json")) {
    std::cout << chain_result_to_json(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    print_chain_table(result, std::cout);
  }
  return result.ok ? 0 : 1;
}

}  // namespace tailforge
