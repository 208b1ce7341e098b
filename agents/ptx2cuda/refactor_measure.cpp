// What the refactoring is measured by, read from a text alone and so the same before and after
// (it never asks the passes what they did): the repeated index arithmetic of a body is every
// index sub-expression (+ - * / % << >> & | ^, reading a variable) of an array subscript whose
// structure, parentheses aside, occurs at least twice among the subscripts of that body. Each repeated one counts with
// its characters, outermost first (its own repeated parts are not counted again), its redundant
// parentheses left out because those are counted as parentheses.
#include <algorithm>
#include <map>

#include "agents/ptx2cuda/refactor_index_terms.h"
#include "agents/ptx2cuda/refactor_passes.h"
#include "agents/ptx2cuda/refactor_scopes.h"

namespace tailforge::cuda_refactor {
namespace {

// The expression's structure as text: parentheses dropped, every operation bracketed once.
std::string structure(const SourceLexemes& source, const ExpressionTree& tree, int index) {
  const ExpressionNode& node = tree.nodes[index];
  auto child = [&](size_t k) { return structure(source, tree, node.children[k]); };
  switch (node.kind) {
    case NodeKind::paren:
      return child(0);
    case NodeKind::prefix:
      return node.op + child(0);
    case NodeKind::postfix:
    case NodeKind::member:
      return child(0) + node.op;
    case NodeKind::cast:
      return "(" + node.op + ")" + child(0);
    case NodeKind::subscript:
      return child(0) + "[" + child(1) + "]";
    case NodeKind::binary:
      return "{" + child(0) + node.op + child(1) + "}";
    case NodeKind::ternary:
      return "{" + child(0) + "?" + child(1) + ":" + child(2) + "}";
    case NodeKind::call: {
      std::string text = child(0) + "(";
      for (size_t k = 1; k < node.children.size(); ++k) text += (k > 1 ? "," : "") + child(k);
      return text + ")";
    }
    default:
      return lexeme_text(source, node.first, node.last);
  }
}

// An index operation of a subscript that reads a variable (`32 + 1` is a constant, not arithmetic
// anyone would name).
bool is_index_arithmetic(const SourceLexemes& source, const ExpressionTree& tree, int index) {
  const ExpressionNode& node = tree.nodes[index];
  if (node.kind != NodeKind::binary || !is_index_operator(node.op) || !is_inside_subscript(tree, index)) return false;
  for (size_t i = node.first; i <= node.last; ++i) {
    const Lexeme& lexeme = source.lexemes[i];
    if (lexeme.kind == TokenKind::identifier && !is_type_name(source, lexeme.text)) return true;
  }
  return false;
}

class RepeatedIndexCount {
 public:
  RepeatedIndexCount(const SourceLexemes& source, const std::vector<ExpressionRegion>& regions)
      : source_(source), regions_(regions) {}

  size_t in_body(const FunctionBody& body) {
    std::vector<const ExpressionRegion*> inside;
    for (const ExpressionRegion& region : regions_)
      if (region.begin > body.open && region.end <= body.close) inside.push_back(&region);
    std::map<std::string, size_t> occurrences;
    for (const ExpressionRegion* region : inside) {
      for (size_t n = 0; n < region->tree.nodes.size(); ++n)
        if (is_index_arithmetic(source_, region->tree, static_cast<int>(n)))
          ++occurrences[structure(source_, region->tree, static_cast<int>(n))];
    }
    size_t characters = 0;
    for (const ExpressionRegion* region : inside) {
      std::vector<size_t> redundant = redundant_parenthesis_lexemes(source_, *region);
      std::sort(redundant.begin(), redundant.end());
      characters += repeated(*region, region->tree.root, occurrences, redundant);
    }
    return characters;
  }

 private:
  size_t repeated(const ExpressionRegion& region, int index, const std::map<std::string, size_t>& occurrences,
                  const std::vector<size_t>& redundant) const {
    const ExpressionTree& tree = region.tree;
    const ExpressionNode& node = tree.nodes[index];
    if (is_index_arithmetic(source_, tree, index) && occurrences.at(structure(source_, tree, index)) >= 2)
      return lexeme_text(source_, node.first, node.last, redundant).size();
    size_t characters = 0;
    for (int child : node.children) characters += repeated(region, child, occurrences, redundant);
    return characters;
  }

  const SourceLexemes& source_;
  const std::vector<ExpressionRegion>& regions_;
};

}  // namespace

size_t repeated_index_characters(const std::string& text) {
  SourceLexemes source = lex_source(text);
  std::vector<ExpressionRegion> regions = expression_regions(source);
  RepeatedIndexCount count(source, regions);
  size_t characters = 0;
  for (const FunctionBody& body : device_function_bodies(source)) characters += count.in_body(body);
  return characters;
}

size_t device_body_characters(const std::string& text) {
  SourceLexemes source = lex_source(text);
  const std::vector<Token>& tokens = source.tokenized.tokens;
  size_t characters = 0;
  for (const FunctionBody& body : device_function_bodies(source)) {
    size_t first = source.lexemes[body.open].first_token, last = source.lexemes[body.close].last_token;
    for (size_t t = first; t <= last; ++t)
      characters += (t > first ? tokens[t].whitespace.size() : 0) + tokens[t].text.size();
  }
  return characters;
}

}  // namespace tailforge::cuda_refactor
