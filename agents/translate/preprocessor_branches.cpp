#include "agents/translate/preprocessor_branches.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <string_view>

#include "text/chars.h"

namespace tailforge {

namespace {

enum class Tri { kFalse, kTrue, kUnknown };

struct Value {
  bool known = true;
  long long number = 0;
};

Value unknown() { return {false, 0}; }
Value known(long long number) { return {true, number}; }

using text::is_identifier_start;
using text::is_identifier_char;

enum class MacroLookup { kUndefined, kDefined, kMaybe };

// The macros as the directives so far left them, on top of the environment.
class Macros {
 public:
  explicit Macros(const MacroEnvironment& environment) : environment_(environment) {}

  MacroLookup lookup(const std::string& name, const MacroState** state) const {
    if (auto it = local_.find(name); it != local_.end()) {
      if (!it->second) return MacroLookup::kUndefined;
      *state = &*it->second;
      return it->second->kind == MacroState::kMaybe ? MacroLookup::kMaybe : MacroLookup::kDefined;
    }
    if (auto it = environment_.macros.find(name); it != environment_.macros.end()) {
      *state = &it->second;
      return it->second.kind == MacroState::kMaybe ? MacroLookup::kMaybe : MacroLookup::kDefined;
    }
    for (const std::string& prefix : environment_.maybe_prefixes)
      if (name.compare(0, prefix.size(), prefix) == 0) return MacroLookup::kMaybe;
    if (environment_.maybe_names && environment_.maybe_names->count(name)) return MacroLookup::kMaybe;
    return MacroLookup::kUndefined;
  }

  // #ifdef NAME (wanted defined) or #ifndef NAME, in three values.
  Tri test(const std::string& name, bool want_defined) const {
    const MacroState* found = nullptr;
    MacroLookup lookup = this->lookup(name, &found);
    if (lookup == MacroLookup::kMaybe) return Tri::kUnknown;
    return (lookup == MacroLookup::kDefined) == want_defined ? Tri::kTrue : Tri::kFalse;
  }
  void define(const std::string& name, MacroState state) { local_[name] = state; }
  void undefine(const std::string& name) { local_[name] = std::nullopt; }

 private:
  const MacroEnvironment& environment_;
  std::unordered_map<std::string, std::optional<MacroState>> local_;
};

struct ConditionToken {
  enum Kind { kNumber, kIdentifier, kOperator, kEnd } kind = kEnd;
  std::string text;
  long long number = 0;
  bool bad = false;  // a number that does not parse
};

std::vector<ConditionToken> tokenize(std::string_view text) {
  std::vector<ConditionToken> tokens;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)) || (c == '\\' && i + 1 < text.size() &&
                                                      (text[i + 1] == '\n' || text[i + 1] == '\r'))) {
      ++i;  // a line continuation is a space
    } else if (is_identifier_start(c)) {
      size_t end = i;
      while (end < text.size() && is_identifier_char(text[end])) ++end;
      tokens.push_back({ConditionToken::kIdentifier, std::string(text.substr(i, end - i))});
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t end = i;
      while (end < text.size() && (is_identifier_char(text[end]) || text[end] == '.')) ++end;
      std::string_view digits = text.substr(i, end - i);
      while (!digits.empty() && (digits.back() == 'u' || digits.back() == 'U' || digits.back() == 'l' ||
                                 digits.back() == 'L'))
        digits.remove_suffix(1);
      int base = 10;
      if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        base = 16;
        digits.remove_prefix(2);
      } else if (digits.size() > 1 && digits[0] == '0') {
        base = 8;
        digits.remove_prefix(1);
      }
      ConditionToken token{ConditionToken::kNumber, std::string(text.substr(i, end - i))};
      auto parsed = std::from_chars(digits.data(), digits.data() + digits.size(), token.number, base);
      token.bad = parsed.ec != std::errc() || parsed.ptr != digits.data() + digits.size();
      tokens.push_back(std::move(token));
      i = end;
    } else {
      static const char* const kTwo[] = {"&&", "||", "==", "!=", "<=", ">=", "<<", ">>"};
      std::string op(1, c);
      for (const char* two : kTwo)
        if (text.substr(i, 2) == two) op = two;
      tokens.push_back({ConditionToken::kOperator, op});
      i += op.size();
    }
  }
  tokens.push_back({ConditionToken::kEnd, ""});
  return tokens;
}

// An #if expression over integers, in three values; anything it cannot read is unknown.
class Condition {
 public:
  Condition(std::string_view text, const Macros& macros) : tokens_(tokenize(text)), macros_(macros) {}

  Value evaluate() {
    Value value = ternary();
    if (failed_ || tokens_[at_].kind != ConditionToken::kEnd) return unknown();
    return value;
  }

 private:
  static constexpr int kMaxDepth = 256;

  const ConditionToken& peek() const { return tokens_[at_]; }
  bool take(const char* op) {
    if (peek().kind == ConditionToken::kOperator && peek().text == op) {
      ++at_;
      return true;
    }
    return false;
  }

  Value ternary() {
    if (++depth_ > kMaxDepth) failed_ = true;
    if (failed_) return unknown();
    Value condition = binary(0);
    if (take("?")) {
      Value yes = ternary();
      if (!take(":")) failed_ = true;
      Value no = ternary();
      --depth_;
      if (!condition.known) return yes.known && no.known && yes.number == no.number ? yes : unknown();
      return condition.number ? yes : no;
    }
    --depth_;
    return condition;
  }

  static int precedence(const std::string& op) {
    static const std::pair<const char*, int> kLevels[] = {
        {"||", 1}, {"&&", 2}, {"|", 3},  {"^", 4},  {"&", 5},  {"==", 6}, {"!=", 6}, {"<", 7},  {"<=", 7},
        {">", 7},  {">=", 7}, {"<<", 8}, {">>", 8}, {"+", 9},  {"-", 9},  {"*", 10}, {"/", 10}, {"%", 10}};
    for (const auto& [name, level] : kLevels)
      if (op == name) return level;
    return -1;
  }

  // Precedence climbing: one level of recursion per operator precedence, not per token.
  Value binary(int min_level) {
    Value left = unary();
    while (!failed_ && peek().kind == ConditionToken::kOperator) {
      std::string op = peek().text;
      int level = precedence(op);
      if (level < 0 || level < min_level) break;
      ++at_;
      if (++depth_ > kMaxDepth) failed_ = true;
      Value right = binary(level + 1);
      --depth_;
      left = apply(op, left, right);
    }
    return left;
  }

  static Value apply(const std::string& op, Value a, Value b) {
    if (op == "&&") {
      if ((a.known && !a.number) || (b.known && !b.number)) return known(0);
      return a.known && b.known ? known(1) : unknown();
    }
    if (op == "||") {
      if ((a.known && a.number) || (b.known && b.number)) return known(1);
      return a.known && b.known ? known(0) : unknown();
    }
    if (!a.known || !b.known) return unknown();
    long long x = a.number, y = b.number;
    if (op == "|") return known(x | y);
    if (op == "^") return known(x ^ y);
    if (op == "&") return known(x & y);
    if (op == "==") return known(x == y);
    if (op == "!=") return known(x != y);
    if (op == "<") return known(x < y);
    if (op == "<=") return known(x <= y);
    if (op == ">") return known(x > y);
    if (op == ">=") return known(x >= y);
    if (op == "<<") return y >= 0 && y < 63 ? known(x << y) : unknown();
    if (op == ">>") return y >= 0 && y < 63 ? known(x >> y) : unknown();
    if (op == "+") return known(static_cast<long long>(static_cast<unsigned long long>(x) + static_cast<unsigned long long>(y)));
    if (op == "-") return known(static_cast<long long>(static_cast<unsigned long long>(x) - static_cast<unsigned long long>(y)));
    if (op == "*") return known(static_cast<long long>(static_cast<unsigned long long>(x) * static_cast<unsigned long long>(y)));
    if (y == 0 || (x == std::numeric_limits<long long>::min() && y == -1)) return unknown();
    if (op == "/") return known(x / y);
    return known(x % y);
  }

  // Prefix operators are collected in a loop and applied afterwards: `!!!!x` never recurses.
  Value unary() {
    std::vector<char> prefixes;
    while (peek().kind == ConditionToken::kOperator &&
           (peek().text == "!" || peek().text == "-" || peek().text == "+" || peek().text == "~")) {
      prefixes.push_back(peek().text[0]);
      ++at_;
    }
    Value value = primary();
    for (auto it = prefixes.rbegin(); it != prefixes.rend(); ++it) {
      if (!value.known) continue;
      if (*it == '!') value.number = !value.number;
      if (*it == '-') value.number = static_cast<long long>(0ull - static_cast<unsigned long long>(value.number));
      if (*it == '~') value.number = ~value.number;
    }
    return value;
  }

  Value defined_operand() {
    bool parenthesized = take("(");
    if (peek().kind != ConditionToken::kIdentifier) {
      failed_ = true;
      return unknown();
    }
    std::string name = peek().text;
    ++at_;
    if (parenthesized && !take(")")) failed_ = true;
    const MacroState* state = nullptr;
    switch (macros_.lookup(name, &state)) {
      case MacroLookup::kDefined: return known(1);
      case MacroLookup::kUndefined: return known(0);
      case MacroLookup::kMaybe: return unknown();
    }
    return unknown();
  }

  Value primary() {
    const ConditionToken& token = peek();
    if (token.kind == ConditionToken::kNumber) {
      ++at_;
      return token.bad ? unknown() : known(token.number);
    }
    if (token.kind == ConditionToken::kIdentifier) {
      std::string name = token.text;
      ++at_;
      if (name == "defined") return defined_operand();
      if (name == "true") return known(1);
      if (name == "false") return known(0);
      if (peek().kind == ConditionToken::kOperator && peek().text == "(") {  // a function-like macro: not evaluated
        failed_ = true;
        return unknown();
      }
      const MacroState* state = nullptr;
      switch (macros_.lookup(name, &state)) {
        case MacroLookup::kUndefined: return known(0);
        case MacroLookup::kMaybe: return unknown();
        case MacroLookup::kDefined: return state && state->value ? known(*state->value) : unknown();
      }
      return unknown();
    }
    if (take("(")) {
      Value value = ternary();
      if (!take(")")) failed_ = true;
      return value;
    }
    failed_ = true;
    return unknown();
  }

  std::vector<ConditionToken> tokens_;
  const Macros& macros_;
  size_t at_ = 0;
  int depth_ = 0;
  bool failed_ = false;
};

Tri to_tri(Value value) {
  if (!value.known) return Tri::kUnknown;
  return value.number ? Tri::kTrue : Tri::kFalse;
}

// One open #if group: the value of its current branch and what earlier branches were.
struct Group {
  Tri branch = Tri::kTrue;
  bool any_true = false, any_unknown = false;
};

// The value of a branch after earlier ones: false once one was true, unknown once one may have been.
Tri next_branch(Group& group, Tri condition) {
  Tri branch = condition;
  if (group.any_true) {
    branch = Tri::kFalse;
  } else if (group.any_unknown && condition != Tri::kFalse) {
    branch = Tri::kUnknown;
  }
  group.any_true = group.any_true || branch == Tri::kTrue;
  group.any_unknown = group.any_unknown || condition == Tri::kUnknown;
  return branch;
}

// The state of the groups below `end` (all of them when end is the size): false when any is
// false, unknown when any is unknown, else true.
Tri state_of(const std::vector<Group>& groups, size_t end) {
  Tri state = Tri::kTrue;
  for (size_t i = 0; i < end; ++i) {
    if (groups[i].branch == Tri::kFalse) return Tri::kFalse;
    if (groups[i].branch == Tri::kUnknown) state = Tri::kUnknown;
  }
  return state;
}

std::string first_identifier(std::string_view text) {
  text = text::trim_space(text);
  size_t end = 0;
  while (end < text.size() && is_identifier_char(text[end])) ++end;
  return std::string(text.substr(0, end));
}

// #define NAME VALUE: the state it leaves NAME in (an integer value when VALUE is one).
MacroState defined_state(std::string_view rest, MacroState::Kind kind) {
  MacroState state;
  state.kind = kind;
  rest = text::trim_space(rest);
  size_t name_end = 0;
  while (name_end < rest.size() && is_identifier_char(rest[name_end])) ++name_end;
  if (name_end < rest.size() && rest[name_end] == '(') return state;  // function-like: no value
  std::string_view value = text::trim_space(rest.substr(name_end));
  if (value.empty()) return state;
  std::vector<ConditionToken> tokens = tokenize(value);
  if (tokens.size() == 2 && tokens[0].kind == ConditionToken::kNumber && !tokens[0].bad) state.value = tokens[0].number;
  return state;
}

}  // namespace

MacroEnvironment hip_compile_environment() {
  MacroEnvironment environment;
  auto define = [&](const char* name, std::optional<long long> value) {
    environment.macros[name] = MacroState{MacroState::kDefined, value};
  };
  for (const char* name : {"__HIPCC__", "__HIP__", "__HIP_PLATFORM_AMD__", "__HIP_PLATFORM_HCC__", "__clang__",
                           "__linux__", "__linux", "__unix__", "__unix", "__x86_64__", "__x86_64", "__LP64__",
                           "__STDC__", "__ELF__", "__GNUC__"})
    define(name, 1);
  define("__GNUC__", 4);
  define("__cplusplus", 201703);
  // The two passes differ: the device pass defines these, the host pass does not.
  // __CUDA_ARCH__ stays undecided too: a translation that still tests it is reported as such.
  for (const char* name : {"__HIP_DEVICE_COMPILE__", "__AMDGCN__", "__gfx1100__", "__AMDGCN_WAVEFRONT_SIZE",
                           "__OPTIMIZE__", "NDEBUG", "__FAST_MATH__", "__CUDA_ARCH__"})
    environment.macros[name] = MacroState{MacroState::kMaybe, std::nullopt};
  environment.maybe_prefixes = {"HIP_", "__HIP_", "HIPRAND_", "HIPSPARSE_", "ROCRAND_", "__clang_", "__GNUC_",
                                "__SIZEOF_", "__STDC_", "_GLIBCXX", "__GLIBC", "_POSIX", "_XOPEN"};
  return environment;
}

std::vector<InactiveRegion> inactive_regions(const std::string& code, const MacroEnvironment& environment) {
  Macros macros(environment);
  std::vector<Group> groups;
  std::vector<bool> inactive;  // per line
  std::vector<std::string> opener;  // per line: the directive that opened the region it starts
  size_t position = 0;
  int line = 0;
  std::string pending_opener;
  while (position <= code.size()) {
    // One logical line: physical lines joined where one ends in a backslash.
    size_t start = position;
    int first_line = ++line;
    size_t end = code.find('\n', position);
    while (end != std::string::npos && end > start && code[end - 1] == '\\') {
      ++line;
      end = code.find('\n', end + 1);
    }
    if (end == std::string::npos) end = code.size();
    position = end + 1;
    std::string_view text(code.data() + start, end - start);
    std::string_view body = text::trim_space(text);

    bool directive = !body.empty() && body.front() == '#';
    std::string name;
    std::string_view rest;
    if (directive) {
      std::string_view after = text::trim_space(body.substr(1));
      size_t name_end = 0;
      while (name_end < after.size() && is_identifier_char(after[name_end])) ++name_end;
      name = std::string(after.substr(0, name_end));
      rest = after.substr(name_end);
    }
    bool closes = name == "elif" || name == "else" || name == "endif" || name == "elifdef" || name == "elifndef";
    // A directive belongs to its group's surroundings; any other line to the groups it is in.
    Tri state = state_of(groups, closes && !groups.empty() ? groups.size() - 1 : groups.size());
    for (int l = first_line; l <= line; ++l) {
      inactive.push_back(state == Tri::kFalse);
      opener.push_back(state == Tri::kFalse && l == first_line ? pending_opener : "");
    }
    if (!directive) {
      if (position > code.size()) break;
      continue;
    }
    std::string directive_text = "#" + name + (text::trim_space(rest).empty() ? "" : " " + std::string(text::trim_space(rest).substr(0, 120)));
    if (name == "if" || name == "ifdef" || name == "ifndef") {
      Group group;
      if (state == Tri::kFalse) {
        group.branch = Tri::kFalse;  // inside dead code: not evaluated
        group.any_true = true;
      } else {
        Tri condition;
        if (name == "if") {
          condition = to_tri(Condition(rest, macros).evaluate());
        } else {
          condition = macros.test(first_identifier(rest), name == "ifdef");
        }
        group.branch = next_branch(group, condition);
      }
      groups.push_back(group);
    } else if ((name == "elif" || name == "elifdef" || name == "elifndef" || name == "else") && !groups.empty()) {
      Group& group = groups.back();
      Tri condition = Tri::kTrue;
      if (state != Tri::kFalse && name == "elif") {
        condition = to_tri(Condition(rest, macros).evaluate());
      } else if (state != Tri::kFalse && name != "else") {
        condition = macros.test(first_identifier(rest), name == "elifdef");
      }
      group.branch = state == Tri::kFalse ? Tri::kFalse : next_branch(group, condition);
    } else if (name == "endif" && !groups.empty()) {
      groups.pop_back();
    } else if (name == "define" && state != Tri::kFalse) {
      std::string macro = first_identifier(rest);
      if (!macro.empty())
        macros.define(macro, defined_state(rest, state == Tri::kTrue ? MacroState::kDefined : MacroState::kMaybe));
    } else if (name == "undef" && state != Tri::kFalse) {
      std::string macro = first_identifier(rest);
      if (state == Tri::kTrue) {
        macros.undefine(macro);
      } else {
        macros.define(macro, MacroState{MacroState::kMaybe, std::nullopt});
      }
    }
    pending_opener = directive_text;
    if (position > code.size()) break;
  }

  std::vector<InactiveRegion> regions;
  for (size_t i = 0; i < inactive.size(); ++i) {
    if (!inactive[i]) continue;
    size_t j = i;
    while (j + 1 < inactive.size() && inactive[j + 1]) ++j;
    InactiveRegion region;
    region.first_line = static_cast<int>(i) + 1;
    region.last_line = static_cast<int>(j) + 1;
    region.directive = opener[i];
    region.directive_line = static_cast<int>(i);
    regions.push_back(std::move(region));
    i = j;
  }
  return regions;
}

std::vector<bool> inactive_lines(const std::vector<InactiveRegion>& regions, int line_count) {
  std::vector<bool> lines(static_cast<size_t>(std::max(line_count, 0)), false);
  for (const InactiveRegion& region : regions)
    for (int line = region.first_line; line <= region.last_line && line <= line_count; ++line)
      lines[static_cast<size_t>(line - 1)] = true;
  return lines;
}

}  // namespace tailforge
