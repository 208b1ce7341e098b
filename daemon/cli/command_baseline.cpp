// `tailforge baseline train|translate`: the offline baseline learner as a retrain command and as
// a command-kind model. `train` learns a dictionary from a snapshot and registers the version it
// makes (parent and retrain event from the environment the retrain trigger sets); `translate`
// is that version answering: CUDA on stdin (or a file), HIP on stdout.
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "agents/baseline/dictionary.h"
#include "base/clock.h"
#include "base/number.h"
#include "base/process.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/cli/trained_version.h"
#include "store/models.h"
#include "synth/model_registry.h"

namespace tailforge {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int baseline_usage(const std::string& message) {
  std::cerr << "tailforge: " << message << "\n";
  return 2;
}

int train(const CommandLine& args, const CommandContext& context) {
  std::string snapshot = args.get("--snapshot", environment_value("TAILFORGE_SNAPSHOT_DIR"));
  if (snapshot.empty()) return baseline_usage("baseline train needs --snapshot DIR (or $TAILFORGE_SNAPSHOT_DIR)");
  LearnOptions options;
  options.min_support = static_cast<int>(args.get_int("--min-support", options.min_support));
  Result<std::vector<TrainingPair>> pairs = read_snapshot_pairs(snapshot);
  if (!pairs) return report_failure(pairs.message());
  auto started = std::chrono::steady_clock::now();
  BaselineDictionary dictionary = learn_dictionary(*pairs, options);
  double seconds = seconds_since(started);
  std::string out = fs::absolute(args.get("--out", (fs::path(snapshot) / "baseline-dictionary.json").string())).string();
  if (Status s = save_dictionary(dictionary, out); !s) return report_failure(s.message());
  std::cout << "learned " << dictionary.rules.size() << " rules from " << dictionary.training_rows
            << " training rows (min support " << options.min_support << ") in " << seconds << " s: " << out << "\n";
  if (args.has("--no-register")) return 0;

  std::string track = environment_value("TAILFORGE_TRACK");
  json definition = {{"kind", "command"},
                     {"track", track.empty() ? "cuda2hip" : track},
                     {"command", {current_executable(), "baseline", "translate", "--dictionary", out}}};
  return register_trained_version(args, context, "baseline-v", std::move(definition));
}

int translate(const CommandLine& args) {
  if (args.get("--dictionary").empty()) return baseline_usage("baseline translate needs --dictionary FILE");
  if (args.positionals.size() > 2) return baseline_usage("baseline translate takes at most one CUDA file");
  Result<BaselineDictionary> dictionary = load_dictionary(args.get("--dictionary"));
  if (!dictionary) return report_failure(dictionary.message());
  std::string source;
  if (args.positionals.size() == 2) {
    std::ifstream in(args.positionals[1], std::ios::binary);
    if (!in) return report_failure("cannot read " + args.positionals[1]);
    source.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } else {
    source.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  }
  std::cout << apply_dictionary(*dictionary, source).text << std::flush;
  return std::cout ? 0 : 1;
}

}  // namespace

int command_baseline(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  std::string action = args.positionals.empty() ? "" : args.positionals[0];
  if (action == "train" && args.positionals.size() == 1) return train(args, *context);
  if (action == "translate") return translate(args);
  return baseline_usage("baseline needs an action: train [--snapshot DIR] or translate --dictionary FILE [FILE.cu]");
}

}  // namespace tailforge
