// The syntax under the CUDA refactoring of refactor.h: lexemes (multi-char operators merged,
// comments dropped, preprocessor lines as barriers), the expression regions of statements and a
// precedence-climbing expression parser. It never edits text and never guesses: what it cannot
// read is not a region.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/token_diff.h"

namespace tailforge::cuda_refactor {

struct Lexeme {
  TokenKind kind = TokenKind::punctuation;
  std::string text;  // "#" for a whole preprocessor line
  size_t first_token = 0, last_token = 0;
};

struct SourceLexemes {
  TokenizedText tokenized;
  std::vector<Lexeme> lexemes;
  std::set<std::string> type_names;   // builtin types plus typedef/using/struct/template names
  std::set<std::string> macro_names;  // #define'd in the text
  std::set<std::string> identifiers;  // every identifier of the text
  std::set<std::string> variables;    // declared as `type name` followed by = ; , ) [ or :
};

SourceLexemes lex_source(const std::string& text);

bool is_macro_name(const SourceLexemes& source, const std::string& name);  // #define'd or ALL_CAPS
bool is_type_name(const SourceLexemes& source, const std::string& name);   // builtin, declared or *_t

enum class NodeKind { leaf, paren, prefix, postfix, cast, call, subscript, member, binary, ternary, opaque };

struct ExpressionNode {
  NodeKind kind = NodeKind::leaf;
  std::string op;              // operator, cast type, or ".x" / "->x" for members
  size_t first = 0, last = 0;  // lexemes covered, inclusive
  std::vector<int> children;   // call: callee then arguments; ternary: condition, then, else
  int parent = -1;
};

struct ExpressionTree {
  std::vector<ExpressionNode> nodes;
  int root = -1;
};

// How tightly a node binds: 1 comma ... 13 multiplicative, 14 prefix/cast, 15 postfix/primary.
int node_precedence(const ExpressionNode& node);
bool is_assignment_operator(const std::string& op);

// lexemes[begin, end) as one whole expression, or nothing when it is not one we can read.
std::optional<ExpressionTree> parse_expression(const SourceLexemes& source, size_t begin, size_t end);

struct ExpressionRegion {
  size_t begin = 0, end = 0;  // lexemes [begin, end)
  ExpressionTree tree;
  std::string declared_name;  // set when the region initializes a single declared variable
  std::string declared_type;  // its type, lexemes joined by spaces
};

// The expressions of assignments, initializers, returns and if/while/for/switch conditions that
// parse and hold no template-like angle brackets, in text order.
std::vector<ExpressionRegion> expression_regions(const SourceLexemes& source);

// Whether lexeme `index` is a whole `#pragma ...` line.
bool is_pragma_line(const SourceLexemes& source, size_t index);

// The lexeme index of the bracket closing the one at `open`, or npos. A preprocessor line in
// between makes the brackets unreadable, except a #pragma line between braces (`#pragma unroll`
// inside a function body).
size_t matching_close(const SourceLexemes& source, size_t open, size_t end);

}  // namespace tailforge::cuda_refactor
