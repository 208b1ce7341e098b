// What a retrain command (`baseline train`, `kernelopt train`) does last: registers the version it
// trained, in the store of --db ($TAILFORGE_DB, else the configured one), with the parent and
// retrain event the trigger put in its environment ($TAILFORGE_PARENT_MODEL,
// $TAILFORGE_RETRAIN_EVENT), under --name, the name the event's version already has (a rerun), or
// the next free <prefix>N.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "daemon/cli/command_line.h"
#include "daemon/cli/context.h"

namespace tailforge {

// A variable of the environment, "" when unset.
std::string environment_value(const char* name);

// Registers `definition` (kind, track, parameters; name, parent and retrain event are added) and
// prints what it registered. Returns the exit code.
int register_trained_version(const CommandLine& args, const CommandContext& context, const std::string& prefix,
                             nlohmann::json definition);

}  // namespace tailforge
