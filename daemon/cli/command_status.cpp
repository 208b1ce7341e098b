#include <unistd.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "store/status.h"

namespace tailforge {

int command_status(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  bool watch = args.has("--watch");
  bool terminal = isatty(STDOUT_FILENO);
  for (;;) {
    Result<StatusSummary> status = query_status(*db);
    if (!status) return report_failure(context->db_path + ": " + status.message());
    if (watch && terminal) std::cout << "\033[H\033[2J";
    if (args.has("--json")) {
      std::cout << status_to_json(*status).dump(watch ? -1 : 2) << std::endl;
    } else {
      std::cout << format_status_table(*status) << std::flush;
    }
    if (!watch) return 0;
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

}  // namespace tailforge
