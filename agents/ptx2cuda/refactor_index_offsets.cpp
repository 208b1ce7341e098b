// Index+Offset CSE (PtxDec, Fig. 7): an index sub-expression that reads a local variable (a loop
// variable, an int local, a written parameter) and is written more than once in a body, at least
// once inside an array subscript, becomes `int indexN = ...;` right before the first statement
// that uses it, in the innermost block around its uses where every operand is declared and no
// operand is written between the declaration and the end of the last using statement. Where no
// such place holds all uses (a loop variable, a write in between), the uses are split by
// statement and by nested block and each part is tried on its own, down to a loop's body. Of
// `X + 9` only X is named, so the offset stays written: `A[index0 + 9]`. Terms made only of
// thread indices, literals and unwritten parameters are left to the thread-index CSE.
#include <algorithm>

#include "agents/ptx2cuda/refactor_hoisting.h"

namespace tailforge::cuda_refactor {
namespace {

class OffsetIndexCse : private BodyHoisting {
 public:
  using BodyHoisting::BodyHoisting;

  void run() {
    if (!scopes_.readable() || scopes_.has_jumps()) return;
    read_variable_types();
    // Terms that read a variable the thread-index CSE may not treat as fixed.
    auto local_term = [this](const ExpressionTree& tree, int node) -> std::optional<IndexTerm> {
      std::optional<IndexTerm> term = index_term(source_, tree, node, variables_);
      if (!term || !term->has_operator || index_term(source_, tree, node, pure_)) return std::nullopt;
      return term;
    };
    for (const std::vector<IndexUse>& uses : index_uses_longest_first(source_, regions_, body_, local_term)) {
      if (std::none_of(uses.begin(), uses.end(), [](const IndexUse& use) { return use.in_subscript; })) continue;
      std::vector<const IndexUse*> free;
      for (const IndexUse& use : uses)
        if (!replacements_.overlaps(use)) free.push_back(&use);
      place(free);
    }
  }

 private:
  // Every variable whose declarations all have one arithmetic type; the pure ones (parameters
  // never written nor declared again) separately.
  void read_variable_types() {
    std::map<std::string, std::vector<const Declaration*>> by_name;
    for (const Declaration& declaration : scopes_.declarations()) by_name[declaration.name].push_back(&declaration);
    for (const auto& [name, declarations] : by_name) {
      std::optional<ArithmeticType> type = arithmetic_type(declarations.front()->type);
      for (const Declaration* other : declarations) {
        std::optional<ArithmeticType> same = arithmetic_type(other->type);
        if (!type || !same || same->name != type->name) type.reset();
      }
      if (!type) continue;
      variables_[name] = *type;
      bool parameter = declarations.size() == 1 && declarations.front()->at == body_.open;
      if (parameter && !scopes_.may_write(name, body_.open + 1, body_.close)) pure_[name] = *type;
    }
  }

  std::vector<std::string> operands(const IndexUse& use) const {
    std::vector<std::string> names;
    const ExpressionNode& node = use.region->tree.nodes[use.node];
    for (size_t i = node.first; i <= node.last; ++i) {
      bool member = i > node.first && (text(i - 1) == "." || text(i - 1) == "->");
      if (source_.lexemes[i].kind == TokenKind::identifier && !member && variables_.count(text(i)))
        names.push_back(text(i));
    }
    return names;
  }

  // A declaration before statement `first` of `block` reaches every use, and nothing the
  // expression reads changes from there to the end of statement `last`.
  bool valid(int block, int first, int last, const std::vector<const IndexUse*>& uses) const {
    const Block& scope = scopes_.blocks()[block];
    if (scope.is_switch) return false;
    size_t from = scope.statements[first].first, to = scope.statements[last].second;
    for (const std::string& name : operands(*uses.front())) {
      const Declaration* declaration = scopes_.visible(name, from);
      if (!declaration) return false;
      for (const IndexUse* use : uses)
        if (scopes_.visible(name, use->first) != declaration) return false;
      if (scopes_.may_write(name, from, to)) return false;
    }
    return true;
  }

  int common_block(const std::vector<const IndexUse*>& uses) const {
    int block = scopes_.block_of(uses.front()->first);
    for (const IndexUse* use : uses) block = block < 0 ? -1 : scopes_.common_block(block, scopes_.block_of(use->first));
    return block;
  }

  // Runs of consecutive statements of the common block that can share one declaration; a single
  // statement that cannot is searched again inside (its loop body, its branches).
  void place(std::vector<const IndexUse*> uses) {
    if (uses.size() < 2) return;
    std::sort(uses.begin(), uses.end(), [](const IndexUse* a, const IndexUse* b) { return a->first < b->first; });
    int block = common_block(uses);
    if (block < 0) return;
    std::vector<std::pair<int, std::vector<const IndexUse*>>> by_statement;
    for (const IndexUse* use : uses) {
      int statement = scopes_.statement_of(block, use->first);
      if (statement < 0) return;
      if (by_statement.empty() || by_statement.back().first != statement) by_statement.push_back({statement, {}});
      by_statement.back().second.push_back(use);
    }
    size_t start = 0;
    while (start < by_statement.size()) {
      std::vector<const IndexUse*> run = by_statement[start].second;
      size_t end = start + 1;
      for (; end < by_statement.size(); ++end) {
        std::vector<const IndexUse*> longer = run;
        longer.insert(longer.end(), by_statement[end].second.begin(), by_statement[end].second.end());
        if (!valid(block, by_statement[start].first, by_statement[end].first, longer)) break;
        run = longer;
      }
      bool single = end == start + 1;
      if (valid(block, by_statement[start].first, by_statement[end - 1].first, run)) {
        if (run.size() >= 2) hoist(block, by_statement[start].first, run);
      } else if (single && common_block(run) != block) {
        place(run);
      }
      start = end;
    }
  }

  // The first free number n for a local named index<n>.
  int free_name_number() const {
    int number = next_name_;
    while (source_.identifiers.count("index" + std::to_string(number))) ++number;
    return number;
  }

  void hoist(int block, int statement, const std::vector<const IndexUse*>& uses) {
    const IndexUse& first = *uses.front();
    const ExpressionNode& node = first.region->tree.nodes[first.node];
    size_t before = 0;
    for (const IndexUse* use : uses) before += replacements_.text(*use).size();
    int number = free_name_number();
    std::string name = "index" + std::to_string(number);
    std::string declaration =
        first.term.type.name + " " + name + " = " + lexeme_text(source_, node.first, node.last) + ";";
    if (declaration.size() + uses.size() * name.size() >= before) return;  // would not pay off
    next_name_ = number + 1;
    // Before the statement, and before the #pragma lines that belong to it.
    const std::vector<std::pair<size_t, size_t>>& statements = scopes_.blocks()[block].statements;
    while (statement > 0 && text(statements[statement - 1].first) == "#") --statement;
    size_t anchor = source_.lexemes[statements[statement].first - 1].last_token;
    edits_.inserted_after[anchor] += declaration_line(source_.tokenized, anchor + 1, declaration);
    pass_.characters_after += declaration.size();
    for (const IndexUse* use : uses) replacements_.replace(*use, name);
    ++pass_.expressions_extracted;
  }

  std::map<std::string, ArithmeticType> variables_, pure_;
  int next_name_ = 0;
};

}  // namespace

IndexPass extract_offset_index_expressions(const std::string& text) {
  return hoist_in_device_bodies<OffsetIndexCse>(text);
}

}  // namespace tailforge::cuda_refactor
