#include "text/cpp_lexer.h"

#include "text/chars.h"

namespace tailforge::text {
namespace {

constexpr size_t kMaxRawDelimiter = 16;

bool is_exponent(char c) { return c == 'e' || c == 'E' || c == 'p' || c == 'P'; }
// A raw string's delimiter: printable ASCII but space, parentheses and backslash.
bool is_delimiter_char(char c) { return c > ' ' && c < 0x7f && c != '(' && c != ')' && c != '\\'; }

// The end of the // comment at text[begin]: its line's newline, unless a backslash ends the line
// (before a \n or \r\n), which continues the comment on the next.
size_t end_of_line_comment(std::string_view text, size_t begin) {
  size_t line = begin + 2;
  while (true) {
    size_t newline = text.find('\n', line);
    if (newline == std::string_view::npos) return text.size();
    size_t last = newline;
    if (last > line && text[last - 1] == '\r') --last;
    if (last <= line || text[last - 1] != '\\') return newline;
    line = newline + 1;
  }
}

// Fills the body and end of the quoted literal whose opening quote is text[quote].
void scan_quoted(std::string_view text, size_t quote, CppToken& token) {
  char closing = text[quote];
  size_t i = quote + 1;
  token.body_begin = i;
  while (i < text.size() && text[i] != closing && text[i] != '\n') i += text[i] == '\\' && i + 1 < text.size() ? 2 : 1;
  token.body_end = i;
  token.closed = i < text.size() && text[i] == closing;
  token.end = token.closed ? i + 1 : i;
}

// Fills the body and end of the raw string whose opening quote is text[quote]; false when no
// valid delimiter and '(' follow the quote.
bool scan_raw(std::string_view text, size_t quote, CppToken& token) {
  size_t open = quote + 1;
  while (open < text.size() && open - quote - 1 <= kMaxRawDelimiter && is_delimiter_char(text[open])) ++open;
  if (open >= text.size() || text[open] != '(' || open - quote - 1 > kMaxRawDelimiter) return false;
  std::string_view delimiter = text.substr(quote + 1, open - quote - 1);
  token.raw = true;
  token.body_begin = open + 1;
  for (size_t close = text.find(')', open + 1); close != std::string_view::npos; close = text.find(')', close + 1)) {
    size_t quote_at = close + 1 + delimiter.size();
    if (quote_at < text.size() && text[quote_at] == '"' && text.compare(close + 1, delimiter.size(), delimiter) == 0) {
      token.body_end = close;
      token.end = quote_at + 1;
      return true;
    }
  }
  token.body_end = token.end = text.size();
  token.closed = false;
  return true;
}

size_t end_of_number(std::string_view text, size_t begin) {
  size_t i = begin + 1;
  while (i < text.size()) {
    char c = text[i];
    if (is_identifier_char(c) || c == '.' || ((c == '+' || c == '-') && is_exponent(text[i - 1]))) {
      ++i;
    } else if (c == '\'' && i + 1 < text.size() && is_identifier_char(text[i + 1])) {
      i += 2;
    } else {
      break;
    }
  }
  return i;
}

bool is_encoding_prefix(std::string_view word) { return word == "L" || word == "u" || word == "U" || word == "u8"; }
bool is_raw_prefix(std::string_view word) {
  return word == "R" || word == "LR" || word == "uR" || word == "UR" || word == "u8R";
}

// The identifier at text[begin], or the literal it is the prefix of.
void scan_word(std::string_view text, size_t begin, CppToken& token) {
  size_t i = begin + 1;
  while (i < text.size() && is_identifier_char(text[i])) ++i;
  token.kind = CppTokenKind::identifier;
  token.end = i;
  if (i >= text.size() || (text[i] != '"' && text[i] != '\'')) return;
  std::string_view word = text.substr(begin, i - begin);
  if (text[i] == '"' && is_raw_prefix(word) && scan_raw(text, i, token)) {
    token.kind = CppTokenKind::string_literal;
    token.prefix = word.size();
  } else if (is_encoding_prefix(word)) {
    token.kind = text[i] == '"' ? CppTokenKind::string_literal : CppTokenKind::char_literal;
    token.prefix = word.size();
    scan_quoted(text, i, token);
  }
}

}  // namespace

CppToken next_cpp_token(std::string_view text, size_t begin) {
  CppToken token;
  token.begin = token.end = begin;
  if (begin >= text.size()) {
    token.kind = CppTokenKind::whitespace;
    token.begin = token.end = text.size();
    return token;
  }
  char c = text[begin];
  char next = begin + 1 < text.size() ? text[begin + 1] : '\0';
  if (is_space(c)) {
    token.kind = CppTokenKind::whitespace;
    token.end = begin + 1;
    while (token.end < text.size() && is_space(text[token.end])) ++token.end;
  } else if (c == '/' && next == '/') {
    token.kind = CppTokenKind::comment;
    token.end = end_of_line_comment(text, begin);
  } else if (c == '/' && next == '*') {
    token.kind = CppTokenKind::comment;
    size_t close = text.find("*/", begin + 2);
    token.closed = close != std::string_view::npos;
    token.end = token.closed ? close + 2 : text.size();
  } else if (c == '"' || c == '\'') {
    token.kind = c == '"' ? CppTokenKind::string_literal : CppTokenKind::char_literal;
    scan_quoted(text, begin, token);
  } else if (is_ascii_digit(c) || (c == '.' && is_ascii_digit(next))) {
    token.kind = CppTokenKind::number;
    token.end = end_of_number(text, begin);
  } else if (is_identifier_start(c)) {
    scan_word(text, begin, token);
  } else {
    token.end = begin + 1;
  }
  return token;
}

std::string code_view(std::string_view text) {
  std::string view(text);
  for (size_t at = 0; at < text.size();) {
    CppToken token = next_cpp_token(text, at);
    at = token.end;
    size_t from = token.begin;
    if (token.kind == CppTokenKind::string_literal || token.kind == CppTokenKind::char_literal) {
      from += token.prefix;
    } else if (token.kind != CppTokenKind::comment) {
      continue;
    }
    for (size_t k = from; k < token.end; ++k)
      if (view[k] != '\n') view[k] = ' ';
  }
  return view;
}

}  // namespace tailforge::text
