// Finds the expressions inside statements: splits the text at ';', '{', '}' and preprocessor
// lines outside brackets, peels labels and keywords, and keeps what parses.
#include "agents/ptx2cuda/refactor_syntax.h"

namespace tailforge::cuda_refactor {
namespace {

bool is_declaration_head_word(const std::string& word) {
  return word != "using" && word != "typedef" && word != "template" && word != "static_assert" && word != "return" &&
         word != "goto";
}

class RegionFinder {
 public:
  explicit RegionFinder(const SourceLexemes& source) : source_(source) {}

  std::vector<ExpressionRegion> find() {
    const std::vector<Lexeme>& lexemes = source_.lexemes;
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i < lexemes.size(); ++i) {
      const std::string& text = lexemes[i].text;
      if (text == "(" || text == "[") ++depth;
      if ((text == ")" || text == "]") && depth > 0) --depth;
      bool separator = text == ";" || text == "{" || text == "}" || text == "#";
      if (!separator || (depth > 0 && text != "#")) continue;
      statement(start, i, text == ";");
      start = i + 1;
      depth = 0;
    }
    return std::move(regions_);
  }

 private:
  const std::string& text(size_t index) const { return source_.lexemes[index].text; }
  bool is_word(size_t index) const { return source_.lexemes[index].kind == TokenKind::identifier; }

  // The first lexeme after labels, `case ...:`, `else` and `do`.
  size_t skip_prefixes(size_t begin, size_t end) const {
    while (begin < end) {
      if (text(begin) == "else" || text(begin) == "do") {
        ++begin;
      } else if (text(begin) == "case") {
        size_t colon = begin;
        while (colon < end && text(colon) != ":") ++colon;
        begin = colon + 1;
      } else if (begin + 1 < end && is_word(begin) && text(begin + 1) == ":") {
        begin += 2;
      } else {
        break;
      }
    }
    return begin;
  }

  void statement(size_t begin, size_t end, bool ends_with_semicolon) {
    begin = skip_prefixes(begin, end);
    if (begin >= end) return;
    const std::string& first = text(begin);
    if ((first == "if" || first == "while" || first == "switch" || first == "for") && begin + 1 < end &&
        text(begin + 1) == "(") {
      size_t close = matching_close(source_, begin + 1, end);
      if (close == std::string::npos) return;
      if (first == "for")
        for_header(begin + 2, close);
      else
        expression(begin + 2, close);
      statement(close + 1, end, ends_with_semicolon);
      return;
    }
    if (!ends_with_semicolon) return;
    if (first == "return") {
      expression(begin + 1, end);
      return;
    }
    simple_statement(begin, end);
  }

  void for_header(size_t begin, size_t end) {
    std::vector<size_t> semicolons;
    int depth = 0;
    for (size_t i = begin; i < end; ++i) {
      if (text(i) == "(" || text(i) == "[") ++depth;
      if (text(i) == ")" || text(i) == "]") --depth;
      if (depth == 0 && text(i) == ";") semicolons.push_back(i);
    }
    if (semicolons.size() != 2) return;
    simple_statement(begin, semicolons[0]);
    expression(semicolons[0] + 1, semicolons[1]);
    expression(semicolons[1] + 1, end);
  }

  void simple_statement(size_t begin, size_t end) {
    if (begin >= end || expression(begin, end)) return;
    size_t equals = begin;
    int depth = 0;
    for (; equals < end; ++equals) {
      if (text(equals) == "(" || text(equals) == "[") ++depth;
      if (text(equals) == ")" || text(equals) == "]") --depth;
      if (depth == 0 && text(equals) == "=") break;
    }
    if (equals == end || !is_declaration_head(begin, equals)) return;
    ExpressionRegion* region = expression(equals + 1, end);
    if (!region || region->tree.nodes[region->tree.root].op == ",") return;
    region->declared_name = text(equals - 1);
    for (size_t i = begin; i + 1 < equals; ++i) region->declared_type += (i == begin ? "" : " ") + text(i);
  }

  // `[qualifiers] type [*&] name`: words, '::', '*', '&' and angle brackets, a word last.
  bool is_declaration_head(size_t begin, size_t end) const {
    if (end < begin + 2 || !is_word(end - 1) || !is_declaration_head_word(text(begin))) return false;
    for (size_t i = begin; i < end; ++i) {
      const std::string& piece = text(i);
      if (!is_word(i) && piece != "*" && piece != "&" && piece != "::" && piece != "<" && piece != ">" && piece != ",")
        return false;
    }
    return true;
  }

  // A `<` before a `>`: template arguments the parser cannot tell from comparisons.
  bool has_angle_ambiguity(size_t begin, size_t end) const {
    bool opened = false;
    for (size_t i = begin; i < end; ++i) {
      const std::string& piece = text(i);
      if (piece == "<<<" || piece == ">>>") return true;
      if (piece == "<") opened = true;
      if (opened && (piece == ">" || piece == ">>" || piece == ">=" || piece == ">>=")) return true;
    }
    return false;
  }

  ExpressionRegion* expression(size_t begin, size_t end) {
    if (begin >= end || has_angle_ambiguity(begin, end)) return nullptr;
    std::optional<ExpressionTree> tree = parse_expression(source_, begin, end);
    if (!tree) return nullptr;
    regions_.push_back({begin, end, std::move(*tree), "", ""});
    return &regions_.back();
  }

  const SourceLexemes& source_;
  std::vector<ExpressionRegion> regions_;
};

}  // namespace

std::vector<ExpressionRegion> expression_regions(const SourceLexemes& source) { return RegionFinder(source).find(); }

}  // namespace tailforge::cuda_refactor
