// Read-only commands: toolchains, taxonomy, lineage.
#include <iostream>

#include "daemon/commands.h"
#include "daemon/context.h"
#include "daemon/views.h"
#include "store/failures.h"
#include "synth/lineage.h"
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

}  // namespace tailforge
