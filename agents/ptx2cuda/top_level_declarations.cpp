#include "agents/ptx2cuda/top_level_declarations.h"

#include <algorithm>
#include <set>

#include "agents/token_diff.h"

namespace tailforge {
namespace {

// A token that is not a comment, with where it lies in the source.
struct CodeToken {
  TokenKind kind = TokenKind::punctuation;
  std::string text;
  size_t begin = 0;          // of the token itself
  size_t comment_begin = 0;  // of the comments right before it, else == begin
  size_t end = 0;
  bool starts_line = false;
};

std::vector<CodeToken> code_tokens(const std::string& source) {
  std::vector<CodeToken> tokens;
  size_t offset = 0;
  size_t pending_comment = std::string::npos;
  for (const Token& token : tokenize_source(source).tokens) {
    size_t begin = offset + token.whitespace.size();
    bool new_line = offset == 0 || token.whitespace.find('\n') != std::string::npos;
    offset = begin + token.text.size();
    if (token.kind == TokenKind::comment) {
      if (pending_comment == std::string::npos) pending_comment = begin;
      continue;
    }
    size_t comment_begin = pending_comment == std::string::npos ? begin : pending_comment;
    tokens.push_back({token.kind, token.text, begin, comment_begin, offset, new_line});
    pending_comment = std::string::npos;
  }
  return tokens;
}

// Identifiers that take a parenthesized argument and never name what is declared.
const std::set<std::string>& attribute_words() {
  static const std::set<std::string> words = {
      "__align__",   "alignas",  "__attribute__", "__declspec", "__launch_bounds__", "__cluster_dims__",
      "__maxnreg__", "decltype", "sizeof",        "alignof",    "noexcept",          "__builtin_align__"};
  return words;
}

// Keywords that are followed by a parenthesis or a declarator but never declare a name.
const std::set<std::string>& type_keywords() {
  static const std::set<std::string> words = {"void",   "int",      "float",    "double", "char",  "bool",
                                              "long",   "short",    "unsigned", "signed", "auto",  "const",
                                              "return", "volatile", "static",   "extern", "inline"};
  return words;
}

bool is_open(const std::string& text) { return text == "(" || text == "[" || text == "{"; }
bool is_close(const std::string& text) { return text == ")" || text == "]" || text == "}"; }
char closing_of(char open) { return open == '(' ? ')' : open == '[' ? ']' : '}'; }

class DeclarationSplitter {
 public:
  explicit DeclarationSplitter(std::vector<CodeToken> tokens) : tokens_(std::move(tokens)) {}

  Status split(size_t from, size_t to, std::vector<TopLevelDeclaration>* out) {
    size_t i = from;
    while (i < to) {
      Result<TopLevelDeclaration> declaration = is_directive(i) ? directive(i) : statement(i, to);
      if (!declaration.ok()) return declaration.error();
      out->push_back(std::move(*declaration));
      i = next_index_;
    }
    return {};
  }

 private:
  bool is_directive(size_t i) const { return tokens_[i].text == "#" && tokens_[i].starts_line; }
  const std::string& text(size_t i) const {
    static const std::string none;
    return i < tokens_.size() ? tokens_[i].text : none;
  }
  bool is_identifier(size_t i) const { return i < tokens_.size() && tokens_[i].kind == TokenKind::identifier; }

  Error unbalanced(size_t i) const {
    return make_error("unbalanced '" + text(i) + "' at byte " + std::to_string(tokens_[i].begin));
  }

  size_t directive_end(size_t i) const {
    size_t j = i;
    while (j + 1 < tokens_.size() && (!tokens_[j + 1].starts_line || tokens_[j].text == "\\")) ++j;
    return j;
  }

  // The index of the bracket closing the one at `open`, skipping preprocessor lines inside.
  Result<size_t> matching_close(size_t open) const {
    std::string expected(1, closing_of(text(open)[0]));
    for (size_t k = open + 1; k < tokens_.size(); ++k) {
      if (is_directive(k)) {
        k = directive_end(k);
      } else if (is_open(text(k))) {
        Result<size_t> inner = matching_close(k);
        if (!inner.ok()) return inner;
        k = *inner;
      } else if (text(k) == expected) {
        return k;
      } else if (is_close(text(k))) {
        return unbalanced(k);
      }
    }
    return unbalanced(open);
  }

  // The index of the '>' closing the '<' at `open`; brackets inside are skipped whole.
  Result<size_t> matching_angle(size_t open) const {
    int depth = 0;
    for (size_t k = open; k < tokens_.size(); ++k) {
      if (text(k) == "(" || text(k) == "[") {
        Result<size_t> close = matching_close(k);
        if (!close.ok()) return close;
        k = *close;
      } else if (text(k) == "<") {
        ++depth;
      } else if (text(k) == ">" && --depth == 0) {
        return k;
      } else if (text(k) == ";" || text(k) == "{") {
        break;
      }
    }
    return unbalanced(open);
  }

  TopLevelDeclaration declaration_over(size_t first, size_t last, DeclarationKind kind) {
    TopLevelDeclaration declaration;
    declaration.kind = kind;
    declaration.begin = tokens_[first].comment_begin;
    declaration.end = tokens_[last].end;
    for (size_t k = first; k <= last; ++k) {
      if (is_identifier(k)) declaration.mentioned_names.push_back(text(k));
    }
    next_index_ = last + 1;
    return declaration;
  }

  TopLevelDeclaration directive(size_t i) {
    size_t last = directive_end(i);
    TopLevelDeclaration declaration = declaration_over(i, last, DeclarationKind::preprocessor);
    if (text(i + 1) == "define" && is_identifier(i + 2)) {
      declaration.declared_names.push_back(text(i + 2));
      declaration.mentioned_names.erase(declaration.mentioned_names.begin(), declaration.mentioned_names.begin() + 2);
    }
    return declaration;
  }

  // Skips `template <...>` headers from `i`; returns the first token after them.
  Result<size_t> skip_template_headers(size_t i, TopLevelDeclaration* declaration) const {
    while (text(i) == "template") {
      if (text(i + 1) != "<") {
        declaration->is_explicit_instantiation = true;
        return i + 1;
      }
      Result<size_t> close = matching_angle(i + 1);
      if (!close.ok()) return close;
      if (*close > i + 2) declaration->is_template = true;
      i = *close + 1;
    }
    return i;
  }

  bool opens_block(size_t head, size_t brace) const {
    if (text(head) == "inline") ++head;
    if (text(head) == "namespace") return true;
    return text(head) == "extern" && tokens_[head + 1].kind == TokenKind::string_literal && brace == head + 2;
  }

  // A parenthesis that is a parameter or argument list, not an attribute's.
  bool is_call_paren(size_t paren) const { return paren == 0 || !attribute_words().count(text(paren - 1)); }

  Result<TopLevelDeclaration> statement(size_t i, size_t to) {
    TopLevelDeclaration flags;
    Result<size_t> head = skip_template_headers(i, &flags);
    if (!head.ok()) return head.error();
    bool saw_equals = false, saw_call_paren = false;
    for (size_t k = *head; k < to; ++k) {
      if (is_directive(k)) {
        k = directive_end(k);
        continue;
      }
      if (is_close(text(k))) return unbalanced(k);
      if (text(k) == "=") saw_equals = true;
      if (text(k) == ";") return finish_statement(i, *head, k, flags);
      if (!is_open(text(k))) continue;
      if (text(k) == "(" && is_call_paren(k)) saw_call_paren = true;
      Result<size_t> close = matching_close(k);
      if (!close.ok()) return close.error();
      if (text(k) == "{" && opens_block(*head, k)) return block(i, *head, k, *close);
      if (text(k) == "{" && !saw_equals && saw_call_paren) {
        flags.has_body = true;
        return finish_statement(i, *head, *close, flags);
      }
      k = *close;
    }
    return make_error("declaration without ';' or body at byte " + std::to_string(tokens_[i].begin));
  }

  Result<TopLevelDeclaration> block(size_t first, size_t head, size_t open, size_t close) {
    TopLevelDeclaration declaration = declaration_over(first, close, DeclarationKind::block);
    if (text(head) == "namespace" && is_identifier(head + 1)) declaration.declared_names.push_back(text(head + 1));
    std::vector<TopLevelDeclaration> inner;
    Status status = split(open + 1, close, &inner);
    if (!status.ok()) return status.error();
    for (const TopLevelDeclaration& part : inner) {
      declaration.contains_kernel = declaration.contains_kernel || part.is_kernel || part.contains_kernel;
      for (const std::string& name : part.declared_names) declaration.declared_names.push_back(name);
    }
    next_index_ = close + 1;
    return declaration;
  }

  TopLevelDeclaration finish_statement(size_t first, size_t head, size_t last, const TopLevelDeclaration& flags) {
    TopLevelDeclaration declaration = declaration_over(first, last, DeclarationKind::other);
    declaration.has_body = flags.has_body;
    declaration.is_template = flags.is_template;
    declaration.is_explicit_instantiation = flags.is_explicit_instantiation;
    name_statement(head, last, &declaration);
    if (declaration.has_body) {
      declaration.kind = DeclarationKind::function;
      for (size_t k = head; k < last && text(k) != "{"; ++k) {
        if (text(k) == "__global__") declaration.is_kernel = true;
      }
    }
    return declaration;
  }

  void name_statement(size_t head, size_t last, TopLevelDeclaration* declaration) const {
    const std::string& word = text(head);
    if (word == "using" && text(head + 1) == "namespace") {
      declaration->kind = DeclarationKind::using_directive;
    } else if (word == "using" || word == "namespace") {
      declaration->kind = DeclarationKind::type;
      declaration->declared_names = {text(head + 1)};
      if (text(head + 2) != "=") declaration->declared_names = {last_identifier(head, last)};
    } else if (word == "typedef") {
      declaration->kind = DeclarationKind::type;
      declaration->declared_names = typedef_names(head + 1, last);
    } else if (!declaration->has_body && (word == "struct" || word == "class" || word == "union" || word == "enum")) {
      declaration->kind = DeclarationKind::type;
      declaration->declared_names = type_names(head + 1, last);
    } else {
      declaration->kind = DeclarationKind::variable;
      declaration->declared_names = declarator_names(head, last);
    }
  }

  std::string last_identifier(size_t from, size_t to) const {
    std::string name;
    for (size_t k = from; k < to; ++k) {
      if (is_identifier(k)) name = text(k);
    }
    return name;
  }

  // After a closing brace (or from the start when there is none), the identifiers before ; , [ ).
  std::vector<std::string> typedef_names(size_t from, size_t last) const {
    std::vector<std::string> names;
    for (size_t k = from; k < last; ++k) {
      if (text(k) == "{") names.clear();
      const std::string& next = text(k + 1);
      if (is_identifier(k) && (next == ";" || next == "," || next == "[" || next == ")")) names.push_back(text(k));
      if (text(k) == "{" || text(k) == "[") k = matching_close(k).ok() ? *matching_close(k) : k;
    }
    return names;
  }

  // struct/class/union/enum: its name, its enumerators, and the variables declared after it.
  std::vector<std::string> type_names(size_t from, size_t last) const {
    std::vector<std::string> names;
    size_t k = from;
    while (k < last && (text(k) == "class" || text(k) == "struct" || attribute_words().count(text(k)))) {
      k = text(k + 1) == "(" && matching_close(k + 1).ok() ? *matching_close(k + 1) + 1 : k + 1;
    }
    if (is_identifier(k)) names.push_back(text(k));
    size_t brace = k;
    while (brace < last && text(brace) != "{") ++brace;
    if (brace >= last) return names;
    size_t close = matching_close(brace).ok() ? *matching_close(brace) : last;
    for (size_t e = brace + 1; e < close; ++e) {
      const std::string& next = text(e + 1);
      bool enumerator = is_identifier(e) && (next == "," || next == "=" || next == "}") && text(e - 1) != "=";
      if (text(from - 1) == "enum" && enumerator) names.push_back(text(e));
    }
    std::vector<std::string> variables = declarator_names(close + 1, last);
    names.insert(names.end(), variables.begin(), variables.end());
    return names;
  }

  // The names a function or variable declaration introduces (see the header's contract).
  std::vector<std::string> declarator_names(size_t from, size_t last) const;

  std::vector<std::string> operator_names(size_t operator_index, size_t last) const {
    std::vector<std::string> names;
    size_t paren = operator_index + 1;
    while (paren < last && text(paren) != "(") ++paren;
    if (text(paren) == "(" && paren == operator_index + 1) ++paren;  // operator()
    while (paren < last && text(paren) != "(") ++paren;
    size_t close = paren < last && matching_close(paren).ok() ? *matching_close(paren) : paren;
    for (size_t k = paren; k < close; ++k) {
      if (is_identifier(k) && !type_keywords().count(text(k))) names.push_back(text(k));
    }
    return names;
  }

  std::vector<CodeToken> tokens_;
  size_t next_index_ = 0;
};

std::vector<std::string> DeclarationSplitter::declarator_names(size_t from, size_t last) const {
  std::vector<std::string> names;
  bool in_initializer = false;
  for (size_t k = from; k < last; ++k) {
    const std::string& next = text(k + 1);
    if (text(k) == "=") in_initializer = true;
    if (text(k) == ",") in_initializer = false;
    if (is_open(text(k))) {
      k = matching_close(k).ok() ? *matching_close(k) : k;
      continue;
    }
    if (in_initializer || !is_identifier(k) || type_keywords().count(text(k))) continue;
    if (text(k) == "operator") return operator_names(k, last);
    if (attribute_words().count(text(k))) {
      if (next == "(") k = matching_close(k + 1).ok() ? *matching_close(k + 1) : k;
      continue;
    }
    bool template_call = false;
    if (next == "<") {
      Result<size_t> close = matching_angle(k + 1);
      template_call = close.ok() && text(*close + 1) == "(";
      if (!template_call) {
        k = close.ok() ? *close : k;
        continue;
      }
    }
    bool declares =
        template_call || next == "(" || next == "[" || next == "=" || next == ";" || next == "," || next == "{";
    if (!declares) continue;
    names.push_back(text(k));
    if (template_call || next == "(") {
      if (k >= 3 && text(k - 1) == ":" && text(k - 2) == ":" && is_identifier(k - 3)) names.push_back(text(k - 3));
      return names;
    }
  }
  return names;
}

}  // namespace

Result<std::vector<TopLevelDeclaration>> split_top_level_declarations(const std::string& source) {
  std::vector<CodeToken> tokens = code_tokens(source);
  size_t count = tokens.size();
  DeclarationSplitter splitter(std::move(tokens));
  std::vector<TopLevelDeclaration> declarations;
  Status status = splitter.split(0, count, &declarations);
  if (!status.ok()) return status.error();
  return declarations;
}

std::string declaration_label(const std::string& source, const TopLevelDeclaration& declaration) {
  if (!declaration.declared_names.empty()) return declaration.declared_names.front();
  std::string text = source.substr(declaration.begin, declaration.end - declaration.begin);
  size_t code = text.find_first_not_of(" \t\n");
  text = text.substr(code == std::string::npos ? 0 : code);
  return text.substr(0, std::min(text.find('\n'), size_t{60}));
}

}  // namespace tailforge
