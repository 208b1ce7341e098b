// Commands that run the built-in agents on their own: generate, translate.
#include <iostream>

#include "agents/generator.h"
#include "agents/hipify.h"
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

int command_translate(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  if (args.positionals.size() != 1) {
    std::cerr << "tailforge: translate needs one CUDA file\n";
    return 2;
  }
  Result<HipifyRules> rules = load_hipify_rules(data_path(context->config["translator"]["rules_file"].get<std::string>()));
  if (!rules) return report_failure(rules.message());
  return run_translate_command(args.positionals[0], *rules, std::cout, std::cerr);
}

}  // namespace tailforge
