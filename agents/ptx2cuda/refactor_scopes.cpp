#include "agents/ptx2cuda/refactor_scopes.h"

#include <set>

namespace tailforge::cuda_refactor {
namespace {

bool is_storage_word(const std::string& word) {
  return word == "static" || word == "extern" || word == "register" || word == "__shared__" || word == "__constant__" ||
         word == "constexpr" || word == "__device__" || word == "__restrict__";
}

// Calls known not to write through their arguments (math and warp intrinsics take values).
bool is_pure_function(const std::string& name) {
  static const std::set<std::string> names = {"max",
                                              "min",
                                              "fmax",
                                              "fmin",
                                              "fmaxf",
                                              "fminf",
                                              "abs",
                                              "fabs",
                                              "fabsf",
                                              "exp",
                                              "expf",
                                              "__expf",
                                              "log",
                                              "logf",
                                              "__logf",
                                              "sqrt",
                                              "sqrtf",
                                              "rsqrtf",
                                              "tanh",
                                              "tanhf",
                                              "floor",
                                              "floorf",
                                              "ceil",
                                              "ceilf",
                                              "dim3",
                                              "__shfl_sync",
                                              "__shfl_down_sync",
                                              "__shfl_up_sync",
                                              "__shfl_xor_sync",
                                              "__ldg"};
  return names.count(name) > 0;
}

bool is_control_word(const std::string& word) {
  return word == "if" || word == "while" || word == "for" || word == "switch" || word == "return" || word == "sizeof";
}

}  // namespace

bool is_statement_word(const std::string& word) {
  return word == "return" || word == "case" || word == "else" || word == "do" || word == "goto" || word == "sizeof" ||
         word == "throw" || word == "new" || word == "delete";
}

std::vector<FunctionBody> device_function_bodies(const SourceLexemes& source) {
  std::vector<FunctionBody> bodies;
  const std::vector<Lexeme>& lexemes = source.lexemes;
  for (size_t i = 0; i < lexemes.size(); ++i) {
    if (lexemes[i].text != "__global__" && lexemes[i].text != "__device__") continue;
    FunctionBody body;
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

BodyScopes::BodyScopes(const SourceLexemes& source, const FunctionBody& body) : source_(source), body_(body) {
  read_parameters();
  read_block(body.open, -1, false);
  // Declarations the statement reader did not see (an `if (int x = ...)`, a lambda's parameter):
  // of unknown type, which is enough to stop a name from resolving to an outer one.
  std::set<size_t> known;
  for (const Declaration& declaration : declarations_) known.insert(declaration.at);
  for (size_t i = body.open + 2; readable_ && i < body.close; ++i) {
    const Lexeme& previous = source.lexemes[i - 1];
    if (!is_word(i) || known.count(i) || previous.kind != TokenKind::identifier || is_statement_word(previous.text))
      continue;
    int block = block_of(i);
    declarations_.push_back({text(i), "", i, blocks_[block].close});
  }
}

void BodyScopes::read_parameters() {
  size_t start = body_.parameters_open + 1;
  for (size_t i = start; i <= body_.parameters_close; ++i) {
    if (i < body_.parameters_close && text(i) != ",") continue;
    if (i >= start + 2 && is_word(i - 1)) {
      std::string type;
      bool pointer = false;
      for (size_t k = start; k + 1 < i; ++k) {
        if (text(k) == "*" || text(k) == "&" || text(k) == "[") pointer = true;
        if (is_word(k) && !is_storage_word(text(k))) type += (type.empty() ? "" : " ") + text(k);
      }
      declarations_.push_back({text(i - 1), pointer ? type + "*" : type, body_.open, body_.close});
    }
    start = i + 1;
  }
}

size_t BodyScopes::statement_end(size_t first, size_t limit) {
  auto fail = [&]() {
    readable_ = false;
    return limit - 1;
  };
  if (first >= limit) return fail();
  const std::string& word = text(first);
  if (word == "#") return first;
  if (word == "{") {
    size_t close = matching_close(source_, first, limit);
    return close == std::string::npos ? fail() : close;
  }
  bool headed = word == "if" || word == "for" || word == "while" || word == "switch";
  if (headed && first + 1 < limit && text(first + 1) == "(") {
    size_t close = matching_close(source_, first + 1, limit);
    if (close == std::string::npos) return fail();
    size_t end = statement_end(close + 1, limit);
    if (word == "if" && end + 2 < limit && text(end + 1) == "else") end = statement_end(end + 2, limit);
    return end;
  }
  if (word == "do") {
    size_t end = statement_end(first + 1, limit);
    if (end + 2 >= limit || text(end + 1) != "while" || text(end + 2) != "(") return fail();
    size_t close = matching_close(source_, end + 2, limit);
    if (close == std::string::npos || close + 1 >= limit || text(close + 1) != ";") return fail();
    return close + 1;
  }
  bool label = is_word(first) && first + 1 < limit && text(first + 1) == ":";
  if (word == "case" || word == "default" || label) {
    if (label && word != "default") has_jumps_ = true;
    size_t colon = first;
    while (colon < limit && text(colon) != ":") ++colon;
    return statement_end(colon + 1, limit);
  }
  int depth = 0;
  for (size_t i = first; i < limit; ++i) {
    const std::string& piece = text(i);
    if (piece == "(" || piece == "[" || piece == "{") ++depth;
    if ((piece == ")" || piece == "]" || piece == "}") && --depth < 0) return fail();
    if (piece == "#") return fail();
    if (piece == "goto") has_jumps_ = true;
    if (piece == ";" && depth == 0) return i;
  }
  return fail();
}

int BodyScopes::read_block(size_t open, int parent, bool is_switch) {
  size_t close = matching_close(source_, open, body_.close + 1);
  if (close == std::string::npos) {
    readable_ = false;
    return -1;
  }
  int index = static_cast<int>(blocks_.size());
  blocks_.push_back({open, close, parent, is_switch, {}});
  for (size_t i = open + 1; i < close && readable_;) {
    size_t end = statement_end(i, close);
    blocks_[index].statements.push_back({i, end});
    read_statement(i, end, index);
    i = end + 1;
  }
  return index;
}

void BodyScopes::read_statement(size_t first, size_t last, int block) {
  if (!readable_ || first > last) return;
  const std::string& word = text(first);
  if (word == "#") return;
  if (word == "{") {
    read_block(first, block, false);
    return;
  }
  bool headed = word == "if" || word == "for" || word == "while" || word == "switch";
  if (headed && text(first + 1) == "(") {
    size_t close = matching_close(source_, first + 1, last + 1);
    if (close == std::string::npos) return void(readable_ = false);
    if (word == "for") {
      size_t semicolon = first + 2;
      while (semicolon < close && text(semicolon) != ";") ++semicolon;
      read_declaration(first + 2, semicolon, last);
    }
    size_t inner = close + 1;
    if (word == "switch" && text(inner) == "{") {
      read_block(inner, block, true);
      return;
    }
    size_t inner_end = statement_end(inner, last + 1);
    read_statement(inner, inner_end, block);
    if (word == "if" && inner_end < last && text(inner_end + 1) == "else") read_statement(inner_end + 2, last, block);
    return;
  }
  if (word == "do") {
    read_statement(first + 1, statement_end(first + 1, last + 1), block);
    return;
  }
  if (word == "case" || word == "default" || (is_word(first) && text(first + 1) == ":")) {
    size_t colon = first;
    while (colon < last && text(colon) != ":") ++colon;
    read_statement(colon + 1, last, block);
    return;
  }
  read_declaration(first, last, blocks_[block].close);
}

// `[qualifiers] type declarator, declarator ...` in lexemes [first, end): each declarator's name
// with the type words, "*" for pointers and references, "[]" for arrays.
void BodyScopes::read_declaration(size_t first, size_t end, size_t scope_end) {
  size_t i = first;
  std::string type;
  bool shared = false;  // other threads write it: never read early
  while (i < end && is_word(i) && (is_storage_word(text(i)) || is_type_name(source_, text(i)))) {
    shared = shared || text(i) == "__shared__" || text(i) == "volatile";
    if (!is_storage_word(text(i))) type += (type.empty() ? "" : " ") + text(i);
    ++i;
  }
  if (type.empty()) return;
  if (shared) type = "shared " + type;
  while (i < end) {
    std::string suffix;
    for (; i < end && (text(i) == "*" || text(i) == "&" || text(i) == "__restrict__" || text(i) == "const"); ++i)
      if (text(i) == "*" || text(i) == "&") suffix = "*";
    if (i >= end || !is_word(i)) return;
    size_t name = i++;
    if (i < end && text(i) == "[") suffix = "[]";
    int depth = 0;
    for (; i < end; ++i) {
      const std::string& piece = text(i);
      if (piece == "(" || piece == "[" || piece == "{") ++depth;
      if (piece == ")" || piece == "]" || piece == "}") --depth;
      if (depth == 0 && piece == ",") break;
    }
    declarations_.push_back({text(name), type + suffix, name, scope_end});
    ++i;
  }
}

int BodyScopes::block_of(size_t at) const {
  int best = -1;
  for (size_t b = 0; b < blocks_.size(); ++b) {
    if (blocks_[b].open < at && at < blocks_[b].close && (best < 0 || blocks_[b].open > blocks_[best].open))
      best = static_cast<int>(b);
  }
  return best;
}

int BodyScopes::common_block(int a, int b) const {
  std::set<int> ancestors;
  for (int k = a; k >= 0; k = blocks_[k].parent) ancestors.insert(k);
  for (int k = b; k >= 0; k = blocks_[k].parent)
    if (ancestors.count(k)) return k;
  return -1;
}

int BodyScopes::statement_of(int block, size_t at) const {
  const auto& statements = blocks_[block].statements;
  for (size_t s = 0; s < statements.size(); ++s)
    if (statements[s].first <= at && at <= statements[s].second) return static_cast<int>(s);
  return -1;
}

const Declaration* BodyScopes::visible(const std::string& name, size_t at) const {
  const Declaration* best = nullptr;
  for (const Declaration& declaration : declarations_) {
    if (declaration.name != name || declaration.at >= at || at > declaration.scope_end) continue;
    if (!best || declaration.at > best->at) best = &declaration;
  }
  return best;
}

bool BodyScopes::address_taken(const std::string& name) const {
  for (size_t i = body_.open + 2; i < body_.close; ++i) {
    if (text(i) != name || !is_word(i) || text(i - 1) != "&") continue;
    const Lexeme& before = source_.lexemes[i - 2];
    bool operand_before = before.kind != TokenKind::punctuation || before.text == ")" || before.text == "]";
    if (!operand_before) return true;
  }
  return false;
}

bool BodyScopes::passed_to_unknown_call(size_t at) const {
  if ((text(at - 1) != "(" && text(at - 1) != ",") || (text(at + 1) != "," && text(at + 1) != ")")) return false;
  int depth = 0;
  for (size_t i = at; i > body_.open; --i) {
    if (text(i) == ")") ++depth;
    if (text(i) != "(") continue;
    if (depth-- > 0) continue;
    const Lexeme& callee = source_.lexemes[i - 1];
    if (callee.text == ">") return true;  // a template's call
    return callee.kind == TokenKind::identifier && !is_control_word(callee.text) && !is_pure_function(callee.text);
  }
  return false;
}

bool BodyScopes::may_write(const std::string& name, size_t first, size_t last) const {
  if (address_taken(name)) return true;
  for (size_t i = first; i <= last && i < body_.close; ++i) {
    if (text(i) != name || !is_word(i) || text(i - 1) == "." || text(i - 1) == "->") continue;
    const std::string& next = text(i + 1);
    const std::string& previous = text(i - 1);
    if (is_assignment_operator(next) || next == "++" || next == "--" || previous == "++" || previous == "--")
      return true;
    if (passed_to_unknown_call(i)) return true;
    for (const Declaration& declaration : declarations_)
      if (declaration.at == i) return true;
  }
  return false;
}

}  // namespace tailforge::cuda_refactor
