// What every subcommand sets up first: the merged configuration, logging and the store.
// Errors here are the user's (a bad config line, an unreadable database) and name the culprit.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "daemon/cli/command_line.h"
#include "daemon/logging.h"
#include "store/database.h"

namespace tailforge {

struct CommandContext {
  nlohmann::json config;
  std::string db_path;
};

// Loads --config (or the defaults), applies --log-level and resolves --db.
Result<CommandContext> make_context(const CommandLine& args);
// Prints "tailforge: <message>" to stderr and returns exit code 1.
int report_failure(const std::string& message);

}  // namespace tailforge
