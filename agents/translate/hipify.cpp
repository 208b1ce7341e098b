#include "agents/translate/hipify.h"

#include "agents/translate/preprocessor_branches.h"
#include "text/chars.h"
#include "text/cpp_lexer.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>

namespace tailforge {
namespace {

using nlohmann::json;

// ---------------------------------------------------------------- scanning source text

using text::code_view;

// The identifier tokens of a code view, with their positions (numbers and their suffixes skipped).
std::vector<std::pair<size_t, std::string>> identifier_tokens(const std::string& code) {
  std::vector<std::pair<size_t, std::string>> tokens;
  for (size_t at = 0; at < code.size();) {
    text::CppToken token = text::next_cpp_token(code, at);
    at = token.end;
    if (token.kind == text::CppTokenKind::identifier)
      tokens.emplace_back(token.begin, code.substr(token.begin, token.end - token.begin));
  }
  return tokens;
}

// Line numbers of positions in one text, by binary search over its newlines: counting the
// newlines before each position anew is quadratic over a long text with many identifiers.
class LineIndex {
 public:
  explicit LineIndex(const std::string& text) {
    for (size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 1)) newlines_.push_back(at);
  }
  // 1-based.
  int line_of(size_t pos) const {
    return 1 + static_cast<int>(std::lower_bound(newlines_.begin(), newlines_.end(), pos) - newlines_.begin());
  }

 private:
  std::vector<size_t> newlines_;
};

int line_of(const std::string& text, size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + std::min(pos, text.size()), '\n'));
}

using text::is_identifier_char;

std::string without_spaces(std::string_view text) {
  std::string out;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

struct Span {
  size_t begin = 0, end = 0;
};

struct CallArguments {
  std::vector<Span> arguments;  // trimmed
  size_t close = std::string::npos;  // position of the closing ')'
};

// Splits the call whose '(' is the first non-space at or after `pos` into top-level arguments.
CallArguments parse_call(const std::string& code, size_t pos) {
  CallArguments call;
  while (pos < code.size() && std::isspace(static_cast<unsigned char>(code[pos]))) ++pos;
  if (pos >= code.size() || code[pos] != '(') return call;
  int depth = 0;
  size_t start = pos + 1;
  auto push = [&](size_t from, size_t to) {
    while (from < to && std::isspace(static_cast<unsigned char>(code[from]))) ++from;
    while (to > from && std::isspace(static_cast<unsigned char>(code[to - 1]))) --to;
    if (to > from || !call.arguments.empty()) call.arguments.push_back({from, to});
  };
  for (size_t k = pos; k < code.size(); ++k) {
    char c = code[k];
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (--depth == 0) {
        push(start, k);
        call.close = k;
        return call;
      }
    } else if (c == ',' && depth == 1) {
      push(start, k);
      start = k + 1;
    }
  }
  return call;
}

struct Edit {
  size_t begin, end;
  std::string text;
};

std::string apply_edits(const std::string& source, std::vector<Edit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
  std::string out;
  size_t cursor = 0;
  for (const Edit& e : edits) {
    if (e.begin < cursor) continue;  // inside a range an earlier edit already replaced
    out.append(source, cursor, e.begin - cursor);
    out += e.text;
    cursor = e.end;
  }
  out.append(source, cursor, std::string::npos);
  return out;
}

// The state of one translation: edits on the original text, plus what was noticed.
struct Translation {
  const HipifyRules& rules;
  const TranslationContext& context;
  const std::string& source;
  std::string code;
  LineIndex source_lines;
  std::vector<Edit> edits;
  TranslationResult result;
  std::set<std::string> applied_seen;
  std::unordered_map<std::string, std::string> defines;  // object-like #define NAME VALUE
  std::set<std::string> needed_headers;  // compatibility headers translated identifiers need
  std::set<std::string> also_headers;    // what mapped CUDA headers brought in implicitly
  std::set<std::string> included;        // every header the source includes
  std::unordered_set<std::string> guard_targets;  // HIP header guards the directives now test
  // Lines in branches the HIP compile leaves out (#if 0, a cuBLAS guard, a CUDA version check):
  // translated where a rule applies, never a failure for what stays.
  std::vector<InactiveRegion> inactive_regions;
  std::vector<bool> inactive;  // per line, 1-based line - 1

  bool is_inactive(int line) const {
    return line >= 1 && static_cast<size_t>(line) <= inactive.size() && inactive[static_cast<size_t>(line - 1)];
  }
  // "#ifdef CUBLAS_API_H_ at line 12": what leaves `line` out of the HIP compile.
  std::string inactive_reason(int line) const {
    for (const InactiveRegion& region : inactive_regions)
      if (line >= region.first_line && line <= region.last_line)
        return region.directive.empty() ? "an inactive branch"
                                        : region.directive + " at line " + std::to_string(region.directive_line);
    return "an inactive branch";
  }

  void applied(const std::string& rule) {
    if (applied_seen.insert(rule).second) result.applied_rules.push_back(rule);
  }
  // Records an untranslatable construct; the translation goes on with the construct kept as is.
  void fail(const std::string& construct, const std::string& message, int line) {
    std::string category = "translate.unsupported." + construct;
    result.issues.push_back({category, line, "line " + std::to_string(line) + ": " + message + " (" + category + ")"});
  }
};

const text::Regex& include_pattern() {
  static const text::Regex pattern(R"(^([ \t]*#[ \t]*include[ \t]*[<"][ \t]*)([^>"]+?)[ \t]*[>"])");
  return pattern;
}

const text::Regex& define_pattern() {
  static const text::Regex pattern(R"(^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]+))");
  return pattern;
}

// Rewrites #include lines and blanks them in the code view; collects object-like #defines.
void translate_headers(Translation& t) {
  size_t line_start = 0;
  while (line_start < t.source.size()) {
    size_t line_end = t.source.find('\n', line_start);
    if (line_end == std::string::npos) line_end = t.source.size();
    std::string code_line = t.code.substr(line_start, line_end - line_start);
    std::string line = t.source.substr(line_start, line_end - line_start);
    text::Match match;
    bool is_directive = code_line.find('#') != std::string::npos;
    if (is_directive && text::regex_search(line, match, include_pattern())) {
      std::string header = match[2].str();
      t.included.insert(header);
      for (const HeaderRule& rule : t.rules.headers) {
        if (rule.from != header) continue;
        if (rule.unless_in_tree && t.context.tree_has_header && t.context.tree_has_header(header)) continue;
        if (!rule.unsupported_construct.empty()) {
          t.fail(rule.unsupported_construct, "#include <" + header + ">: " + rule.message,
                 t.source_lines.line_of(line_start));
          break;
        }
        size_t begin = line_start + match.position(2);
        t.edits.push_back({begin, begin + header.size(), rule.to});
        t.also_headers.insert(rule.also.begin(), rule.also.end());
        t.applied("header:" + header);
        if (rule.compat && std::find(t.result.compat_headers.begin(), t.result.compat_headers.end(), rule.to) ==
                               t.result.compat_headers.end())
          t.result.compat_headers.push_back(rule.to);
        break;
      }
      std::fill(t.code.begin() + line_start, t.code.begin() + line_end, ' ');
    } else if (is_directive && text::regex_search(code_line, match, define_pattern())) {
      t.defines[match[1].str()] = without_spaces(match[2].str());
    }
    line_start = line_end + 1;
  }
}

bool is_full_mask(const Translation& t, std::string mask) {
  for (int depth = 0; depth < 4; ++depth) {
    if (std::find(t.rules.full_warp_masks.begin(), t.rules.full_warp_masks.end(), mask) != t.rules.full_warp_masks.end())
      return true;
    while (mask.size() > 2 && mask.front() == '(' && mask.back() == ')') mask = mask.substr(1, mask.size() - 2);
    auto define = t.defines.find(mask);
    if (define == t.defines.end()) break;
    mask = define->second;
  }
  return std::find(t.rules.full_warp_masks.begin(), t.rules.full_warp_masks.end(), mask) != t.rules.full_warp_masks.end();
}

bool is_plain_identifier(const std::string& text) {
  return !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
         std::all_of(text.begin(), text.end(), is_identifier_char);
}

std::string span_text(const std::string& code, Span span) { return code.substr(span.begin, span.end - span.begin); }

// Rewrites the call [name_begin, close] by the template `to`, whose {0}, {1}, ... stand for the
// arguments. When they appear in order, once each, only the text around the arguments is replaced,
// so rewrites inside an argument (a nested call) still apply; otherwise the arguments are copied.
void rewrite_call(Translation& t, size_t name_begin, const std::string& to, const CallArguments& call) {
  std::vector<std::string> pieces(1);
  std::vector<size_t> order;
  for (size_t i = 0; i < to.size(); ++i) {
    size_t close = to.find('}', i);
    if (to[i] == '{' && close != std::string::npos && close > i + 1 && close - i <= 3 &&
        std::isdigit(static_cast<unsigned char>(to[i + 1]))) {
      order.push_back(std::stoul(to.substr(i + 1, close - i - 1)));
      pieces.emplace_back();
      i = close;
    } else {
      pieces.back() += to[i];
    }
  }
  bool in_order = order.size() <= call.arguments.size();
  for (size_t k = 0; k < order.size() && in_order; ++k) in_order = order[k] == k;
  if (order.empty() || !in_order) {
    std::string text = pieces[0];
    for (size_t k = 0; k < order.size(); ++k)
      text += (order[k] < call.arguments.size() ? span_text(t.source, call.arguments[order[k]]) : "") + pieces[k + 1];
    t.edits.push_back({name_begin, call.close + 1, text});
    return;
  }
  size_t cursor = name_begin;
  for (size_t k = 0; k < order.size(); ++k) {
    t.edits.push_back({cursor, call.arguments[k].begin, pieces[k]});
    cursor = call.arguments[k].end;
  }
  t.edits.push_back({cursor, call.close + 1, pieces.back()});
}

// Handles one identifier token at [begin, end). An untranslatable one is recorded and kept.
void translate_identifier(Translation& t, size_t begin, size_t end) {
  const HipifyRules& rules = t.rules;
  std::string name = t.code.substr(begin, end - begin);
  int line = t.source_lines.line_of(begin);
  if (auto it = rules.warp_intrinsic_index.find(name); it != rules.warp_intrinsic_index.end()) {
    CallArguments call = parse_call(t.code, end);
    if (call.arguments.size() < 2)
      return t.fail("warp_intrinsic_call", name + " without a mask and a value argument", line);
    std::string mask = without_spaces(span_text(t.code, call.arguments[0]));
    if (!is_full_mask(t, mask)) {
      if (!is_plain_identifier(mask))
        return t.fail("partial_warp_mask",
                      name + " with mask '" + mask + "': HIP 5.2 has no *_sync intrinsics and an AMD wavefront "
                      "cannot restrict a shuffle/vote to a lane subset", line);
      t.result.warnings.push_back("line " + std::to_string(line) + ": " + name + " with mask variable '" + mask +
                                  "': the mask is dropped, assuming it names the lanes that execute the call");
    }
    t.edits.push_back({begin, end, rules.warp_intrinsics[it->second].to});
    t.edits.push_back({call.arguments[0].begin, call.arguments[1].begin, ""});
    t.applied("warp_intrinsic:" + name);
  } else if (auto it = rules.symbol_call_index.find(name); it != rules.symbol_call_index.end()) {
    const SymbolCallRule& rule = rules.symbol_calls[it->second];
    CallArguments call = parse_call(t.code, end);
    t.edits.push_back({begin, end, rule.to});
    if (rule.symbol_argument < static_cast<int>(call.arguments.size())) {
      Span symbol = call.arguments[rule.symbol_argument];
      t.edits.push_back({symbol.begin, symbol.begin, rule.wrapper + "("});
      t.edits.push_back({symbol.end, symbol.end, ")"});
    }
    t.applied("symbol_call:" + name);
  } else if (auto it = rules.call_rewrite_index.find(name); it != rules.call_rewrite_index.end()) {
    CallArguments call = parse_call(t.code, end);
    if (call.close == std::string::npos) return t.fail("call_rewrite", name + " is not called", line);
    rewrite_call(t, begin, rules.call_rewrites[it->second].to, call);
    t.applied("call_rewrite:" + name);
  } else if (std::find(rules.vararg_cast_calls.begin(), rules.vararg_cast_calls.end(), name) !=
             rules.vararg_cast_calls.end()) {
    CallArguments call = parse_call(t.code, end);
    for (size_t a = 0; a < call.arguments.size(); ++a) {  // the format string never matches
      if (!text::regex_match(without_spaces(span_text(t.code, call.arguments[a])), rules.vararg_cast_arguments)) continue;
      t.edits.push_back({call.arguments[a].begin, call.arguments[a].begin, rules.vararg_cast});
      t.applied("vararg_cast:" + name);
    }
  } else if (name == rules.launch_bounds_name) {
    CallArguments call = parse_call(t.code, end);
    size_t keep = static_cast<size_t>(std::max(1, rules.launch_bounds_keep_arguments));
    if (call.arguments.size() > keep && call.close != std::string::npos) {
      t.edits.push_back({call.arguments[keep - 1].end, call.close, ""});
      t.applied("launch_bounds:drop_min_blocks");
    }
  } else if (auto it = rules.identifier_index.find(name); it != rules.identifier_index.end()) {
    const IdentifierRule& rule = rules.identifiers[it->second];
    t.edits.push_back({begin, end, rule.to});
    t.applied("identifier:" + name);
    if (!rule.header.empty()) t.needed_headers.insert(rule.header);
  }
}

// The macro names a conditional directive at `at` (its '#') tests for definition: X of `#ifdef X`,
// `#ifndef X`, and every `defined(X)` / `defined X` of an #if or #elif, with their positions; not
// one whose value the directive also reads (`defined(CUDART_VERSION) && CUDART_VERSION >= 11000`),
// which HIP's headers cannot answer. `end` is the directive's end (continuation lines included).
std::vector<std::pair<size_t, size_t>> tested_macros(const std::string& code, size_t at, size_t end) {
  std::vector<std::pair<size_t, size_t>> names;
  std::string_view line(code.data(), end);
  size_t word_at = line.find_first_not_of(" \t", at + 1);
  if (word_at == std::string_view::npos) return names;
  text::CppToken keyword = text::next_cpp_token(line, word_at);
  if (keyword.kind != text::CppTokenKind::identifier) return names;
  std::string_view word = line.substr(keyword.begin, keyword.end - keyword.begin);
  bool whole = word == "ifdef" || word == "ifndef" || word == "elifdef" || word == "elifndef";
  if (!whole && word != "if" && word != "elif") return names;
  bool after_defined = false;
  std::set<std::string_view> read;
  for (size_t position = keyword.end; position < end;) {
    text::CppToken token = text::next_cpp_token(line, position);
    position = token.end;
    if (token.kind != text::CppTokenKind::identifier) {
      bool open = token.kind == text::CppTokenKind::punctuation && line[token.begin] == '(';
      bool space = token.kind == text::CppTokenKind::whitespace || (token.kind == text::CppTokenKind::punctuation &&
                                                                    line[token.begin] == '\\');
      if (!open && !space) after_defined = false;
      continue;
    }
    std::string_view name = line.substr(token.begin, token.end - token.begin);
    if (whole) {
      names.emplace_back(token.begin, token.end);
      break;
    }
    if (after_defined) names.emplace_back(token.begin, token.end);
    else if (name != "defined") read.insert(name);
    after_defined = name == "defined";
  }
  std::erase_if(names, [&](const std::pair<size_t, size_t>& name) {
    return read.count(line.substr(name.first, name.second - name.first)) > 0;
  });
  return names;
}

void collect_names(const std::string& code, std::unordered_set<std::string>& names);

// Rewrites what conditional directives test of the CUDA headers' macros (`#ifdef
// __DRIVER_TYPES_H__`, `#if defined(CUSPARSEAPI)`) to the guard of the HIP header that stands for
// that CUDA header; a test of a header that has none is kept and named. A name the identifier
// rules rename, or the file or tree defines itself, is left alone.
void translate_guard_tests(Translation& t) {
  if (t.rules.guard_index.empty() || t.code.find('#') == std::string::npos) return;
  std::optional<std::unordered_set<std::string>> own;
  for (size_t start = 0; start < t.code.size();) {
    size_t end = t.code.find('\n', start);
    while (end != std::string::npos && end > start && (t.code[end - 1] == '\\' ||
                                                       (t.code[end - 1] == '\r' && end > start + 1 && t.code[end - 2] == '\\')))
      end = t.code.find('\n', end + 1);
    if (end == std::string::npos) end = t.code.size();
    size_t at = t.code.find_first_not_of(" \t", start);
    if (at < end && t.code[at] == '#') {
      for (const auto& [begin, name_end] : tested_macros(t.code, at, end)) {
        std::string name = t.code.substr(begin, name_end - begin);
        auto rule = t.rules.guard_index.find(name);
        if (rule == t.rules.guard_index.end() || t.rules.identifier_index.count(name)) continue;
        if (!own) {
          own.emplace();
          collect_names(t.code, *own);
        }
        if (own->count(name) || (t.context.tree_names && t.context.tree_names->count(name))) continue;
        const GuardRule& guard = t.rules.guards[rule->second];
        int line = t.source_lines.line_of(begin);
        if (!guard.to.empty()) {
          t.edits.push_back({begin, name_end, guard.to});
          t.guard_targets.insert(guard.to);
          t.applied("guard:" + name);
          continue;
        }
        std::string why = "no HIP header's guard tells that";
        for (const HeaderRule& header : t.rules.headers)
          if (header.from == guard.header && !header.message.empty()) why = header.message;
        t.result.warnings.push_back("line " + std::to_string(line) + ": the test of " + name + " asks whether <" +
                                    guard.header + "> was included, and " + why +
                                    ": the test is kept, false in the HIP compile");
      }
    }
    start = end + 1;
  }
}

void translate_identifiers(Translation& t) {
  for (size_t at = 0; at < t.code.size();) {
    text::CppToken token = text::next_cpp_token(t.code, at);
    at = token.end;
    if (token.kind == text::CppTokenKind::identifier) translate_identifier(t, token.begin, token.end);
  }
}

// The code rewrites, each over the code of the previous one's result (strings and comments untouched).
std::string apply_code_rewrites(Translation& t, std::string translated) {
  for (const CodeRewriteRule& rule : t.rules.code_rewrites) {
    std::string code = code_view(translated);
    std::vector<Edit> edits;
    text::for_each_match(code, rule.pattern, [&](const text::Match& match) {
      size_t begin = match.position(), end = begin + match.length();
      // Groups are read from the real text: the code view has the same positions.
      text::Match real;
      std::string slice = translated.substr(begin, end - begin);
      text::regex_match(slice, real, rule.pattern);
      edits.push_back({begin, end, real.empty() ? rule.to : real.format(rule.to)});
      t.applied("code_rewrite:" + rule.pattern_text);
      return true;
    });
    if (!edits.empty()) translated = apply_edits(translated, std::move(edits));
  }
  return translated;
}

// `code` with the lines of one kind (inactive or active) blanked, newlines kept.
std::string blank_lines(const Translation& t, std::string code, bool blank_inactive) {
  int line = 1;
  for (char& c : code) {
    if (c == '\n') {
      ++line;
    } else if (t.is_inactive(line) == blank_inactive) {
      c = ' ';
    }
  }
  return code;
}

// Each unsupported construct at its first use in `code`: an issue, or a warning when `code` holds
// only the lines the HIP compile leaves out.
void check_unsupported_in(Translation& t, const std::string& code, bool in_inactive) {
  for (const UnsupportedRule& rule : t.rules.unsupported) {
    text::Match first;
    bool all = !rule.patterns.empty();
    for (size_t p = 0; p < rule.patterns.size() && all; ++p) {
      text::Match match;
      all = text::regex_search(code, match, rule.patterns[p]);
      if (p == 0 && all) first = match;
    }
    if (!all) continue;
    // A match may span lines (a launch inside a kernel): name the line where it ends, and quote it.
    size_t end = first.position() + first.length();
    size_t line_start = code.rfind('\n', end == 0 ? 0 : end - 1);
    line_start = line_start == std::string::npos || line_start < static_cast<size_t>(first.position())
                     ? first.position() : line_start + 1;
    std::string quote = code.substr(line_start, end - line_start);
    quote.erase(0, quote.find_first_not_of(" \t"));
    if (quote.size() > 80) quote = quote.substr(0, 77) + "...";
    int line = line_of(code, end == 0 ? 0 : end - 1);
    if (in_inactive) {
      t.result.warnings.push_back("line " + std::to_string(line) + ": " + rule.message + ": '" + quote +
                                  "' (translate.unsupported." + rule.construct + "): kept, in " +
                                  t.inactive_reason(line) + ", which the HIP compile leaves out");
    } else {
      t.fail(rule.construct, rule.message + ": '" + quote + "'", line);
    }
  }
}

// hipcc's macro environment for an AMD GPU, made once.
const MacroEnvironment& hip_environment() {
  static const MacroEnvironment environment = hip_compile_environment();
  return environment;
}

// Finds the branches of `translated` that hipcc leaves out, in its macro environment plus the
// names the tree defines (each of which may be a macro).
void mark_inactive_lines(Translation& t, const std::string& translated) {
  std::string code = code_view(translated);
  if (code.find('#') == std::string::npos) return;
  MacroEnvironment environment = hip_environment();
  environment.maybe_names = t.context.tree_names;
  // A HIP header's guard is defined where that header was included before, which a file alone
  // does not tell.
  for (const std::string& guard : t.guard_targets) environment.macros[guard] = MacroState{MacroState::kMaybe, std::nullopt};
  t.inactive_regions = inactive_regions(code, environment);
  if (t.inactive_regions.empty()) return;
  t.inactive = inactive_lines(t.inactive_regions, line_of(code, code.size()));
}

// One issue per unsupported construct, at its first use in the compiled code; one warning per
// construct left only in branches the HIP compile leaves out.
void check_unsupported(Translation& t, const std::string& translated) {
  std::string code = code_view(translated);
  if (t.inactive_regions.empty()) return check_unsupported_in(t, code, false);
  check_unsupported_in(t, blank_lines(t, code, true), false);
  check_unsupported_in(t, blank_lines(t, code, false), true);
}

// Names a source defines itself: #define NAME, struct/class/enum NAME, and a name declared after a
// type (`T name(`, `T* name =`, `T name;`). An identifier that looks like CUDA's but is the
// program's own (cudaStatus, cuDNNCheck) is then not reported as untranslated.
void collect_names(const std::string& code, std::unordered_set<std::string>& names) {
  auto tokens = identifier_tokens(code);
  static const std::set<std::string> introducers = {"define", "struct", "class", "enum", "union", "typedef"};
  for (size_t k = 1; k < tokens.size(); ++k) {
    const auto& [position, name] = tokens[k];
    const auto& [previous_position, previous] = tokens[k - 1];
    if (introducers.count(previous)) {
      names.insert(name);
      continue;
    }
    std::string between = code.substr(previous_position + previous.size(), position - previous_position - previous.size());
    if (!std::all_of(between.begin(), between.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)) || c == '*' || c == '&' || c == '>'; }))
      continue;
    if (between.empty() || previous == "return" || previous == "else") continue;
    size_t next = position + name.size();
    while (next < code.size() && std::isspace(static_cast<unsigned char>(code[next]))) ++next;
    if (next < code.size() && std::string_view("([=;,){").find(code[next]) != std::string_view::npos) names.insert(name);
  }
}

// Per line of a code view: whether it is a conditional directive (#if, #ifdef, #elif, ...).
std::vector<bool> conditional_directive_lines(const std::string& code) {
  std::vector<bool> tests;
  size_t start = 0;
  while (start <= code.size()) {
    size_t end = code.find('\n', start);
    if (end == std::string::npos) end = code.size();
    size_t at = code.find_first_not_of(" \t", start);
    bool test = false;
    if (at < end && code[at] == '#') {
      at = code.find_first_not_of(" \t", at + 1);
      test = at < end && (code.compare(at, 2, "if") == 0 || code.compare(at, 4, "elif") == 0);
    }
    tests.push_back(test);
    start = end + 1;
  }
  return tests;
}

// A CUDA name left in compiled code gets its reason. One of a library names the library (one
// issue per library, at its first name); one the CUDA headers declare with no HIP counterpart
// installed is an issue of its own; any other is not in the table.
std::string note_untranslated_name(Translation& t, const std::string& token, int line, std::set<std::string>& failed) {
  for (const LibraryRule& library : t.rules.libraries) {
    bool ours = std::any_of(library.prefixes.begin(), library.prefixes.end(),
                            [&](const std::string& prefix) { return token.compare(0, prefix.size(), prefix) == 0; });
    if (!ours) continue;
    std::string category = "translate.unsupported.library." + library.name;
    bool named = std::any_of(t.result.issues.begin(), t.result.issues.end(),
                             [&](const TranslationIssue& issue) { return issue.category == category; });
    if (failed.insert(library.name).second && !named) t.fail("library." + library.name, token + ": " + library.message, line);
    return library.message;
  }
  if (t.rules.without_hip.count(token)) {
    std::string reason = "no HIP declaration in the installed ROCm";
    t.fail("no_hip_declaration", token + ": " + reason, line);
    return reason;
  }
  return "not in the translation table";
}

// Reports every identifier of the output that still names CUDA and is not the program's own:
// untranslated where the HIP compile sees it, a warning where it leaves the line out.
void note_untranslated(Translation& t, const std::string& source, const std::string& translated) {
  if (t.rules.residual_patterns.empty()) return;
  std::unordered_set<std::string> own;
  collect_names(code_view(source), own);
  std::string code = code_view(translated);
  LineIndex lines(code);
  std::vector<bool> tests = conditional_directive_lines(code);
  std::set<std::string> reported, reported_inactive, failed_libraries;
  for (const auto& [position, token] : identifier_tokens(code)) {
    bool member = position > 0 && (code[position - 1] == '.' || (position > 1 && code[position - 1] == '>' && code[position - 2] == '-'));
    if (member || own.count(token) || (t.context.tree_names && t.context.tree_names->count(token)) || reported.count(token))
      continue;
    int line = lines.line_of(position);
    // `#ifdef CUBLAS_API_H_`, `#if CUDART_VERSION >= 11000`: a test of a macro the HIP compile
    // does not define, which is what leaves its branch out; nothing is left to translate there.
    // A test of __CUDA_ARCH__ is another matter: CUDA defines it in the device pass only, and HIP's
    // way to say that (__HIP_DEVICE_COMPILE__) is no rename of it.
    auto undecided = hip_environment().macros.find(token);
    bool decided = undecided == hip_environment().macros.end() || undecided->second.kind != MacroState::kMaybe;
    if (static_cast<size_t>(line) <= tests.size() && tests[static_cast<size_t>(line - 1)] && decided) continue;
    bool inactive = t.is_inactive(line);
    if (inactive && reported_inactive.count(token)) continue;
    for (const text::Regex& pattern : t.rules.residual_patterns) {
      if (!text::regex_match(token, pattern)) continue;
      if (inactive) {
        reported_inactive.insert(token);
        t.result.warnings.push_back("line " + std::to_string(line) + ": CUDA identifier " + token + " kept, in " +
                                    t.inactive_reason(line) + ", which the HIP compile leaves out");
      } else {
        reported.insert(token);
        std::string reason = note_untranslated_name(t, token, line, failed_libraries);
        t.result.untranslated.push_back("line " + std::to_string(line) + ": " + token + " (" + reason + ")");
      }
      break;
    }
  }
}

// A literal 32 in warp-level code is kept but reported: right for wave32 (RDNA3), wrong for wave64 (CDNA).
void note_hardcoded_warp_size(Translation& t, const std::string& translated) {
  std::string code = code_view(translated);
  bool warp_code = false;
  std::vector<std::pair<size_t, std::string>> numbers;
  for (size_t at = 0; at < code.size();) {
    text::CppToken token = text::next_cpp_token(code, at);
    at = token.end;
    std::string_view spelled(code.data() + token.begin, token.end - token.begin);
    if (token.kind == text::CppTokenKind::number) {
      numbers.emplace_back(token.begin, spelled);
    } else if (token.kind == text::CppTokenKind::identifier) {
      for (const std::string& marker : t.rules.warp_code_markers)
        if (spelled.starts_with(marker)) warp_code = true;
    }
  }
  if (!warp_code) return;
  LineIndex lines(code);
  for (const auto& [position, token] : numbers) {
    const auto& literals = t.rules.warp_size_literals;
    if (std::find(literals.begin(), literals.end(), token) == literals.end()) continue;
    if (t.result.features.empty()) t.result.features.push_back("hardcoded_warp_size");
    t.result.warnings.push_back("line " + std::to_string(lines.line_of(position)) +
                                ": hard-coded warp size " + token +
                                " in warp-level code (feature.hardcoded_warp_size): kept; right for wave32 "
                                "(RDNA3 gfx1100), wrong for wave64 (CDNA)");
  }
}

}  // namespace

TranslationResult translate_cuda_to_hip(const HipifyRules& rules, const std::string& cuda,
                                        const TranslationContext& context) {
  // A UTF-8 byte-order mark stays first, before anything the translation puts at the top.
  static constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (std::string_view(cuda).starts_with(kByteOrderMark)) {
    TranslationResult result = translate_cuda_to_hip(rules, cuda.substr(kByteOrderMark.size()), context);
    result.hip_source.insert(0, kByteOrderMark);
    return result;
  }
  // Lines the translation adds end the way the file's lines do.
  size_t first_newline = cuda.find('\n');
  std::string newline = first_newline != std::string::npos && first_newline > 0 && cuda[first_newline - 1] == '\r'
                            ? "\r\n" : "\n";
  Translation t{rules, context, cuda, code_view(cuda), LineIndex(cuda), {}, {}, {}, {}};
  translate_headers(t);
  translate_guard_tests(t);
  translate_identifiers(t);
  std::string translated = apply_code_rewrites(t, apply_edits(cuda, t.edits));
  mark_inactive_lines(t, translated);
  check_unsupported(t, translated);
  note_hardcoded_warp_size(t, translated);
  note_untranslated(t, cuda, translated);
  // Prepended, so that every line keeps its number (the issues and the report name source lines).
  for (const std::string& header : t.also_headers) {
    // Not when the source includes it already, or its C++ form (math.h -> cmath).
    std::string cxx = "c" + header.substr(0, header.size() - (header.size() > 2 && header.ends_with(".h") ? 2 : 0));
    if (t.included.count(header) || t.included.count(cxx)) continue;
    translated = "#include <" + header + ">" + newline + translated;
    t.applied("include:" + header);
  }
  for (const std::string& header : t.needed_headers) {
    if (std::find(t.result.compat_headers.begin(), t.result.compat_headers.end(), header) != t.result.compat_headers.end())
      continue;
    translated = "#include <" + header + ">" + newline + translated;
    t.result.compat_headers.push_back(header);
    t.applied("include:" + header);
  }
  static const text::Regex hip_runtime_include(R"(#[ \t]*include[ \t]*[<"]hip/hip_runtime\.h[>"])");
  if (!text::regex_search(translated, hip_runtime_include)) {
    translated = "#include <hip/hip_runtime.h>" + newline + translated;
    t.applied("include:hip/hip_runtime.h");
  }
  TranslationResult& result = t.result;
  // What the header and identifier rules could not translate in a branch HIP leaves out: kept, said.
  std::vector<TranslationIssue> active;
  for (TranslationIssue& issue : result.issues) {
    if (!t.is_inactive(issue.line)) {
      active.push_back(std::move(issue));
      continue;
    }
    result.warnings.push_back(issue.message + ": kept, in " + t.inactive_reason(issue.line) +
                              ", which the HIP compile leaves out");
  }
  result.issues = std::move(active);
  std::stable_sort(result.issues.begin(), result.issues.end(),
                   [](const TranslationIssue& a, const TranslationIssue& b) { return a.line < b.line; });
  result.ok = result.issues.empty();
  if (!result.ok) {
    result.category = result.issues.front().category;
    result.message = result.issues.front().message;
    result.line = result.issues.front().line;
  }
  result.hip_source = std::move(translated);
  return std::move(t.result);
}

void collect_defined_names(const std::string& source, std::unordered_set<std::string>& names) {
  collect_names(code_view(source), names);
}

int run_translate_command(const std::string& path, const HipifyRules& rules, std::ostream& out, std::ostream& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << "tailforge translate: cannot read '" << path << "'\n";
    return 1;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  TranslationResult result = translate_cuda_to_hip(rules, buffer.str());
  // The translation is always printed; what stays CUDA is named, one line each, on stderr.
  out << result.hip_source;
  for (const TranslationIssue& issue : result.issues)
    err << path << ":" << issue.line << ": " << issue.category << ": " << issue.message << "\n";
  for (const std::string& name : result.untranslated) err << path << ": untranslated CUDA identifier, " << name << "\n";
  for (const std::string& warning : result.warnings) err << path << ": warning: " << warning << "\n";
  return result.ok && result.untranslated.empty() ? 0 : 1;
}

}  // namespace tailforge
