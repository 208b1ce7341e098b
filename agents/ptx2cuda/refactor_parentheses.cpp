// Redundant-parenthesis elimination: a pair goes when the parsed tree binds the same way
// without it. Mixed comparisons, shifts, bitwise and logical operators keep their parentheses
// (compilers warn without them), and so do commas, assignments and anything naming a macro;
// arithmetic compared (`(a + b) < c`) loses them, as no compiler asks for those.
#include <algorithm>

#include "agents/ptx2cuda/refactor_passes.h"

namespace tailforge::cuda_refactor {
namespace {

bool is_left_associative_chain(const std::string& op) {
  return op == "&&" || op == "||" || op == "&" || op == "|" || op == "^";
}

bool is_arithmetic(const std::string& op) { return op == "+" || op == "-" || op == "*" || op == "/" || op == "%"; }

// The first node inside a chain of parentheses.
const ExpressionNode& unwrapped(const ExpressionTree& tree, int index) {
  while (tree.nodes[index].kind == NodeKind::paren) index = tree.nodes[index].children[0];
  return tree.nodes[index];
}

bool names_a_macro(const SourceLexemes& source, const ExpressionNode& node) {
  for (size_t i = node.first; i <= node.last; ++i)
    if (source.lexemes[i].kind == TokenKind::identifier && is_macro_name(source, source.lexemes[i].text)) return true;
  return false;
}

// `(x) - y` where x could be a type we do not know: the pair may be a cast.
bool could_be_cast(const SourceLexemes& source, const ExpressionNode& paren, const ExpressionNode& inner) {
  if (inner.kind != NodeKind::leaf || inner.first != inner.last) return false;
  const Lexeme& word = source.lexemes[inner.first];
  if (word.kind != TokenKind::identifier || source.variables.count(word.text)) return false;
  size_t after = paren.last + 1;
  if (after >= source.lexemes.size()) return false;
  const std::string& next = source.lexemes[after].text;
  return next == "+" || next == "-" || next == "*" || next == "&";
}

bool is_comparison(const std::string& op) {
  return op == "<" || op == ">" || op == "<=" || op == ">=" || op == "==" || op == "!=";
}

bool redundant_under_binary(const ExpressionNode& parent, bool left_side, const ExpressionNode& inner) {
  int outer = node_precedence(parent), own = node_precedence(inner);
  if (parent.op == "," || is_assignment_operator(parent.op)) return own > outer;
  if (inner.kind != NodeKind::binary) return own > outer;
  if (is_arithmetic(parent.op)) return own > outer || (own == outer && left_side);
  if (is_comparison(parent.op) && is_arithmetic(inner.op)) return true;  // `a + b < c` draws no warning
  return left_side && inner.op == parent.op && is_left_associative_chain(parent.op);
}

bool redundant_in_context(const ExpressionTree& tree, int index, const ExpressionNode& inner) {
  const ExpressionNode& node = tree.nodes[index];
  if (node.parent < 0) return true;
  const ExpressionNode& parent = tree.nodes[node.parent];
  bool first_child = parent.children[0] == index;
  int own = node_precedence(inner);
  switch (parent.kind) {
    case NodeKind::paren:
      return true;
    case NodeKind::call:
    case NodeKind::subscript:
      return !first_child || own >= 15;
    case NodeKind::member:
    case NodeKind::postfix:
    case NodeKind::prefix:
    case NodeKind::cast:
      return own >= 15;
    case NodeKind::binary:
      return redundant_under_binary(parent, first_child, inner);
    case NodeKind::ternary:
      return parent.children[1] == index || own > 3;
    default:
      return false;
  }
}

bool is_redundant(const SourceLexemes& source, const ExpressionTree& tree, int index) {
  const ExpressionNode& node = tree.nodes[index];
  const ExpressionNode& inner = unwrapped(tree, index);
  if (inner.kind == NodeKind::binary && (inner.op == "," || is_assignment_operator(inner.op))) return false;
  if (names_a_macro(source, node) || could_be_cast(source, node, inner)) return false;
  return redundant_in_context(tree, index, inner);
}

struct RegionEdit {
  std::vector<size_t> removed_lexemes;
  size_t characters = 0;
};

RegionEdit redundant_pairs(const SourceLexemes& source, const ExpressionRegion& region) {
  RegionEdit edit;
  for (size_t i = 0; i < region.tree.nodes.size(); ++i) {
    const ExpressionNode& node = region.tree.nodes[i];
    if (node.kind != NodeKind::paren || !is_redundant(source, region.tree, static_cast<int>(i))) continue;
    edit.removed_lexemes.push_back(node.first);
    edit.removed_lexemes.push_back(node.last);
  }
  return edit;
}

size_t region_characters(const SourceLexemes& source, const ExpressionRegion& region,
                         std::vector<size_t> left_out = {}) {
  std::sort(left_out.begin(), left_out.end());
  return lexeme_text(source, region.begin, region.end - 1, left_out).size();
}

}  // namespace

ParenthesisPass remove_redundant_parentheses(const std::string& text) {
  SourceLexemes source = lex_source(text);
  TokenEdits edits = no_edits(source.tokenized);
  ParenthesisPass pass;
  for (const ExpressionRegion& region : expression_regions(source)) {
    RegionEdit edit = redundant_pairs(source, region);
    if (edit.removed_lexemes.empty()) continue;
    pass.pairs_removed += edit.removed_lexemes.size() / 2;
    pass.expression_characters_before += region_characters(source, region);
    pass.expression_characters_after += region_characters(source, region, edit.removed_lexemes);
    for (size_t lexeme : edit.removed_lexemes) edits.removed[source.lexemes[lexeme].first_token] = true;
  }
  pass.text = apply_token_edits(source.tokenized, edits);
  return pass;
}

std::vector<size_t> redundant_parenthesis_lexemes(const SourceLexemes& source, const ExpressionRegion& region) {
  return redundant_pairs(source, region).removed_lexemes;
}

size_t count_redundant_parentheses(const std::string& text) {
  SourceLexemes source = lex_source(text);
  size_t pairs = 0;
  for (const ExpressionRegion& region : expression_regions(source))
    pairs += redundant_pairs(source, region).removed_lexemes.size() / 2;
  return pairs;
}

}  // namespace tailforge::cuda_refactor
