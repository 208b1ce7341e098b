#include "agents/translate/header_names.h"

#include <cctype>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "text/chars.h"

namespace tailforge {
namespace {

// Lookahead bounds: what a header needs is a few tokens; hostile input costs at most these per token.
constexpr size_t kMaxTagLookahead = 64;
constexpr size_t kMaxGroupTokens = 256;
constexpr size_t kExpansionBudgetPerToken = 16;

using text::is_identifier_start;
using text::is_identifier_char;

// The text with comments and string/character literals blanked to spaces, newlines kept. A
// literal ends at its closing quote or at the end of its line; an unterminated comment blanks the rest.
std::string code_only(std::string_view text) {
  std::string out(text);
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n') {
        bool continued = text[i] == '\\' && i + 1 < n && text[i + 1] == '\n';
        out[i] = ' ';
        i += continued ? 2 : 1;  // a backslash-newline continues the comment onto the next line
      }
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      out[i] = out[i + 1] = ' ';
      i += 2;
      while (i < n && !(text[i] == '*' && i + 1 < n && text[i + 1] == '/')) {
        if (text[i] != '\n') out[i] = ' ';
        ++i;
      }
      if (i < n) {
        out[i] = out[i + 1] = ' ';
        i += 2;
      }
    } else if (c == '"' || (c == '\'' && !(i > 0 && std::isalnum(static_cast<unsigned char>(text[i - 1]))))) {
      // A quote after a digit or letter is a digit separator (1'000) or a prefixed literal's (u8'a'),
      // which is then read as code, harmlessly.
      ++i;
      while (i < n && text[i] != c && text[i] != '\n') {
        bool escaped = text[i] == '\\' && i + 1 < n && text[i + 1] != '\n';
        out[i] = ' ';
        if (escaped) out[i + 1] = ' ';
        i += escaped ? 2 : 1;
      }
      if (i < n && text[i] == c) ++i;
    } else {
      ++i;
    }
  }
  return out;
}

struct HeaderToken {
  enum Kind { identifier, number, punctuation, macro_definition } kind;
  std::string text;  // for macro_definition: the macro's name
  size_t macro = 0;  // for macro_definition: index into HeaderTokens::macros
};

// A function-like macro whose body declares something (struct, typedef, ...).
struct DeclaringMacro {
  std::unordered_map<std::string, size_t> parameters;  // name -> position
  std::vector<HeaderToken> body;
};

struct HeaderTokens {
  std::vector<HeaderToken> tokens;
  std::vector<DeclaringMacro> macros;
};

// Appends the tokens of `code` (directives are read by read_directive, never tokenized here).
void tokenize_line(std::string_view code, std::vector<HeaderToken>& out) {
  size_t i = 0, n = code.size();
  while (i < n) {
    char c = code[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (is_identifier_start(c)) {
      size_t end = i;
      while (end < n && is_identifier_char(code[end])) ++end;
      out.push_back({HeaderToken::identifier, std::string(code.substr(i, end - i))});
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t end = i + 1;
      while (end < n && (is_identifier_char(code[end]) || code[end] == '.' ||
                         ((code[end] == '+' || code[end] == '-') &&
                          std::string_view("eEpP").find(code[end - 1]) != std::string_view::npos)))
        ++end;
      out.push_back({HeaderToken::number, std::string(code.substr(i, end - i))});
      i = end;
    } else if (c == '#' && i + 1 < n && code[i + 1] == '#') {
      out.push_back({HeaderToken::punctuation, "##"});
      i += 2;
    } else {
      out.push_back({HeaderToken::punctuation, std::string(1, c)});
      ++i;
    }
  }
}

bool declares_something(const std::vector<HeaderToken>& body) {
  static const std::unordered_set<std::string> words = {"struct", "union", "enum", "class", "typedef", "using"};
  for (const HeaderToken& token : body)
    if (token.kind == HeaderToken::identifier && words.count(token.text)) return true;
  return false;
}

// Reads the directive starting at `code[hash]` (its logical line, continuations joined) and returns
// the position after it. A #define adds its name to `names`; a function-like one whose body
// declares something is kept in `tokens.macros`, marked in the stream where it was defined.
size_t read_directive(std::string_view code, size_t hash, HeaderTokens& tokens, std::set<std::string>& names) {
  std::string line;
  size_t i = hash + 1, n = code.size();
  while (i < n && code[i] != '\n') {
    if (code[i] == '\\' && i + 1 < n && code[i + 1] == '\n') {
      line += ' ';
      i += 2;
      continue;
    }
    line += code[i++];
  }
  size_t p = 0;
  while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
  if (line.compare(p, 6, "define") != 0 || (p + 6 < line.size() && is_identifier_char(line[p + 6]))) return i;
  p += 6;
  while (p < line.size() && (line[p] == ' ' || line[p] == '\t')) ++p;
  size_t name_end = p;
  while (name_end < line.size() && is_identifier_char(line[name_end])) ++name_end;
  if (name_end == p || !is_identifier_start(line[p])) return i;
  std::string name = line.substr(p, name_end - p);
  names.insert(name);
  if (name_end >= line.size() || line[name_end] != '(') return i;  // object-like: its body is a use
  size_t close = line.find(')', name_end);
  if (close == std::string::npos) return i;
  DeclaringMacro macro;
  std::vector<HeaderToken> parameters;
  tokenize_line(std::string_view(line).substr(name_end + 1, close - name_end - 1), parameters);
  size_t position = 0;
  for (const HeaderToken& token : parameters) {
    if (token.text == ",") ++position;
    if (token.kind == HeaderToken::identifier) macro.parameters.emplace(token.text, position);
    if (token.text == ".") macro.parameters.emplace("__VA_ARGS__", position);  // ...
  }
  tokenize_line(std::string_view(line).substr(close + 1), macro.body);
  if (!declares_something(macro.body)) return i;
  tokens.tokens.push_back({HeaderToken::macro_definition, name, tokens.macros.size()});
  tokens.macros.push_back(std::move(macro));
  return i;
}

HeaderTokens tokenize(std::string_view code, std::set<std::string>& names) {
  HeaderTokens tokens;
  size_t i = 0, n = code.size();
  bool line_start = true;
  while (i < n) {
    char c = code[i];
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (line_start && c == '#') {
      i = read_directive(code, i, tokens, names);
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    // The rest of the line is code (a '#' inside it is punctuation, no directive).
    size_t end = code.find('\n', i);
    if (end == std::string_view::npos) end = n;
    tokenize_line(code.substr(i, end - i), tokens.tokens);
    line_start = false;
    i = end;
  }
  return tokens;
}

const std::unordered_set<std::string>& keywords() {
  // clang-format off
  static const std::unordered_set<std::string> words = {
      "if", "while", "for", "switch", "return", "sizeof", "alignof", "decltype", "defined", "static_assert",
      "noexcept", "throw", "catch", "typeid", "operator", "template", "typename", "new", "delete", "case",
      "do", "else", "goto", "const", "volatile", "auto", "void", "int", "char", "short", "long", "float",
      "double", "bool", "signed", "unsigned", "struct", "union", "enum", "class", "typedef", "using",
      "static", "extern", "inline", "constexpr", "explicit", "virtual", "public", "private", "protected",
      "namespace", "asm", "__asm__", "__asm", "typeof", "__typeof__", "_Pragma", "__pragma", "_Alignas",
      "alignas", "__attribute__", "__attribute", "__declspec", "__align__", "__builtin_align__", "static_cast",
      "const_cast", "reinterpret_cast", "dynamic_cast", "this", "true", "false", "nullptr", "default"};
  // clang-format on
  return words;
}

bool is_attribute(const std::string& word) {
  static const std::unordered_set<std::string> words = {"__attribute__", "__attribute", "__declspec",       "alignas",
                                                        "_Alignas",      "__align__",   "__builtin_align__"};
  return words.count(word) > 0;
}

class DeclarationScanner {
 public:
  DeclarationScanner(std::set<std::string>& names, size_t& expansion_budget)
      : names_(names), expansion_budget_(expansion_budget) {}

  // `macros`: the text's declaring macros; null while scanning an expansion (not expanded again).
  void scan(const std::vector<HeaderToken>& tokens, const std::vector<DeclaringMacro>* macros) {
    tokens_ = &tokens;
    for (size_t i = 0; i < tokens.size(); ++i) {
      const HeaderToken& token = tokens[i];
      if (token.kind == HeaderToken::macro_definition) {
        if (macros) known_macros_[token.text] = token.macro;
      } else if (token.kind == HeaderToken::punctuation) {
        punctuation(token.text);
      } else if (token.kind == HeaderToken::identifier) {
        i = identifier(i, macros);
      }
    }
  }

 private:
  const std::string& text_at(size_t i) const {
    static const std::string none;
    return i < tokens_->size() ? (*tokens_)[i].text : none;
  }
  bool is_identifier_at(size_t i) const { return i < tokens_->size() && (*tokens_)[i].kind == HeaderToken::identifier; }

  // The index of the ')' closing the '(' at `open`, or npos past the bound.
  size_t group_end(size_t open) const {
    int depth = 0;
    for (size_t j = open; j < tokens_->size() && j - open <= kMaxGroupTokens; ++j) {
      if (text_at(j) == "(") ++depth;
      if (text_at(j) == ")" && --depth == 0) return j;
    }
    return std::string::npos;
  }

  bool at_typedef_level() const { return in_typedef_ && braces_.size() == typedef_braces_; }
  bool at_enum_level() const { return !braces_.empty() && braces_.back().is_enum && braces_.back().parens == parens_; }

  void add(const std::string& name) {
    if (!keywords().count(name)) names_.insert(name);
  }

  void punctuation(const std::string& p) {
    if (p == "{") {
      braces_.push_back({enum_pending_, parens_});
      enumerator_next_ = enum_pending_;
      enum_pending_ = false;
    } else if (p == "}") {
      if (!braces_.empty()) braces_.pop_back();
      enumerator_next_ = false;
    } else if (p == "(") {
      enum_pending_ = false;  // `enum E f(...) {`: the braces are a function body
      if (at_typedef_level() && parens_ == 0) {
        typedef_is_function_ = true;
        ++typedef_groups_;
      }
      ++parens_;
    } else if (p == ")") {
      if (parens_ > 0) --parens_;
    } else if (p == ",") {
      if (at_enum_level()) enumerator_next_ = true;
      if (at_typedef_level() && parens_ == 0) end_typedef_declarator();
    } else if (p == ";") {
      enum_pending_ = false;
      if (at_typedef_level()) {
        if (parens_ == 0) end_typedef_declarator();
        in_typedef_ = false;
      }
    }
  }

  void end_typedef_declarator() {
    if (!typedef_is_function_ && !typedef_name_.empty()) add(typedef_name_);
    typedef_name_.clear();
    typedef_is_function_ = false;
    typedef_groups_ = 0;
  }

  // Handles the identifier at `i`; returns the index of the last token it consumed.
  size_t identifier(size_t i, const std::vector<DeclaringMacro>* macros) {
    const std::string& word = text_at(i);
    bool call = text_at(i + 1) == "(";
    if (is_attribute(word) && call) {  // __attribute__((...)), alignas(16): skipped whole
      size_t end = group_end(i + 1);
      if (end != std::string::npos) return end;
    }
    if (call && macros) {
      if (auto it = known_macros_.find(word); it != known_macros_.end()) {
        size_t end = expand(i, (*macros)[it->second]);
        if (end != std::string::npos) return end;
      }
    }
    if (word == "struct" || word == "union" || word == "class" || word == "enum") {
      tag_name(i);
      if (word == "enum") enum_pending_ = true;
    } else if (word == "typedef") {
      in_typedef_ = true;
      typedef_braces_ = braces_.size();
      typedef_name_.clear();
      typedef_is_function_ = false;
      typedef_groups_ = 0;
    } else if (word == "using" && is_identifier_at(i + 1) && text_at(i + 2) == "=") {
      add(text_at(i + 1));
    }
    if (call) add(word);
    if (enumerator_next_ && at_enum_level()) add(word);
    enumerator_next_ = false;
    if (at_typedef_level() && parens_ == 0 && !keywords().count(word) && !call) typedef_name_ = word;
    // `typedef R (*name)(...)`, `(CUDA_CB *name)`: in the declarator's first group only (not a parameter).
    if (at_typedef_level() && parens_ == 1 && typedef_groups_ == 1 && text_at(i - 1) == "*" && text_at(i + 1) == ")")
      add(word);
    return i;
  }

  // After struct/union/class/enum at `keyword`: a run of identifiers (attribute macros, `enum class`)
  // and parenthesized attribute groups. Before '{' or ':' the tag is the run's last identifier
  // (`struct __device_builtin__ float4 {`); elsewhere its first (`struct cudaFoo var;`).
  void tag_name(size_t keyword) {
    std::vector<size_t> run;
    size_t j = keyword + 1;
    while (j < tokens_->size() && j - keyword <= kMaxTagLookahead) {
      if (text_at(j) == "(" && !run.empty()) {
        size_t end = group_end(j);
        if (end == std::string::npos) return;
        run.pop_back();  // CUDA_ALIGN(8), __builtin_align__(16): an attribute, not the tag
        j = end + 1;
        continue;
      }
      if (!is_identifier_at(j)) break;
      if (text_at(j) != "class" && text_at(j) != "struct") run.push_back(j);
      ++j;
    }
    if (run.empty()) return;
    const std::string& after = text_at(j);
    if (after == "{" || after == ":") return add(text_at(run.back()));
    for (size_t k : run)  // the first that is no attribute macro (__device_builtin__)
      if (text_at(k).rfind("__", 0) != 0) return add(text_at(k));
    add(text_at(run.front()));
  }

  // Expands the invocation of `macro` at `name` and scans what it declares. Returns the index of
  // the invocation's ')' or npos when its arguments do not close within the bound or the budget is spent.
  size_t expand(size_t name, const DeclaringMacro& macro) {
    size_t end = group_end(name + 1);
    if (end == std::string::npos) return end;
    std::vector<std::vector<HeaderToken>> arguments(1);
    int depth = 0;
    for (size_t j = name + 2; j < end; ++j) {
      const HeaderToken& token = (*tokens_)[j];
      if (token.text == "(") ++depth;
      if (token.text == ")") --depth;
      if (token.text == "," && depth == 0) {
        arguments.emplace_back();
        continue;
      }
      arguments.back().push_back(token);
    }
    auto argument_of = [&](const std::string& word) -> const std::vector<HeaderToken>* {
      auto it = macro.parameters.find(word);
      return it == macro.parameters.end() || it->second >= arguments.size() ? nullptr : &arguments[it->second];
    };
    std::vector<HeaderToken> expansion;
    const std::vector<HeaderToken>& body = macro.body;
    for (size_t k = 0; k < body.size(); ++k) {
      const HeaderToken& token = body[k];
      if (token.text == "#") {  // stringizing: a literal, no name
        ++k;
        continue;
      }
      if (token.text == "##" && k + 1 < body.size() && !expansion.empty()) {
        const HeaderToken& right = body[++k];
        const std::vector<HeaderToken>* argument = argument_of(right.text);
        std::string pasted = argument ? (argument->empty() ? "" : argument->front().text) : right.text;
        expansion.back().text += pasted;
        if (argument && argument->size() > 1) expansion.insert(expansion.end(), argument->begin() + 1, argument->end());
        continue;
      }
      if (const std::vector<HeaderToken>* argument = token.kind == HeaderToken::identifier ? argument_of(token.text) : nullptr) {
        expansion.insert(expansion.end(), argument->begin(), argument->end());
      } else {
        expansion.push_back(token);
      }
      if (expansion.size() > expansion_budget_) return std::string::npos;
    }
    expansion_budget_ -= expansion.size();
    std::set<std::string> found;
    DeclarationScanner inner(found, expansion_budget_);
    inner.scan(expansion, nullptr);
    for (const std::string& declared : found) add(declared);
    return end;
  }

  struct Brace {
    bool is_enum;
    int parens;
  };

  std::set<std::string>& names_;
  size_t& expansion_budget_;
  const std::vector<HeaderToken>* tokens_ = nullptr;
  std::unordered_map<std::string, size_t> known_macros_;
  std::vector<Brace> braces_;
  int parens_ = 0;
  bool enum_pending_ = false;     // `enum` seen, its body not opened yet
  bool enumerator_next_ = false;  // the next identifier at the enum body's level names a constant
  bool in_typedef_ = false;
  size_t typedef_braces_ = 0;
  std::string typedef_name_;  // the last identifier of the current typedef declarator
  bool typedef_is_function_ = false;
  int typedef_groups_ = 0;  // parenthesized groups opened at the typedef's level in this declarator
};

}  // namespace

void scan_declared_names(std::string_view text, std::set<std::string>& names) {
  std::string code = code_only(text);
  HeaderTokens tokens = tokenize(code, names);
  size_t budget = kExpansionBudgetPerToken * tokens.tokens.size() + 4096;
  DeclarationScanner scanner(names, budget);
  scanner.scan(tokens.tokens, &tokens.macros);
}

}  // namespace tailforge
