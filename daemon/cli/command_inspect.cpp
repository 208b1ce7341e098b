// Read-only commands: toolchains, taxonomy, lineage, tails.
#include <filesystem>
#include <iostream>

#include "base/files.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/http/views.h"
#include "store/corpus.h"
#include "store/failures.h"
#include "synth/lineage.h"
#include "synth/policy.h"
#include "synth/tails.h"
#include "verifier/toolchains.h"

namespace tailforge {

int command_toolchains(const CommandLine& args) {
  const Toolchains& toolchains = detected_toolchains();
  if (args.has("--json")) {
    std::cout << toolchains_to_json(toolchains).dump(2) << "\n";
  } else {
    std::cout << format_toolchains_table(toolchains);
  }
  return 0;
}

int command_taxonomy(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  std::map<std::string, std::string> query_args;
  for (const auto& [flag, value] : args.options) {
    if (flag == "--db" || flag == "--config" || flag == "--log-level" || flag == "--json") continue;
    std::string key = flag.substr(2);
    for (char& c : key) {
      if (c == '-') c = '_';
    }
    query_args[key] = value;
  }
  Result<TaxonomyQuery> query = taxonomy_query_from_args(query_args);
  if (!query) {
    std::cerr << "tailforge: " << query.message() << "\n";
    return 2;
  }
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<TaxonomyReport> report = taxonomy_report(*db, *query);
  if (!report) return report_failure(report.message());
  if (args.has("--json")) {
    std::cout << taxonomy_report_to_json(*report).dump(2) << "\n";
  } else {
    std::cout << format_taxonomy_table(*report);
  }
  return 0;
}

int command_lineage(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  if (args.positionals.size() != 1) {
    std::cerr << "tailforge: lineage needs one sample id\n";
    return 2;
  }
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  std::string id = args.positionals[0];
  if (!looks_like_sample_id(id)) {
    // Accept a unique prefix, as a person copies ids from tables.
    Result<std::vector<std::string>> matches = sample_ids_with_prefix(*db, id, 2);
    if (!matches) return report_failure(matches.message());
    if (matches->size() != 1) {
      return report_failure("'" + id + "' matches " + (matches->empty() ? "no sample" : "several samples"));
    }
    id = matches->front();
  }
  Result<nlohmann::json> lineage = lineage_report(*db, id);
  if (!lineage) return report_failure(lineage.message());
  if (args.has("--json")) {
    std::cout << lineage->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << format_lineage_report(*lineage);
  }
  return 0;
}

namespace {

}  // namespace

int command_tails(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  std::optional<int64_t> cycle;
  if (args.has("--cycle")) cycle = args.get_int("--cycle", 0);
  std::string dimension, name;
  if (args.has("--series")) {
    std::string series = args.get("--series");
    size_t slash = series.find('/');
    dimension = series.substr(0, slash);
    if (slash == std::string::npos || !is_tail_dimension(dimension) || slash + 1 == series.size()) {
      std::cerr << "tailforge: --series is feature/NAME, domain/NAME, category/NAME, api_family/NAME or api/NAME, got '"
                << series << "'\n";
      return 2;
    }
    name = series.substr(slash + 1);
  }
  Result<SynthPolicy> configured = synth_policy_from_config(context->config["synth"], data_dir());
  if (!configured) return report_failure(configured.message());
  std::string track = args.get("--track", configured->track);
  Result<SynthPolicy> policy = policy_for_track(*configured, track, data_dir());
  if (!policy) return report_failure(policy.message());
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<TailsView> view = query_tails_view(*db, *policy, track, cycle, dimension, name);
  if (!view) return report_failure(view.message() + (cycle ? "" : " in " + context->db_path));
  if (args.has("--json")) {
    std::cout << tails_view_to_json(*view).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    std::cout << format_tails_view(*view);
  }
  return 0;
}

}  // namespace tailforge
