// A c2x86 sample as the track stores and checks it (the C->x86 paper's ExeBench-style setup): one
// C function in its own translation unit, a driver with main() that reads one IO case from stdin,
// calls the function and prints what it returned and wrote, and the IO cases themselves. The
// function's unit is what gcc -O0 -fno-jump-tables -S compiles into the oracle assembly; the
// driver is compiled and linked with that assembly (or a model's) and run once per case.
#pragma once

#include <string>
#include <vector>

namespace tailforge {

struct IoCase {
  std::string input;     // the driver's stdin: whitespace-separated values, one line
  std::string expected;  // the driver's stdout for that input, from the gcc -O0 build of the C
};

struct CFunction {
  std::string name;         // the function under test, e.g. "sum_even_squares"
  std::string declarations; // types and the prototype both units include (no function bodies)
  std::string function;     // the function's translation unit: declarations + definitions
  std::string driver;       // the driver's translation unit: declarations + main()
  std::vector<IoCase> cases;
  std::vector<std::string> features;  // C feature tags: switch, float, recursion, ...
  bool driver_is_cpp = false;  // the driver is C++ (an imported ExeBench wrapper), built with -x c++
};

}  // namespace tailforge
