// Index CSE: in each __global__ / __device__ body, a pure index term (refactor_index_terms.h)
// written at least twice becomes one const local at the top of the body, or reuses a local
// declared at the body's top level to exactly that term and never written afterwards.
#include <algorithm>

#include "agents/ptx2cuda/refactor_index_terms.h"
#include "agents/ptx2cuda/refactor_passes.h"

namespace tailforge::cuda_refactor {
namespace {

struct KernelBody {
  size_t open = 0, close = 0;  // lexemes of '{' and '}'
  size_t parameters_open = 0, parameters_close = 0;
};

struct Occurrence {
  const ExpressionRegion* region = nullptr;
  int node = -1;
  size_t first = 0, last = 0;  // lexemes replaced: the term with the parentheses around it
  IndexTerm term;
};

const char* const kGenericName = "index_term";

bool is_statement_word(const std::string& word) {
  return word == "return" || word == "case" || word == "else" || word == "do" || word == "goto" || word == "sizeof" ||
         word == "throw" || word == "new" || word == "delete";
}

std::vector<KernelBody> kernel_bodies(const SourceLexemes& source) {
  std::vector<KernelBody> bodies;
  const std::vector<Lexeme>& lexemes = source.lexemes;
  for (size_t i = 0; i < lexemes.size(); ++i) {
    if (lexemes[i].text != "__global__" && lexemes[i].text != "__device__") continue;
    KernelBody body;
    size_t j = i + 1;
    for (; j < lexemes.size(); ++j) {
      const std::string& text = lexemes[j].text;
      if (text == "(") {
        size_t close = matching_close(source, j, lexemes.size());
        if (close == std::string::npos) break;
        body.parameters_open = j;
        body.parameters_close = j = close;
      } else if (text == "{" || text == ";" || text == "=" || text == "#" || text == "}") {
        break;
      }
    }
    if (j >= lexemes.size() || lexemes[j].text != "{" || body.parameters_close == 0) continue;
    body.open = j;
    body.close = matching_close(source, j, lexemes.size());
    if (body.close == std::string::npos) continue;
    bodies.push_back(body);
    i = body.close;
  }
  return bodies;
}

class KernelIndexCse {
 public:
  KernelIndexCse(const SourceLexemes& source, const std::vector<ExpressionRegion>& regions, const KernelBody& body,
                 TokenEdits& edits, IndexPass& pass)
      : source_(source), regions_(regions), body_(body), edits_(edits), pass_(pass) {}

  void run() {
    read_parameters();
    std::map<std::string, std::vector<Occurrence>> groups = collect_occurrences();
    std::vector<std::vector<Occurrence>*> ordered;
    for (auto& [canonical, occurrences] : groups) ordered.push_back(&occurrences);
    std::stable_sort(ordered.begin(), ordered.end(), [](const auto* a, const auto* b) {
      return a->front().term.canonical.size() > b->front().term.canonical.size();
    });
    for (std::vector<Occurrence>* occurrences : ordered) extract(*occurrences);
    if (!declarations_.empty()) edits_.inserted_after[source_.lexemes[body_.open].last_token] = declarations_;
  }

 private:
  const std::string& text(size_t index) const { return source_.lexemes[index].text; }

  bool is_declared_at(size_t index) const {
    const Lexeme& previous = source_.lexemes[index - 1];
    return previous.kind == TokenKind::identifier && !is_statement_word(previous.text);
  }

  // Assigned, incremented or address taken anywhere in the body after its declaration.
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

  std::map<std::string, std::vector<Occurrence>> collect_occurrences() const {
    std::map<std::string, std::vector<Occurrence>> groups;
    for (const ExpressionRegion& region : regions_) {
      if (region.begin <= body_.open || region.end > body_.close) continue;
      for (size_t n = 0; n < region.tree.nodes.size(); ++n) {
        const ExpressionNode& node = region.tree.nodes[n];
        if (node.kind == NodeKind::paren) continue;
        std::optional<IndexTerm> term = index_term(source_, region.tree, static_cast<int>(n), parameters_);
        if (!term || !term->uses_builtin || !term->has_operator) continue;
        int outer = static_cast<int>(n);
        while (region.tree.nodes[outer].parent >= 0 &&
               region.tree.nodes[region.tree.nodes[outer].parent].kind == NodeKind::paren)
          outer = region.tree.nodes[outer].parent;
        const ExpressionNode& span = region.tree.nodes[outer];
        groups[term->canonical].push_back({&region, static_cast<int>(n), span.first, span.last, *term});
      }
    }
    return groups;
  }

  bool overlaps_taken(const Occurrence& occurrence) const {
    for (const auto& [first, last] : taken_)
      if (occurrence.first <= last && first <= occurrence.last) return true;
    return false;
  }

  std::string occurrence_text(const Occurrence& occurrence) const {
    return lexeme_text(source_, occurrence.first, occurrence.last);
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

  // The occurrence that is the whole initializer of a reusable local, if any.
  const Occurrence* reusable_declaration(const std::vector<Occurrence>& occurrences) const {
    for (const Occurrence& occurrence : occurrences) {
      const ExpressionRegion& region = *occurrence.region;
      if (region.declared_name.empty() || occurrence.first != region.begin || occurrence.last + 1 != region.end)
        continue;
      std::optional<ArithmeticType> declared = arithmetic_type(region.declared_type);
      const std::string& name = region.declared_name;
      if (declared && declared->same_as(occurrence.term.type) && at_top_level(region.begin) && !is_written(name) &&
          declarations_of(name) == 1)
        return &occurrence;
    }
    return nullptr;
  }

  std::string fresh_name(const std::string& wanted) const {
    std::string name = wanted;
    for (int suffix = 2; source_.identifiers.count(name) || chosen_names_.count(name); ++suffix)
      name = wanted + "_" + std::to_string(suffix);
    return name;
  }

  void replace(const Occurrence& occurrence, const std::string& name) {
    size_t first_token = source_.lexemes[occurrence.first].first_token;
    size_t last_token = source_.lexemes[occurrence.last].last_token;
    edits_.replaced[first_token] = name;
    for (size_t t = first_token + 1; t <= last_token; ++t) edits_.removed[t] = true;
    taken_.push_back({occurrence.first, occurrence.last});
    pass_.characters_before += occurrence_text(occurrence).size();
    pass_.characters_after += name.size();
    ++pass_.occurrences_replaced;
  }

  void extract(const std::vector<Occurrence>& all) {
    std::vector<Occurrence> free;
    for (const Occurrence& occurrence : all)
      if (!overlaps_taken(occurrence)) free.push_back(occurrence);
    if (free.size() < 2) return;
    if (const Occurrence* declaration = reusable_declaration(free)) {
      std::vector<Occurrence> later;
      for (const Occurrence& occurrence : free)
        if (occurrence.first >= declaration->region->end) later.push_back(occurrence);
      const std::string& name = declaration->region->declared_name;
      if (later.empty() || name.size() >= occurrence_text(*declaration).size()) return;
      size_t initializer = occurrence_text(*declaration).size();
      pass_.characters_before += initializer;
      pass_.characters_after += initializer;
      taken_.push_back({declaration->first, declaration->last});
      for (const Occurrence& occurrence : later) replace(occurrence, name);
      ++pass_.expressions_extracted;
      return;
    }
    hoist(free);
  }

  // A named thread-index concept (idx, stride, ...) is hoisted whenever it repeats; any other
  // pure term only when the declaration plus the names are shorter than the occurrences.
  void hoist(const std::vector<Occurrence>& occurrences) {
    const Occurrence& first = occurrences.front();
    const ExpressionNode& node = first.region->tree.nodes[first.node];
    std::string wanted = readable_name(first.term.canonical);
    std::string name = fresh_name(wanted);
    std::string declaration =
        "const " + first.term.type.name + " " + name + " = " + lexeme_text(source_, node.first, node.last) + ";";
    size_t before = 0;
    for (const Occurrence& occurrence : occurrences) before += occurrence_text(occurrence).size();
    if (wanted == kGenericName && declaration.size() + occurrences.size() * name.size() >= before) return;
    chosen_names_.insert(name);
    size_t next_token = source_.lexemes[body_.open].last_token + 1;
    const std::string& following = source_.tokenized.tokens[next_token].whitespace;
    size_t newline = following.rfind('\n');
    declarations_ +=
        newline == std::string::npos ? " " + declaration : "\n" + following.substr(newline + 1) + declaration;
    pass_.characters_after += declaration.size();
    for (const Occurrence& occurrence : occurrences) replace(occurrence, name);
    ++pass_.expressions_extracted;
  }

  const SourceLexemes& source_;
  const std::vector<ExpressionRegion>& regions_;
  KernelBody body_;
  TokenEdits& edits_;
  IndexPass& pass_;
  std::map<std::string, ArithmeticType> parameters_;
  std::vector<std::pair<size_t, size_t>> taken_;
  std::set<std::string> chosen_names_;
  std::string declarations_;
};

}  // namespace

IndexPass extract_index_expressions(const std::string& text) {
  SourceLexemes source = lex_source(text);
  std::vector<ExpressionRegion> regions = expression_regions(source);
  TokenEdits edits = no_edits(source.tokenized);
  IndexPass pass;
  for (const KernelBody& body : kernel_bodies(source)) KernelIndexCse(source, regions, body, edits, pass).run();
  pass.text = apply_token_edits(source.tokenized, edits);
  return pass;
}

}  // namespace tailforge::cuda_refactor
