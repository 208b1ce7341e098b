// One lexer for C, C++ and CUDA text: splits it into identifiers, numbers, string and char literals
// (encoding prefixes and raw strings included), comments, punctuation and whitespace, each with
// its byte offsets. It knows no keywords, runs no preprocessor and judges nothing; callers turn
// the tokens into what they need (a token diff, shingles, a code view without strings).
//
// Untrusted text is fine: one pass, no recursion, no regex, no allocation, never throws, never
// reads past the text. An unterminated quoted literal ends at its line's end, an unterminated
// comment or raw string at the text's end.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tailforge::text {

enum class CppTokenKind { whitespace, identifier, number, string_literal, char_literal, comment, punctuation };

struct CppToken {
  CppTokenKind kind = CppTokenKind::punctuation;
  size_t begin = 0, end = 0;  // the token is text[begin, end)
  // Literals only. prefix: the bytes before the opening quote (L, u, U, u8, and R for a raw string:
  // u8R"(...)" has 3); [body_begin, body_end): what lies between the quotes, or between "delim(
  // and )delim" in a raw string.
  size_t prefix = 0;
  size_t body_begin = 0, body_end = 0;
  bool raw = false;
  // Literals and block comments: false when the text (for a quoted literal, its line) ended first.
  bool closed = true;
};

// The token starting at text[begin], which must be inside the text (past it: an empty whitespace
// token). Its end is always past `begin`, so a caller lexes the whole text by going on from there.
//
// Rules: whitespace is a run of spaces, tabs, newlines, \r, \v, \f. A // comment runs to the end
// of its line, and on over a line ending in a backslash; a /* comment to its */. A number is a
// preprocessing number: a digit or .digit, then letters, digits, _, ., a sign after e E p P, and
// digit separators ('1'000', 0x1'F). String and char literals take escapes (\" and a backslash
// before a newline do not end them) and a prefix L u U u8; a raw string R"delim(...)delim" also
// LR uR UR u8R, its delimiter at most 16 characters without spaces, parentheses or backslashes
// (otherwise the R is an identifier). A number keeps its suffix (10ull); a string or char keeps no
// user-defined suffix ("s"sv is a string, then an identifier). Every other byte, NUL and
// non-ASCII included, is one punctuation token.
CppToken next_cpp_token(std::string_view text, size_t begin);

// The text with comments and the bodies of string and char literals blanked to spaces, newlines
// kept, so positions match the original and a reader sees code only. A literal's prefix (L, u8R)
// stays; digit separators stay inside their numbers.
std::string code_view(std::string_view text);

}  // namespace tailforge::text
