#include "verifier/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <sstream>

namespace tailforge {
namespace {

const std::regex& number_pattern() {
  static const std::regex pattern(
      R"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf|infinity)\b)", std::regex::icase);
  return pattern;
}

bool parse_number(const std::string& token, double& value) {
  if (!std::regex_match(token, number_pattern())) return false;
  value = std::strtod(token.c_str(), nullptr);
  return true;
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
    auto begin = std::sregex_iterator(word.begin(), word.end(), number_pattern());
    size_t position = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      size_t start = static_cast<size_t>(it->position());
      // A sign glued to a preceding word character is punctuation, not part of the number.
      if (start > position) tokens.push_back(word.substr(position, start - position));
      tokens.push_back(it->str());
      position = start + static_cast<size_t>(it->length());
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
                     (result.expected_token.empty() ? "<end>" : result.expected_token) + "', got '" +
                     (result.actual_token.empty() ? "<end>" : result.actual_token) + "' (" +
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
