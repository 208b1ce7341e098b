// Commands that run the built-in agents on their own: generate, translate.
#include <cstdio>
#include <iostream>

#include "agents/c2x86/c_batch.h"
#include "agents/c2x86/c_generator.h"
#include "agents/generator/generator.h"
#include "agents/translate/hipify.h"
#include "agents/translate/hipify_rules.h"
#include "agents/translate/tree_translate.h"
#include "base/files.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "synth/tracks.h"
#include "verifier/options.h"
#include "verifier/toolchains.h"

namespace tailforge {

namespace {

// generate --track c2x86: the batch, checked, and what the track's acceptance reads from it.
int generate_c_functions(const CommandContext& context, uint64_t count, uint64_t seed, const std::string& out_dir) {
  Result<VerifierOptions> verifier = verifier_options_from_json(context.config);
  if (!verifier) return report_failure(verifier.message());
  Result<CBatch> batch = write_c_batch({.count = count, .seed = seed, .out_dir = out_dir}, *verifier, detected_toolchains());
  if (!batch) return report_failure(batch.message());
  for (const CBatchEntry& entry : batch->entries)
    if (!entry.failure.empty()) std::cout << entry.file << ": " << entry.failure << "\n";
  auto percent = [](size_t part, size_t whole) {
    char text[16];
    std::snprintf(text, sizeof text, "%.1f%%", whole ? 100.0 * double(part) / double(whole) : 0.0);
    return std::string(text);
  };
  size_t total = batch->entries.size();
  std::cout << "wrote " << total << " C functions with drivers, IO tests and oracle assembly, and manifest.jsonl to "
            << out_dir << "\n";
  std::cout << "compiled (gcc -O0 -fno-jump-tables, assembled, linked with the driver): " << batch->compiled << " of "
            << total << " (" << percent(batch->compiled, total) << ")\n";
  std::cout << "passed their own IO tests (" << batch->cases << " cases): " << batch->io_passed << " of "
            << batch->compiled << " compiled (" << percent(batch->io_passed, batch->compiled) << ")\n";
  std::cout << "jump tables in oracle assembly: " << batch->jump_tables << "\n";
  std::cout << "float constants written as literals: " << batch->float_constants << " in " << batch->with_float_constants
            << " functions; interpreted back to gcc's words bit for bit in " << batch->float_round_trips << " of "
            << batch->with_float_constants << "\n";
  std::cout << "feature tags:";
  for (const std::string& tag : c_feature_tags()) {
    auto found = batch->features.find(tag);
    std::cout << " " << tag << " " << (found == batch->features.end() ? 0 : found->second);
  }
  std::cout << "\n";
  bool all_good = batch->compiled == total && batch->io_passed == total && batch->jump_tables == 0 &&
                  batch->float_round_trips == batch->with_float_constants;
  return all_good ? 0 : 1;
}

}  // namespace

int command_generate(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  const uint64_t count = static_cast<uint64_t>(args.get_int("--count", 10));
  const uint64_t seed = static_cast<uint64_t>(args.get_int("--seed", 1));
  std::string track = args.get("--track", "cuda2hip");
  const Track* generated = find_track(track);
  if (!generated || generated->generated == Track::Generated::none) {
    auto generates = [](const Track& t) { return t.generated != Track::Generated::none; };
    std::cerr << "tailforge: generate --track must be " << track_names(generates, " or ") << ", got '" << track << "'\n";
    return 2;
  }
  if (generated->generated == Track::Generated::kernel_tasks) {
    return generate_kernel_tasks(count, seed, args.get("--out", "generated"));
  }
  if (generated->generated == Track::Generated::c_functions) {
    return generate_c_functions(*context, count, seed, args.get("--out", "generated"));
  }
  const nlohmann::json& generator = context->config["generator"];
  Result<GeneratorCatalog> catalog = load_generator_catalog(data_path(generator["personas_file"].get<std::string>()),
                                                            data_path(generator["templates_file"].get<std::string>()));
  if (!catalog) return report_failure(catalog.message());
  std::string out_dir = args.get("--out", "generated");
  Result<std::vector<std::string>> files = write_generated_programs(*catalog, count, seed, out_dir);
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
    std::cout << "compatibility headers copied into " << out << "/" << kCompatSubdir
              << " (included by relative path: no -I needed)\n";
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
  bool left = translation->with_issues > 0;
  for (const TreeFileReport& file : translation->files) left = left || !file.untranslated.empty();
  return left ? 1 : 0;
}

}  // namespace tailforge
