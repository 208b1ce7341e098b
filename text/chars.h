// Character classes and trimming for the hand-written scanners of untrusted text (C and CUDA
// source, assembler listings, tool output). ASCII only, independent of the locale, never throws.
#pragma once

#include <string_view>

namespace tailforge::text {

inline bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

// A C identifier: [A-Za-z_][A-Za-z0-9_]*.
inline bool is_identifier_start(char c) { return is_ascii_letter(c) || c == '_'; }
inline bool is_identifier_char(char c) { return is_identifier_start(c) || is_ascii_digit(c); }

// An assembler symbol (GNU as, PTX): an identifier that may also hold `.` and `$`.
inline bool is_assembler_symbol_char(char c) { return is_identifier_char(c) || c == '.' || c == '$'; }

// Whitespace as the C locale's isspace: space, \t, \n, \v, \f, \r.
inline bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// `text` without leading and trailing whitespace (is_space).
inline std::string_view trim_space(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

// `text` without leading and trailing blanks of one line: space, tab and carriage return.
inline std::string_view trim_blanks(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r") - begin + 1);
}

}  // namespace tailforge::text
