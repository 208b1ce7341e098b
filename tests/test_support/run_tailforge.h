// Runs the built tailforge binary with arguments to completion (60 s limit), for CLI tests.
#pragma once

#include <string>
#include <vector>

#include "base/process.h"

namespace tailforge {

inline ProcessResult run_tailforge(const std::vector<std::string>& arguments, double timeout_seconds = 60) {
  ProcessSpec spec;
  spec.argv = {TAILFORGE_BINARY};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.timeout_seconds = timeout_seconds;
  return run_process(spec);
}

}  // namespace tailforge
