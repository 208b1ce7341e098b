// The daemon's log: spdlog's default logger on stderr, with a time stamp on a terminal or in a
// file, and with journald's "<N>" priority prefix instead when stderr is the journal (systemd).
#pragma once

#include <string>

#include "base/result.h"

namespace tailforge {

// Sets the log level from a name (trace, debug, info, warn, error, off); the first call also
// installs the logger.
Status set_log_level(const std::string& level);

}  // namespace tailforge
