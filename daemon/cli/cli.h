// The command line of the `tailforge` binary: parses argv, dispatches to the subcommands and
// returns the process exit code (0 ok, 1 the command's own failure, 2 a usage error).
#pragma once

#include "daemon/cli/command_line.h"

namespace tailforge {

int run_cli(int argc, char** argv);

}  // namespace tailforge
