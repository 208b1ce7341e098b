// Which lines of a C/C++ source sit in a preprocessor branch that is certainly not compiled in a
// given macro environment: `#if 0`, `#ifdef CUBLAS_API_H_` where no cuBLAS header is included, a
// version check on a macro the compiler does not define. The translator translates such lines
// where it can, and does not fail a file for what it leaves there.
//
// Conditions are evaluated in three values (true, false, unknown); only a branch whose condition
// is false, or an #else/#elif after a branch that was true, is inactive. A macro is defined when
// the environment says so or an active #define before the test defines it; one the environment
// marks `maybe`, or one defined in a branch whose condition is unknown, makes a test unknown.
// Every other name is undefined, as the C preprocessor has it. Linear in the input, no recursion
// per character; a condition nested too deeply (about 25 parentheses) is unknown.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tailforge {

struct MacroState {
  enum Kind { kDefined, kMaybe } kind = kDefined;
  std::optional<long long> value;  // an integer value, when kDefined with one
};

struct MacroEnvironment {
  std::unordered_map<std::string, MacroState> macros;
  // Names starting with one of these are `maybe` (defined by headers whose contents vary:
  // HIP_VERSION, __HIP_ARCH_HAS_...).
  std::vector<std::string> maybe_prefixes;
  // More names that are `maybe` (a tree's own names, any of which may be a macro); not owned.
  const std::unordered_set<std::string>* maybe_names = nullptr;
};

// The environment of hipcc compiling for an AMD GPU on Linux x86-64 (both passes).
MacroEnvironment hip_compile_environment();

struct InactiveRegion {
  int first_line = 0, last_line = 0;  // 1-based, inclusive: the lines between the directives
  std::string directive;              // the directive that opened it: "#ifdef CUBLAS_API_H_", "#else"
  int directive_line = 0;
};

// The inactive regions of `code`, a source whose comments and string literals are blanked (the
// directives are read from it), in line order.
std::vector<InactiveRegion> inactive_regions(const std::string& code, const MacroEnvironment& environment);

// inactive_regions as a per-line flag: result[line - 1] is true inside an inactive region.
std::vector<bool> inactive_lines(const std::vector<InactiveRegion>& regions, int line_count);

}  // namespace tailforge
