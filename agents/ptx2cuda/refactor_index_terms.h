// Pure index terms for the index CSE of refactor_index.cpp: expressions built only from
// blockIdx/blockDim/threadIdx/gridDim, warpSize, integer literals and parameters that are never
// written, with their C++ type and a canonical text in which commuted operands read the same.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "agents/ptx2cuda/refactor_syntax.h"

namespace tailforge::cuda_refactor {

struct ArithmeticType {
  std::string name;  // as it is declared: "unsigned int", "int", "size_t", "float", ...
  bool floating = false;
  bool is_unsigned = false;
  int rank = 1;  // int 1, long 2, long long 3; float 1, double 2
  int bits = 32;

  bool same_as(const ArithmeticType& other) const {
    return floating == other.floating && is_unsigned == other.is_unsigned && rank == other.rank;
  }
};

// "const unsigned int" -> unsigned int; nothing for types arithmetic here does not cover.
std::optional<ArithmeticType> arithmetic_type(const std::string& spelled);

struct IndexTerm {
  std::string canonical;
  ArithmeticType type;
  bool uses_builtin = false;
  bool has_operator = false;
};

// The term of tree node `index`, or nothing when it is not pure. `parameters`: the values that
// may appear, by name, with their declared types.
std::optional<IndexTerm> index_term(const SourceLexemes& source, const ExpressionTree& tree, int index,
                                    const std::map<std::string, ArithmeticType>& parameters);

// `X + 9` or `X - 9` (an integer literal right operand): PtxDec's Index+Offset form, in which X
// is the index worth naming and the offset stays written.
bool is_index_plus_offset(const SourceLexemes& source, const ExpressionTree& tree, int index);

// +, -, *, /, %, <<, >>, &, |, ^: the operators of index arithmetic.
bool is_index_operator(const std::string& op);

// Whether node `index` is part of an array subscript's index: a chain of index operators,
// parentheses, casts and unary operators leads from it to the subscript's bracketed operand.
bool is_inside_subscript(const ExpressionTree& tree, int index);

// A readable local name for a canonical term: idx, idy, stride, block_start, ... or index_term.
std::string readable_name(const std::string& canonical);

}  // namespace tailforge::cuda_refactor
