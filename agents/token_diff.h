// Tokens of C/C++/CUDA text and the diff of two token sequences, the ground the baseline
// learner stands on. It knows nothing of CUDA or HIP and does not parse beyond single tokens.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tailforge {

enum class TokenKind { identifier, number, string_literal, char_literal, comment, punctuation };

struct Token {
  TokenKind kind = TokenKind::punctuation;
  std::string whitespace;  // the spaces, tabs and newlines in front of the token
  std::string text;
};

struct TokenizedText {
  std::vector<Token> tokens;
  std::string trailing_whitespace;  // after the last token
};

// Splits text into identifiers, numbers, string and char literals, comments (one token each) and
// single-char punctuation, with the shared lexer (text/cpp_lexer.h). Never fails: an unterminated
// quoted literal runs to the end of its line, a comment or raw string to the end of the text.
TokenizedText tokenize_source(const std::string& text);

// whitespace + text of every token, then the trailing whitespace: the tokenized text, byte for byte.
std::string join_tokens(const TokenizedText& tokenized);

// a[a_begin, a_end) is replaced by b[b_begin, b_end); either side may be empty.
struct DiffHunk {
  size_t a_begin = 0, a_end = 0;
  size_t b_begin = 0, b_end = 0;
};

// The differing runs of a minimal token diff (Myers) of a and b, in order. Tokens are equal when
// their texts are; whitespace is ignored. Past max_edits insertions + deletions the part not yet
// aligned is given as one hunk, so two unrelated texts cost O((N+M) * max_edits), not more.
std::vector<DiffHunk> diff_token_texts(const std::vector<Token>& a, const std::vector<Token>& b,
                                       size_t max_edits = 2000);

// The same diff over sequences already mapped to integers (equal texts, equal ids).
std::vector<DiffHunk> diff_token_ids(const std::vector<int>& a, const std::vector<int>& b, size_t max_edits = 2000);

}  // namespace tailforge
