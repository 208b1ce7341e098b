// Whole-string integers from untrusted text (assembler output, record files): std::from_chars,
// which neither throws nor allocates, so a number too large for int64 is an answer, not a crash.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tailforge {

// Whether all of `digits` is one integer in `base` that fits an int64; `value` receives it.
inline bool parse_int64(std::string_view digits, int64_t& value, int base = 10) {
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  return error == std::errc() && end == digits.data() + digits.size();
}

// The whole text as a whole number (a leading + allowed) or a finite number; nothing when it is
// not one. Command-line flags and other typed text go through these.
std::optional<int64_t> whole_number_of(std::string_view text);
std::optional<double> number_of(std::string_view text);
// "A,B": two numbers.
std::optional<std::pair<double, double>> number_pair_of(std::string_view text);

}  // namespace tailforge
