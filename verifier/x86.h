// The c2x86 stages: gcc -O0 -fno-jump-tables -S (the oracle assembly), assemble and link with an
// optional driver, run the program in the sandbox and compare its stdout to the expected output.
#pragma once

#include <optional>
#include <string>

#include "verifier/stage_runner.h"

namespace tailforge {

// Adds x86.asm, x86.link and x86.run. With no expected output, x86.run needs exit code 0 only.
void run_x86_stages(StageContext& context, const std::string& c_path, const std::string& driver_path,
                    const std::optional<std::string>& expected_stdout);

}  // namespace tailforge
