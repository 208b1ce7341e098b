#include <iostream>

#include <spdlog/spdlog.h>

#include "base/files.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/daemon.h"
#include "daemon/http/http_api.h"
#include "policies/config.h"
#include "store/failures.h"
#include "store/status.h"
#include "synth/api_coverage.h"
#include "synth/model_report.h"

namespace tailforge {

int command_daemon(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  // --demo: config/demo.json between the defaults and the user's --config, and two cycles.
  const bool demo = args.has("--demo");
  if (demo) {
    Result<nlohmann::json> config = load_config_layers({data_path("config/demo.json"), args.get("--config")});
    if (!config) return report_failure(config.message());
    context->config = std::move(*config);
  }
  DaemonOptions options;
  options.db_path = context->db_path;
  options.config_file = args.get("--config");
  if (demo) options.base_config_file = data_path("config/demo.json");
  options.config = context->config;
  options.cycles = args.get_int("--cycles", demo ? 2 : context->config["daemon"]["cycles"].get<int64_t>());
  options.listen = args.get("--listen", context->config["http"]["listen"].get<std::string>());
  options.progress_line = !args.has("--no-progress");
  options.start_server = serve_daemon_api;
  if (Status s = run_daemon(options); !s) return report_failure(s.message());

  // A bounded run ends with what it did: the status, the failure taxonomy and the models.
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<StatusSummary> status = query_status(*db);
  if (!status) return report_failure(status.message());
  std::cout << format_status_table(*status) << "\n";
  Result<TaxonomyReport> taxonomy = taxonomy_report(*db, TaxonomyQuery{});
  if (!taxonomy) return report_failure(taxonomy.message());
  std::cout << format_taxonomy_table(*taxonomy) << "\n";
  Result<SynthPolicy> synth = synth_policy_from_config(context->config["synth"], data_dir());
  if (!synth) return report_failure(synth.message());
  if (synth->api.enabled) {
    Result<std::string> coverage = format_api_coverage_by_cycle(*db, synth->api, synth->track);
    if (!coverage) return report_failure(coverage.message());
    if (!coverage->empty()) std::cout << *coverage << "\n";
  }
  Result<ModelsReport> models = models_report(*db, context->config["retrain"]["track"].get<std::string>());
  if (!models) return report_failure(models.message());
  std::string configured = context->config["synth"].value("model_under_test", std::string());
  Status marked = mark_model_under_test(*db, *models, configured.empty() ? std::nullopt : std::optional(configured));
  if (!marked) return report_failure(marked.message());
  std::cout << format_models_table(*models);
  return 0;
}

}  // namespace tailforge
