// CUDA kernel refactoring for ptx2cuda training data (PtxDec's post-processing): removes
// parentheses that C/C++ precedence makes redundant, hoists repeated index sub-expressions that
// read locals into `int indexN` locals in the block of their uses (Index+Offset: `A[index0 + 9]`),
// and hoists thread-index arithmetic repeated in a __global__ / __device__ body into one const
// local. It works on tokens and parsed expressions, leaves anything it cannot parse (templates,
// lambdas, macros, # lines) or prove unchanged untouched, and never compiles, runs or checks the
// result: that is the caller's (see bench/refactor.cpp).
#pragma once

#include <cstddef>
#include <string>

namespace tailforge {

struct RefactorResult {
  std::string text;
  size_t parentheses_removed = 0;                         // pairs
  size_t redundant_parenthesis_characters_before = 0;     // '(' and ')' the analysis finds redundant
  size_t redundant_parenthesis_characters_after = 0;      // the same analysis on the result
  size_t parenthesized_expression_characters_before = 0;  // expressions that lost a pair, before
  size_t parenthesized_expression_characters_after = 0;   // and after
  size_t index_expressions_extracted = 0;                 // locals added or reused, both passes
  size_t index_occurrences_replaced = 0;
  size_t index_arithmetic_characters_before = 0;  // every occurrence of an extracted expression
  size_t index_arithmetic_characters_after = 0;   // declarations added plus the names left in place
  // Measured on the input and on the result by the same analysis, whatever the passes did:
  // repeated index arithmetic in subscripts of __global__ / __device__ bodies (without its
  // redundant parentheses), and the characters of those bodies.
  size_t repeated_index_characters_before = 0;
  size_t repeated_index_characters_after = 0;
  size_t device_body_characters_before = 0;
  size_t device_body_characters_after = 0;
};

// Parentheses first, then the Index+Offset extraction, then the thread-index extraction, each on
// the previous result. Never fails: unreadable text comes back unchanged.
RefactorResult refactor_cuda(const std::string& source);

}  // namespace tailforge
