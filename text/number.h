// Whole-string integers from untrusted text (assembler output, record files): std::from_chars,
// which neither throws nor allocates, so a number too large for int64 is an answer, not a crash.
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

namespace tailforge::text {

// Whether all of `digits` is one integer in `base` that fits an int64; `value` receives it.
inline bool parse_int64(std::string_view digits, int64_t& value, int base = 10) {
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
  return error == std::errc() && end == digits.data() + digits.size();
}

}  // namespace tailforge::text
