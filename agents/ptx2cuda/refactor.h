// CUDA kernel refactoring for ptx2cuda training data (PtxDec's post-processing): removes
// parentheses that C/C++ precedence makes redundant and hoists thread-index arithmetic repeated
// in a __global__ / __device__ body into one const local. It works on tokens and parsed
// expressions, leaves anything it cannot parse (templates, lambdas, macros, # lines) untouched,
// and never compiles, runs or checks the result: that is the caller's (see bench/refactor.cpp).
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
  size_t index_expressions_extracted = 0;                 // locals added or reused
  size_t index_occurrences_replaced = 0;
  size_t index_arithmetic_characters_before = 0;  // every occurrence of an extracted expression
  size_t index_arithmetic_characters_after = 0;   // declarations added plus the names left in place
};

// Parentheses first, then index extraction on the result. Never fails: unreadable text comes
// back unchanged.
RefactorResult refactor_cuda(const std::string& source);

}  // namespace tailforge
