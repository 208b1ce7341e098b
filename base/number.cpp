#include "base/number.h"

#include <cmath>

namespace tailforge {

std::optional<int64_t> whole_number_of(std::string_view text) {
  int64_t value = 0;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty() || !parse_int64(text, value)) return std::nullopt;
  return value;
}

std::optional<double> number_of(std::string_view text) {
  double value = 0;
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::pair<double, double>> number_pair_of(std::string_view text) {
  size_t comma = text.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  std::optional<double> first = number_of(text.substr(0, comma));
  std::optional<double> second = number_of(text.substr(comma + 1));
  if (!first || !second) return std::nullopt;
  return std::make_pair(*first, *second);
}

}  // namespace tailforge
