// Commands that run the built-in agents on their own: generate, translate.
#include <iostream>

#include "agents/generator.h"
#include "agents/hipify.h"
#include "agents/tree_translate.h"
#include "daemon/commands.h"
#include "daemon/context.h"
#include "policies/config.h"

namespace tailforge {

namespace {

Result<uint64_t> parse_count(const std::string& flag, const std::string& text) {
  if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) {
    return make_error(flag + " needs a whole number, got '" + text + "'");
  }
  return static_cast<uint64_t>(std::stoull(text));
}

}  // namespace

int command_generate(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  Result<uint64_t> count = parse_count("--count", args.get("--count", "10"));
  Result<uint64_t> seed = parse_count("--seed", args.get("--seed", "1"));
  for (const Result<uint64_t>* parsed : {&count, &seed}) {
    if (!*parsed) {
      std::cerr << "tailforge: " << parsed->message() << "\n";
      return 2;
    }
  }
  const nlohmann::json& generator = context->config["generator"];
  Result<GeneratorCatalog> catalog = load_generator_catalog(data_path(generator["personas_file"].get<std::string>()),
                                                            data_path(generator["templates_file"].get<std::string>()));
  if (!catalog) return report_failure(catalog.message());
  std::string out_dir = args.get("--out", "generated");
  Result<std::vector<std::string>> files = write_generated_programs(*catalog, *count, *seed, out_dir);
  if (!files) return report_failure(files.message());
  std::cout << "wrote " << files->size() << " programs and manifest.jsonl to " << out_dir << "\n";
  return 0;
}

namespace {

// Prints what a tree translation did: totals, then every issue and untranslated identifier by file.
void print_tree_translation(const TreeTranslation& translation, const std::string& out) {
  for (const TreeFileReport& file : translation.files) {
    if (file.action == "skipped") std::cerr << file.path << ": skipped (" << file.reason << ")\n";
    for (const TranslationIssue& issue : file.issues)
      std::cerr << file.path << ":" << issue.line << ": " << issue.category << ": " << issue.message << "\n";
    for (const std::string& name : file.untranslated)
      std::cerr << file.path << ": untranslated CUDA identifier, " << name << "\n";
  }
  std::cout << "translated " << translation.translated << " files (" << translation.with_issues
            << " with constructs left untranslated), copied " << translation.copied << ", skipped "
            << translation.skipped << " into " << out << "\n";
  if (!translation.compat_headers.empty())
    std::cout << "compatibility headers in " << out << "/" << kCompatSubdir << ": compile with -I " << out << "/"
              << kCompatSubdir << "\n";
  std::cout << "report: " << out << "/tailforge_translate.json\n";
}

}  // namespace

int command_translate(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  bool tree = args.has("--tree");
  if (tree == (args.positionals.size() == 1) || (tree && !args.has("--out"))) {
    std::cerr << "tailforge: translate needs one CUDA file, or --tree SRC --out DST\n";
    return 2;
  }
  Result<HipifyRules> rules = load_hipify_rules(data_path(context->config["translator"]["rules_file"].get<std::string>()));
  if (!rules) return report_failure(rules.message());
  if (!tree) return run_translate_command(args.positionals[0], *rules, std::cout, std::cerr);
  TreeTranslateOptions options;
  options.compat_dir = data_path("verifier/hip_compat");
  Result<TreeTranslation> translation = translate_tree(*rules, args.get("--tree"), args.get("--out"), options);
  if (!translation) return report_failure(translation.message());
  if (args.has("--json")) {
    std::cout << tree_translation_to_json(*translation).dump(1) << "\n";
  } else {
    print_tree_translation(*translation, args.get("--out"));
  }
  return translation->with_issues == 0 ? 0 : 1;
}

}  // namespace tailforge
