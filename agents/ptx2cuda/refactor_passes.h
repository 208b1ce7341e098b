// The two passes behind refactor_cuda (refactor.h) and the token edits they share. Each pass
// reads text and returns new text; neither compiles or checks anything.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "agents/ptx2cuda/refactor_syntax.h"

namespace tailforge::cuda_refactor {

// Edits by token index. A removed token's whitespace moves to the next kept token when that
// one has none; words or operators that would glue together get a space between them.
struct TokenEdits {
  std::vector<bool> removed;                     // per token
  std::map<size_t, std::string> replaced;        // token -> new text (its whitespace kept)
  std::map<size_t, std::string> inserted_after;  // token -> text written right after it
};

TokenEdits no_edits(const TokenizedText& tokenized);
std::string apply_token_edits(const TokenizedText& tokenized, const TokenEdits& edits);

// The text of lexemes [first, last] as written, inner whitespace collapsed to one space, the
// lexemes in `left_out` (sorted) skipped.
std::string lexeme_text(const SourceLexemes& source, size_t first, size_t last,
                        const std::vector<size_t>& left_out = {});

struct ParenthesisPass {
  std::string text;
  size_t pairs_removed = 0;
  size_t expression_characters_before = 0;  // of the expressions that lost a pair
  size_t expression_characters_after = 0;
};

// Removes parentheses that precedence and associativity make redundant (and that readability
// does not ask to keep) from every expression region.
ParenthesisPass remove_redundant_parentheses(const std::string& text);

// How many redundant pairs remove_redundant_parentheses would remove.
size_t count_redundant_parentheses(const std::string& text);

// The lexemes of the redundant pairs of one region, '(' and ')' alike.
std::vector<size_t> redundant_parenthesis_lexemes(const SourceLexemes& source, const ExpressionRegion& region);

struct IndexPass {
  std::string text;
  size_t expressions_extracted = 0;  // locals added or reused
  size_t occurrences_replaced = 0;
  size_t characters_before = 0;  // of every occurrence of an extracted expression
  size_t characters_after = 0;   // declarations added plus the names left in place
};

// Hoists thread-index arithmetic repeated in a __global__ / __device__ body into a const local.
IndexPass extract_index_expressions(const std::string& text);

// Hoists repeated index sub-expressions that read locals into `int indexN` locals placed in the
// block of their uses (refactor_index_offsets.cpp); `X + 9` keeps its offset.
IndexPass extract_offset_index_expressions(const std::string& text);

// Characters of repeated index arithmetic in __global__ / __device__ bodies, read from the text
// alone (refactor_measure.cpp).
size_t repeated_index_characters(const std::string& text);

// Characters of the __global__ / __device__ function bodies, braces included.
size_t device_body_characters(const std::string& text);

}  // namespace tailforge::cuda_refactor
