// Thread-index CSE: in each __global__ / __device__ body, a pure index term
// (refactor_index_terms.h) written at least twice becomes one const local at the top of the body,
// or reuses a local declared at the body's top level to exactly that term and never written
// afterwards. Of `X + 9` (Index+Offset) only X is a candidate, so the offset stays written.
#include <algorithm>

#include "agents/ptx2cuda/refactor_hoisting.h"

namespace tailforge::cuda_refactor {
namespace {

const char* const kGenericName = "index_term";

class KernelIndexCse : private BodyHoisting {
 public:
  using BodyHoisting::BodyHoisting;

  void run() {
    read_parameters();
    auto pure_term = [this](const ExpressionTree& tree, int node) -> std::optional<IndexTerm> {
      std::optional<IndexTerm> term = index_term(source_, tree, node, parameters_);
      if (!term || !term->uses_builtin || !term->has_operator) return std::nullopt;
      return term;
    };
    for (const std::vector<IndexUse>& uses : index_uses_longest_first(source_, regions_, body_, pure_term))
      extract(uses);
    if (!declarations_.empty()) edits_.inserted_after[source_.lexemes[body_.open].last_token] = declarations_;
  }

 private:
  bool is_declared_at(size_t index) const {
    const Lexeme& previous = source_.lexemes[index - 1];
    return previous.kind == TokenKind::identifier && !is_statement_word(previous.text);
  }

  // Assigned, incremented, address taken or passed to a call that may take a reference, anywhere
  // in the body after its declaration.
  bool is_written(const std::string& name) const {
    for (size_t i = body_.open + 1; i < body_.close; ++i) {
      if (text(i) != name || source_.lexemes[i].kind != TokenKind::identifier || is_declared_at(i)) continue;
      const std::string& next = text(i + 1);
      const std::string& previous = text(i - 1);
      if (is_assignment_operator(next) || next == "++" || next == "--" || previous == "++" || previous == "--")
        return true;
      bool operand_before =
          source_.lexemes[i - 2].kind != TokenKind::punctuation || text(i - 2) == ")" || text(i - 2) == "]";
      if (previous == "&" && !operand_before) return true;
      if (scopes_.passed_to_unknown_call(i)) return true;
    }
    return false;
  }

  size_t declarations_of(const std::string& name) const {
    size_t count = 0;
    for (size_t i = body_.open + 1; i < body_.close; ++i)
      if (text(i) == name && is_declared_at(i)) ++count;
    return count;
  }

  void read_parameters() {
    size_t start = body_.parameters_open + 1;
    for (size_t i = start; i <= body_.parameters_close; ++i) {
      if (i < body_.parameters_close && text(i) != ",") continue;
      read_parameter(start, i);
      start = i + 1;
    }
  }

  void read_parameter(size_t begin, size_t end) {
    if (end < begin + 2 || source_.lexemes[end - 1].kind != TokenKind::identifier) return;
    std::string type;
    for (size_t i = begin; i + 1 < end; ++i) {
      if (source_.lexemes[i].kind != TokenKind::identifier) return;
      type += (type.empty() ? "" : " ") + text(i);
    }
    const std::string& name = text(end - 1);
    std::optional<ArithmeticType> arithmetic = arithmetic_type(type);
    if (arithmetic && !is_written(name) && declarations_of(name) == 0) parameters_[name] = *arithmetic;
  }

  // Brace and parenthesis depth of lexeme `index` inside the body: 0 and 0 at its top level.
  bool at_top_level(size_t index) const {
    int braces = 0, parens = 0;
    for (size_t i = body_.open + 1; i < index; ++i) {
      braces += text(i) == "{" ? 1 : text(i) == "}" ? -1 : 0;
      parens += text(i) == "(" ? 1 : text(i) == ")" ? -1 : 0;
    }
    return braces == 0 && parens == 0;
  }

  // The use that is the whole initializer of a reusable local, if any.
  const IndexUse* reusable_declaration(const std::vector<IndexUse>& uses) const {
    for (const IndexUse& use : uses) {
      const ExpressionRegion& region = *use.region;
      if (region.declared_name.empty() || use.first != region.begin || use.last + 1 != region.end) continue;
      std::optional<ArithmeticType> declared = arithmetic_type(region.declared_type);
      const std::string& name = region.declared_name;
      if (declared && declared->same_as(use.term.type) && at_top_level(region.begin) && !is_written(name) &&
          declarations_of(name) == 1)
        return &use;
    }
    return nullptr;
  }

  std::string fresh_name(const std::string& wanted) const {
    std::string name = wanted;
    for (int suffix = 2; source_.identifiers.count(name) || chosen_names_.count(name); ++suffix)
      name = wanted + "_" + std::to_string(suffix);
    return name;
  }

  void extract(const std::vector<IndexUse>& all) {
    std::vector<IndexUse> free;
    for (const IndexUse& use : all)
      if (!replacements_.overlaps(use)) free.push_back(use);
    if (free.size() < 2) return;
    if (const IndexUse* declaration = reusable_declaration(free)) {
      std::vector<IndexUse> later;
      for (const IndexUse& use : free)
        if (use.first >= declaration->region->end) later.push_back(use);
      const std::string& name = declaration->region->declared_name;
      if (later.empty() || name.size() >= replacements_.text(*declaration).size()) return;
      size_t initializer = replacements_.text(*declaration).size();
      pass_.characters_before += initializer;
      pass_.characters_after += initializer;
      replacements_.take(*declaration);
      for (const IndexUse& use : later) replacements_.replace(use, name);
      ++pass_.expressions_extracted;
      return;
    }
    hoist(free);
  }

  // A named thread-index concept (idx, stride, ...) is hoisted whenever it repeats; any other
  // pure term only when the declaration plus the names are shorter than the uses.
  void hoist(const std::vector<IndexUse>& uses) {
    const IndexUse& first = uses.front();
    const ExpressionNode& node = first.region->tree.nodes[first.node];
    std::string wanted = readable_name(first.term.canonical);
    std::string name = fresh_name(wanted);
    std::string declaration =
        "const " + first.term.type.name + " " + name + " = " + lexeme_text(source_, node.first, node.last) + ";";
    size_t before = 0;
    for (const IndexUse& use : uses) before += replacements_.text(use).size();
    if (wanted == kGenericName && declaration.size() + uses.size() * name.size() >= before) return;
    chosen_names_.insert(name);
    declarations_ += declaration_line(source_.tokenized, source_.lexemes[body_.open].last_token + 1, declaration);
    pass_.characters_after += declaration.size();
    for (const IndexUse& use : uses) replacements_.replace(use, name);
    ++pass_.expressions_extracted;
  }

  std::map<std::string, ArithmeticType> parameters_;
  std::set<std::string> chosen_names_;
  std::string declarations_;
};

}  // namespace

IndexPass extract_index_expressions(const std::string& text) { return hoist_in_device_bodies<KernelIndexCse>(text); }

}  // namespace tailforge::cuda_refactor
