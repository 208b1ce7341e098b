#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "base/files.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "store/status.h"
#include "synth/api_coverage.h"

namespace tailforge {

int command_status(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  bool watch = args.has("--watch");
  bool terminal = isatty(STDOUT_FILENO);
  Result<SynthPolicy> synth = synth_policy_from_config(context->config["synth"], data_dir());
  if (!synth) return report_failure(synth.message());
  for (;;) {
    Result<StatusSummary> status = query_status(*db);
    if (!status) return report_failure(context->db_path + ": " + status.message());
    std::optional<ApiCoverage> coverage;
    if (synth->api.enabled) {
      Result<ApiCoverage> measured = measure_api_coverage(*db, synth->api, synth->track);
      if (!measured) return report_failure(context->db_path + ": " + measured.message());
      coverage = std::move(*measured);
    }
    if (watch && terminal) std::cout << "\033[H\033[2J";
    if (args.has("--json")) {
      nlohmann::json out = status_to_json(*status);
      if (coverage) {
        nlohmann::json api = api_coverage_to_json(*coverage, false);
        api.erase("families");
        out["api_coverage"] = api;
      }
      std::cout << out.dump(watch ? -1 : 2) << std::endl;
    } else {
      std::cout << format_status_table(*status) << (coverage ? api_coverage_line(*coverage) + "\n" : "") << std::flush;
    }
    if (!watch) return 0;
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

}  // namespace tailforge
