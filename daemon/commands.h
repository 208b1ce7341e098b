// The subcommands of `tailforge`, one function each. Each takes the parsed command line and
// returns the exit code. Shared set-up (config, store) lives in daemon/context.h.
#pragma once

#include "daemon/cli.h"

namespace tailforge {

int command_status(const CommandLine& args);
int command_daemon(const CommandLine& args);

}  // namespace tailforge
