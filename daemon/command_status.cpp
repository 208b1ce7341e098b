#include <iostream>

#include <spdlog/spdlog.h>

#include "daemon/commands.h"
#include "daemon/context.h"
#include "store/status.h"

namespace tailforge {

int command_status(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) {
    std::cerr << "tailforge: " << context.message() << "\n";
    return 1;
  }
  Result<Database> db = Database::open(context->db_path);
  if (!db) {
    std::cerr << "tailforge: " << db.message() << "\n";
    return 1;
  }
  Result<StatusSummary> status = query_status(*db);
  if (!status) {
    std::cerr << "tailforge: " << context->db_path << ": " << status.message() << "\n";
    return 1;
  }
  if (args.has("--json")) {
    std::cout << status_to_json(*status).dump(2) << "\n";
  } else {
    std::cout << format_status_table(*status);
  }
  return 0;
}

}  // namespace tailforge
