// Compares a program's output with the expected output token by token: numbers within a
// tolerance, everything else exactly. It does not run programs or decide what a mismatch means.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tailforge {

struct CompareOptions {
  // Two numbers a (expected) and b (actual) match when |a - b| / max(1, |a|) <= tolerance:
  // absolute error for |a| <= 1, relative error above. NaN matches NaN; infinities match by sign.
  double tolerance = 1e-3;
  // Token indexes left out of the comparison, e.g. from unstable_tokens() and
  // measurement_tokens(): what a program prints that is not its result.
  std::vector<size_t> ignored_tokens;
};

struct CompareResult {
  bool equal = false;
  size_t tokens_compared = 0;       // positions compared, not counting ignored_tokens
  // The first differing token (index in the token streams); empty strings mean "no token".
  size_t first_difference_index = 0;
  std::string expected_token;
  std::string actual_token;
  double max_normalized_error = 0;  // over all numeric token pairs
  size_t tokens_ignored = 0;        // positions skipped by ignored_tokens
  std::string message;              // one line naming the first difference
};

// |expected - actual| / max(1, |expected|), the error CompareOptions::tolerance bounds; 0 for two
// NaNs or equal infinities, infinity where they cannot match.
double normalized_error(double expected, double actual);

// Splits text into tokens: whitespace separates; numbers inside words become tokens of their own
// ("y[10]=2.5" -> "y[", "10", "]=", "2.5").
std::vector<std::string> output_tokens(const std::string& text);

CompareResult compare_outputs(const std::string& expected, const std::string& actual,
                              const CompareOptions& options = {});

// The token indexes at which two outputs of the same program differ beyond the tolerance: what a
// program prints that is not its result (a time, a pointer, a random seed from the clock). Empty
// when the two have different token counts, since positions cannot be matched then.
std::vector<size_t> unstable_tokens(const std::string& first, const std::string& second,
                                    const CompareOptions& options = {});

// The token indexes of numbers followed by one of `units` ("time 0.13 ms": the 0.13), i.e.
// measurements of the run rather than its result.
std::vector<size_t> measurement_tokens(const std::string& text, const std::vector<std::string>& units);

}  // namespace tailforge
