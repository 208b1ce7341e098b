#include <array>
#include <cctype>

#include "agents/ptx2cuda/refactor_syntax.h"

namespace tailforge::cuda_refactor {
namespace {

constexpr std::array<const char*, 6> kThreeCharOperators = {"<<=", ">>=", "<<<", ">>>", "...", "->*"};
constexpr std::array<const char*, 22> kTwoCharOperators = {"<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
                                                           "++", "--", "+=", "-=", "*=", "/=", "%=", "&=",
                                                           "|=", "^=", "->", "::", ".*", "##"};

const std::set<std::string>& builtin_type_names() {
  static const std::set<std::string> names = {
      "void",     "char",     "short",   "int",     "long",          "float",   "double", "bool",   "signed",
      "unsigned", "auto",     "half",    "__half",  "__nv_bfloat16", "dim3",    "float2", "float3", "float4",
      "double2",  "double3",  "double4", "int2",    "int3",          "int4",    "uint2",  "uint3",  "uint4",
      "char2",    "char4",    "uchar2",  "uchar4",  "short2",        "ushort2", "long2",  "ulong2", "uint",
      "const",    "volatile", "struct",  "__half2", "__nv_bfloat162"};
  return names;
}

bool is_type_like(const std::string& name) {
  return builtin_type_names().count(name) > 0 || (name.size() > 2 && name.compare(name.size() - 2, 2, "_t") == 0);
}

bool starts_line(const Token& token, size_t index) {
  return index == 0 || token.whitespace.find('\n') != std::string::npos;
}

// The last token of the preprocessor line starting at tokens[first] (a '#').
size_t end_of_preprocessor_line(const std::vector<Token>& tokens, size_t first) {
  size_t last = first;
  while (last + 1 < tokens.size()) {
    const Token& next = tokens[last + 1];
    bool continued = tokens[last].text == "\\";
    if (next.whitespace.find('\n') != std::string::npos && !continued) break;
    ++last;
  }
  return last;
}

// The longest operator starting at tokens[index] made of glued single-char punctuation.
size_t operator_length(const std::vector<Token>& tokens, size_t index) {
  std::string glued = tokens[index].text;
  for (size_t k = 1; k < 3 && index + k < tokens.size(); ++k) {
    const Token& next = tokens[index + k];
    if (next.kind != TokenKind::punctuation || !next.whitespace.empty()) break;
    glued += next.text;
  }
  for (const char* op : kThreeCharOperators)
    if (glued.size() >= 3 && glued.compare(0, 3, op) == 0) return 3;
  for (const char* op : kTwoCharOperators)
    if (glued.size() >= 2 && glued.compare(0, 2, op) == 0) return 2;
  return 1;
}

void note_preprocessor_line(SourceLexemes& source, size_t first, size_t last) {
  const std::vector<Token>& tokens = source.tokenized.tokens;
  if (first + 2 <= last && tokens[first + 1].text == "define") source.macro_names.insert(tokens[first + 2].text);
}

void collect_type_names(SourceLexemes& source) {
  source.type_names = builtin_type_names();
  const std::vector<Lexeme>& lexemes = source.lexemes;
  for (size_t i = 0; i + 1 < lexemes.size(); ++i) {
    const std::string& word = lexemes[i].text;
    bool introduces = word == "struct" || word == "class" || word == "union" || word == "enum" || word == "typename" ||
                      word == "using";
    if (introduces && lexemes[i + 1].kind == TokenKind::identifier) source.type_names.insert(lexemes[i + 1].text);
    if (word != "typedef") continue;
    size_t k = i + 1;
    while (k < lexemes.size() && lexemes[k].text != ";" && lexemes[k].text != "(") ++k;
    if (k < lexemes.size() && lexemes[k].text == ";" && lexemes[k - 1].kind == TokenKind::identifier)
      source.type_names.insert(lexemes[k - 1].text);
  }
}

bool is_type_like_lexeme(const SourceLexemes& source, size_t index) {
  const Lexeme& lexeme = source.lexemes[index];
  return lexeme.kind == TokenKind::identifier && (source.type_names.count(lexeme.text) || is_type_like(lexeme.text));
}

void collect_variables(SourceLexemes& source) {
  const std::vector<Lexeme>& lexemes = source.lexemes;
  for (size_t i = 1; i + 1 < lexemes.size(); ++i) {
    if (lexemes[i].kind != TokenKind::identifier || is_type_like_lexeme(source, i)) continue;
    const std::string& next = lexemes[i + 1].text;
    bool declarator_end = next == "=" || next == ";" || next == "," || next == ")" || next == "[" || next == ":";
    size_t type = i - 1;
    while (type > 0 && (lexemes[type].text == "*" || lexemes[type].text == "&")) --type;
    if (declarator_end && is_type_like_lexeme(source, type)) source.variables.insert(lexemes[i].text);
  }
}

}  // namespace

SourceLexemes lex_source(const std::string& text) {
  SourceLexemes source;
  source.tokenized = tokenize_source(text);
  const std::vector<Token>& tokens = source.tokenized.tokens;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Token& token = tokens[i];
    if (token.kind == TokenKind::comment) continue;
    if (token.text == "#" && starts_line(token, i)) {
      size_t last = end_of_preprocessor_line(tokens, i);
      note_preprocessor_line(source, i, last);
      source.lexemes.push_back({TokenKind::punctuation, "#", i, last});
      i = last;
      continue;
    }
    if (token.kind == TokenKind::identifier) source.identifiers.insert(token.text);
    size_t length = token.kind == TokenKind::punctuation ? operator_length(tokens, i) : 1;
    std::string glued;
    for (size_t k = 0; k < length; ++k) glued += tokens[i + k].text;
    source.lexemes.push_back({token.kind, glued, i, i + length - 1});
    i += length - 1;
  }
  collect_type_names(source);
  collect_variables(source);
  return source;
}

bool is_macro_name(const SourceLexemes& source, const std::string& name) {
  if (source.macro_names.count(name)) return true;
  bool has_upper = false;
  for (char c : name) {
    if (std::islower(static_cast<unsigned char>(c))) return false;
    has_upper = has_upper || std::isupper(static_cast<unsigned char>(c));
  }
  return has_upper && name.size() >= 2;
}

bool is_type_name(const SourceLexemes& source, const std::string& name) {
  return source.type_names.count(name) > 0 || is_type_like(name);
}

bool is_pragma_line(const SourceLexemes& source, size_t index) {
  const Lexeme& lexeme = source.lexemes[index];
  return lexeme.text == "#" && lexeme.first_token < lexeme.last_token &&
         source.tokenized.tokens[lexeme.first_token + 1].text == "pragma";
}

size_t matching_close(const SourceLexemes& source, size_t open, size_t end) {
  const std::string& opener = source.lexemes[open].text;
  std::string closer = opener == "(" ? ")" : opener == "[" ? "]" : "}";
  int depth = 0;
  for (size_t i = open; i < end; ++i) {
    const std::string& text = source.lexemes[i].text;
    if (text == "#" && !(opener == "{" && is_pragma_line(source, i))) return std::string::npos;
    if (text == opener) ++depth;
    if (text == closer && --depth == 0) return i;
  }
  return std::string::npos;
}

}  // namespace tailforge::cuda_refactor
