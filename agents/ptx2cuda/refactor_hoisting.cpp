#include "agents/ptx2cuda/refactor_hoisting.h"

#include <algorithm>

namespace tailforge::cuda_refactor {

std::vector<std::vector<IndexUse>> index_uses_longest_first(const SourceLexemes& source,
                                                            const std::vector<ExpressionRegion>& regions,
                                                            const FunctionBody& body, const TermReader& term_of) {
  std::map<std::string, std::vector<IndexUse>> groups;
  for (const ExpressionRegion& region : regions) {
    if (region.begin <= body.open || region.end > body.close) continue;
    const ExpressionTree& tree = region.tree;
    for (size_t n = 0; n < tree.nodes.size(); ++n) {
      int index = static_cast<int>(n);
      if (tree.nodes[n].kind == NodeKind::paren || is_index_plus_offset(source, tree, index)) continue;
      std::optional<IndexTerm> term = term_of(tree, index);
      if (!term) continue;
      int outer = index;
      while (tree.nodes[outer].parent >= 0 && tree.nodes[tree.nodes[outer].parent].kind == NodeKind::paren)
        outer = tree.nodes[outer].parent;
      const ExpressionNode& span = tree.nodes[outer];
      groups[term->canonical].push_back(
          {&region, index, span.first, span.last, *term, is_inside_subscript(tree, index)});
    }
  }
  std::vector<std::vector<IndexUse>> ordered;
  for (auto& [canonical, uses] : groups) ordered.push_back(std::move(uses));
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
    return a.front().term.canonical.size() > b.front().term.canonical.size();
  });
  return ordered;
}

bool UseReplacements::overlaps(const IndexUse& use) const {
  for (const auto& [first, last] : taken_)
    if (use.first <= last && first <= use.last) return true;
  return false;
}

void UseReplacements::replace(const IndexUse& use, const std::string& name) {
  size_t first_token = source_.lexemes[use.first].first_token;
  size_t last_token = source_.lexemes[use.last].last_token;
  edits_.replaced[first_token] = name;
  for (size_t t = first_token + 1; t <= last_token; ++t) edits_.removed[t] = true;
  take(use);
  pass_.characters_before += text(use).size();
  pass_.characters_after += name.size();
  ++pass_.occurrences_replaced;
}

std::string declaration_line(const TokenizedText& tokenized, size_t next, const std::string& declaration) {
  const std::string& whitespace = tokenized.tokens[next].whitespace;
  size_t newline = whitespace.rfind('\n');
  return newline == std::string::npos ? " " + declaration : "\n" + whitespace.substr(newline + 1) + declaration;
}

}  // namespace tailforge::cuda_refactor
