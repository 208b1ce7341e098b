#include "daemon/cli/command_line.h"

#include <string_view>

#include "base/number.h"

namespace tailforge {

int64_t CommandLine::get_int(const std::string& flag, int64_t fallback) const {
  auto it = options.find(flag);
  if (it == options.end()) return fallback;
  return whole_number_of(it->second).value_or(fallback);
}

double CommandLine::get_number(const std::string& flag, double fallback) const {
  auto it = options.find(flag);
  if (it == options.end()) return fallback;
  return number_of(it->second).value_or(fallback);
}

std::optional<std::pair<double, double>> CommandLine::get_number_pair(const std::string& flag) const {
  auto it = options.find(flag);
  if (it == options.end()) return std::nullopt;
  return number_pair_of(it->second);
}

Result<std::vector<std::string>> split_command_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;  // ' or " while inside one
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quote == '\'') {
      if (c == '\'') {
        quote = 0;
      } else {
        word += c;
      }
    } else if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\' && i + 1 < text.size() && std::string_view("\"\\$`").find(text[i + 1]) != std::string_view::npos) {
        word += text[++i];
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 == text.size()) return make_error("command '" + text + "': a backslash at the end");
      word += text[++i];
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) return make_error(std::string("command '") + text + "': an unterminated " + (quote == '"' ? "double" : "single") + " quote");
  if (in_word) words.push_back(std::move(word));
  return words;
}

}  // namespace tailforge
