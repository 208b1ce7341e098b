#include "verifier/compare.h"

#include <algorithm>
#include <cmath>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <string_view>

#include "text/chars.h"

namespace tailforge {
namespace {


bool starts_with_icase(std::string_view text, size_t at, std::string_view word) {
  if (text.size() - at < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[at + i])) != word[i]) return false;
  return true;
}

// The length of the number that starts at `at` in `text`, 0 for none. A number is
// [-+]? (digits [. digits?] | . digits) ([eE] [-+]? digits)?, or [-+]? nan|inf|infinity ending at
// a word boundary (case-insensitive). One pass, no backtracking: the scan's cost and stack use do
// not grow with anything but the number's length.
size_t number_length_at(std::string_view text, size_t at) {
  size_t i = at;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  size_t mantissa = i;
  while (i < text.size() && text::is_ascii_digit(text[i])) ++i;
  bool integer_digits = i > mantissa;
  if (integer_digits) {
    if (i < text.size() && text[i] == '.') ++i;
    while (i < text.size() && text::is_ascii_digit(text[i])) ++i;
  } else if (i + 1 < text.size() && text[i] == '.' && text::is_ascii_digit(text[i + 1])) {
    ++i;
    while (i < text.size() && text::is_ascii_digit(text[i])) ++i;
  }
  if (i > mantissa) {
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
      size_t exponent = i + 1;
      if (exponent < text.size() && (text[exponent] == '-' || text[exponent] == '+')) ++exponent;
      size_t digits = exponent;
      while (exponent < text.size() && text::is_ascii_digit(text[exponent])) ++exponent;
      if (exponent > digits) i = exponent;
    }
    return i - at;
  }
  for (std::string_view word : {"infinity", "nan", "inf"}) {
    size_t end = mantissa + word.size();
    if (starts_with_icase(text, mantissa, word) && (end == text.size() || !text::is_identifier_char(text[end]))) return end - at;
  }
  return 0;
}

// A token that is one whole number, and its value. A number past a double's range (strtod's
// overflow) is not parsed: it is compared as text, exactly, since every such number reads as inf.
bool parse_number(const std::string& token, double& value) {
  if (token.empty() || number_length_at(token, 0) != token.size()) return false;
  errno = 0;
  value = std::strtod(token.c_str(), nullptr);
  if (errno == ERANGE && std::isinf(value)) return false;
  return true;
}

// A token as a message shows it: long ones cut, with their length.
std::string quoted_token(const std::string& token) {
  if (token.empty()) return "<end>";
  constexpr size_t kShown = 64;
  if (token.size() <= kShown) return token;
  return token.substr(0, kShown) + "... (" + std::to_string(token.size()) + " characters)";
}

}  // namespace

double normalized_error(double expected, double actual) {
  if (std::isnan(expected) || std::isnan(actual)) {
    return std::isnan(expected) && std::isnan(actual) ? 0.0 : INFINITY;
  }
  if (std::isinf(expected) || std::isinf(actual)) return expected == actual ? 0.0 : INFINITY;
  return std::fabs(expected - actual) / std::max(1.0, std::fabs(expected));
}

std::vector<std::string> output_tokens(const std::string& text) {
  std::vector<std::string> tokens;
  std::istringstream stream(text);
  std::string word;
  while (stream >> word) {
    // Leftmost numbers, scanned once: text between them becomes tokens of its own.
    size_t position = 0;
    for (size_t start = 0; start < word.size();) {
      size_t length = number_length_at(word, start);
      if (length == 0) {
        ++start;
        continue;
      }
      if (start > position) tokens.push_back(word.substr(position, start - position));
      tokens.push_back(word.substr(start, length));
      position = start = start + length;
    }
    if (position < word.size()) tokens.push_back(word.substr(position));
  }
  return tokens;
}

CompareResult compare_outputs(const std::string& expected, const std::string& actual,
                              const CompareOptions& options) {
  CompareResult result;
  std::vector<std::string> want = output_tokens(expected);
  std::vector<std::string> got = output_tokens(actual);
  size_t count = std::max(want.size(), got.size());
  bool found_difference = false;
  std::vector<bool> ignored(count, false);
  for (size_t index : options.ignored_tokens)
    if (index < count) ignored[index] = true;
  for (size_t i = 0; i < count; ++i) {
    if (ignored[i]) {
      ++result.tokens_ignored;
      continue;
    }
    const std::string none;
    const std::string& a = i < want.size() ? want[i] : none;
    const std::string& b = i < got.size() ? got[i] : none;
    double x = 0, y = 0;
    bool same = a == b;
    if (!same && i < want.size() && i < got.size() && parse_number(a, x) && parse_number(b, y)) {
      double error = normalized_error(x, y);
      result.max_normalized_error = std::max(result.max_normalized_error, error);
      same = error <= options.tolerance;
    }
    ++result.tokens_compared;
    if (!same && !found_difference) {
      found_difference = true;
      result.first_difference_index = i;
      result.expected_token = a;
      result.actual_token = b;
    }
  }
  result.equal = !found_difference;
  if (!result.equal) {
    result.message = "token " + std::to_string(result.first_difference_index) + ": expected '" +
                     quoted_token(result.expected_token) + "', got '" + quoted_token(result.actual_token) + "' (" +
                     std::to_string(want.size()) + " vs " + std::to_string(got.size()) + " tokens)";
  }
  return result;
}

std::vector<size_t> unstable_tokens(const std::string& first, const std::string& second,
                                    const CompareOptions& options) {
  std::vector<std::string> a = output_tokens(first), b = output_tokens(second);
  std::vector<size_t> unstable;
  if (a.size() != b.size()) return unstable;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) continue;
    double x = 0, y = 0;
    if (parse_number(a[i], x) && parse_number(b[i], y) && normalized_error(x, y) <= options.tolerance) continue;
    unstable.push_back(i);
  }
  return unstable;
}

std::vector<size_t> measurement_tokens(const std::string& text, const std::vector<std::string>& units) {
  std::vector<std::string> tokens = output_tokens(text);
  std::vector<size_t> measured;
  double value = 0;
  for (size_t i = 0; i + 1 < tokens.size(); ++i)
    if (std::find(units.begin(), units.end(), tokens[i + 1]) != units.end() && parse_number(tokens[i], value))
      measured.push_back(i);
  return measured;
}

}  // namespace tailforge
