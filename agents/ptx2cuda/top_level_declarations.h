// Splits a CUDA translation unit into its file-scope declarations (preprocessor lines, types,
// typedefs, globals, functions, namespace blocks) with the names each declares and mentions.
// It reads tokens, not a grammar: it does not resolve scopes, overloads or macros.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/result.h"

namespace tailforge {

enum class DeclarationKind { preprocessor, using_directive, block, type, function, variable, other };

struct TopLevelDeclaration {
  DeclarationKind kind = DeclarationKind::other;
  size_t begin = 0;  // byte offsets into the source; comments right before it included
  size_t end = 0;
  std::vector<std::string> declared_names;   // what other declarations refer to it by
  std::vector<std::string> mentioned_names;  // every identifier it contains
  bool has_body = false;                     // a function definition
  bool is_kernel = false;                    // a __global__ function definition
  bool is_template = false;                  // has a `template <...>` header with parameters
  bool is_explicit_instantiation = false;    // `template void f<...>(...);`
  bool contains_kernel = false;              // a block with a __global__ definition inside
};

// Declarations in source order. Fails (naming the offset) when braces, brackets or parentheses
// do not balance, since nothing after that point can be trusted.
Result<std::vector<TopLevelDeclaration>> split_top_level_declarations(const std::string& source);

// The first declared name, or the first line of its text when it declares none.
std::string declaration_label(const std::string& source, const TopLevelDeclaration& declaration);

}  // namespace tailforge
