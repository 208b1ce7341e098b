// The c2x86 checks of one C function (the C->x86 paper's IO tests): the gcc -O0 -fno-jump-tables
// oracle assembly, a jump-table check, assemble and link with the driver, then the program run in
// the sandbox once per IO case and its stdout compared with the expected one. The generator's
// helper records those expected outputs. It does not write C, choose inputs or store anything.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "verifier/c2x86/c_function.h"
#include "verifier/stage_runner.h"

namespace tailforge {

// Writes function.c and driver.c into the scratch directory and adds, in order:
//   c2x86.oracle      gcc -O0 -fno-jump-tables -S function.c -o function.s (artifact "x86_asm")
//   c2x86.jump_table  fails, naming the table, when the assembly to be assembled has a jump table
//   c2x86.assemble    gcc -c function.s -o function.o
//   c2x86.link        gcc driver.c function.o -o program -lm (a C++ driver: -x c++ driver.cpp, -lstdc++)
//   c2x86.io          the program once per case, input on stdin; stops at the first failure
// With `candidate_assembly` (a model's answer, already in gas syntax) the oracle still runs, as the
// reference, and the candidate replaces its function.s. Outputs match when they are equal after
// trailing whitespace is removed from each line and trailing empty lines are dropped. A case that
// dies from a signal sets the stage's signal (the taxonomy's c2x86.crash); a case past the
// sandbox timeout makes the stage "timeout". The diagnostics say how many cases passed.
void run_c2x86_stages(StageContext& context, const CFunction& function, const std::string* candidate_assembly);

// Builds function.c + driver.c with gcc -O0 -fno-jump-tables in <scratch>/record and runs each
// case's input in the sandbox: the cases with `expected` set to the program's stdout. An error names
// the case when the build fails, or a case crashes, exits non-zero, times out or cannot run.
Result<std::vector<IoCase>> record_expected_outputs(StageContext& context, const CFunction& function);

// The driver's file name: driver.cpp for a C++ driver (an ExeBench wrapper), else driver.c.
std::string driver_file(const CFunction& function);

// gcc's arguments that compile the driver file `driver` and link it with `objects` into `output`
// (a C++ driver is compiled as C++ and linked with the C++ library; -lm always).
std::vector<std::string> driver_link_args(const CFunction& function, const std::string& driver,
                                          std::vector<std::string> objects, const std::string& output);

// Equal after removing trailing whitespace from each line and trailing empty lines.
bool io_outputs_match(const std::string& expected, const std::string& actual);

}  // namespace tailforge
