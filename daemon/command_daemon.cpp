#include <iostream>

#include <spdlog/spdlog.h>

#include "daemon/commands.h"
#include "daemon/context.h"
#include "store/cycles.h"
#include "store/status.h"

namespace tailforge {

int command_daemon(const CommandLine& args) {
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
  int64_t cycles = std::stoll(args.get("--cycles", "1"));
  for (int64_t i = 0; i < cycles; ++i) {
    Result<int64_t> id = start_cycle(*db, 0, 0);
    if (!id) {
      spdlog::error("starting a cycle: {}", id.message());
      return 1;
    }
    CycleRecord record;
    record.id = *id;
    record.state = "done";
    if (Status s = finish_cycle(*db, record); !s) {
      spdlog::error("finishing cycle {}: {}", *id, s.message());
      return 1;
    }
    spdlog::info("cycle {} done", *id);
  }
  Result<StatusSummary> status = query_status(*db);
  if (status) std::cout << format_status_table(*status);
  return 0;
}

}  // namespace tailforge
