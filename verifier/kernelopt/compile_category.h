// The sub-category of a kernelopt candidate whose build failed, "kernelopt.compile.<kind>", read
// from what nvcc, the host compiler and the linker printed: syntax, undeclared, type, link,
// timeout or other. The text is untrusted and may be megabytes on one line: it is scanned with
// plain substring searches, never a regular expression. It runs nothing (measure.h does).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tailforge {

// The category of a failed build: the kind of the earliest message in `diagnostics` that names
// one ("kernelopt.compile.other" when none does); "kernelopt.compile.timeout" when `timed_out`.
std::string compile_failure_category(std::string_view diagnostics, bool timed_out = false);

// Every category compile_failure_category can return.
std::vector<std::string> compile_failure_categories();

}  // namespace tailforge
