#include "agents/translate/header_guards.h"

#include <cctype>
#include <deque>
#include <filesystem>
#include <map>

#include "base/files.h"
#include "text/chars.h"
#include "text/cpp_lexer.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

using text::is_identifier_char;

// The identifier at the start of `s` (after spaces), "" when none; `s` advances past it.
std::string take_identifier(std::string_view& s) {
  s = text::trim_space(s);
  size_t n = 0;
  while (n < s.size() && is_identifier_char(s[n])) ++n;
  if (n == 0 || std::isdigit(static_cast<unsigned char>(s[0]))) return "";
  std::string name(s.substr(0, n));
  s.remove_prefix(n);
  return name;
}

struct Directive {
  std::string keyword;  // "ifndef", "define", ...
  std::string rest;     // what follows it, continuation lines joined
};

// Every directive of a code view (comments and strings already blanked), in order.
std::vector<Directive> directives(std::string_view code) {
  std::vector<Directive> out;
  size_t position = 0;
  while (position < code.size()) {
    size_t end = code.find('\n', position);
    std::string line;
    for (;;) {
      if (end == std::string_view::npos) end = code.size();
      std::string_view piece = code.substr(position, end - position);
      if (!piece.empty() && piece.back() == '\r') piece.remove_suffix(1);
      bool continued = !piece.empty() && piece.back() == '\\' && end < code.size();
      if (continued) piece.remove_suffix(1);
      line.append(piece);
      position = end + 1;
      if (!continued) break;
      line.push_back(' ');
      end = code.find('\n', position);
    }
    std::string_view view = text::trim_space(line);
    if (view.empty() || view.front() != '#') continue;
    view.remove_prefix(1);
    std::string keyword = take_identifier(view);
    if (!keyword.empty()) out.push_back({keyword, std::string(text::trim_space(view))});
  }
  return out;
}

// X of `!defined(X)` / `!defined X` making up a whole #if condition; "" otherwise.
std::string negated_defined(std::string_view condition) {
  condition = text::trim_space(condition);
  if (condition.empty() || condition.front() != '!') return "";
  condition.remove_prefix(1);
  if (take_identifier(condition) != "defined") return "";
  condition = text::trim_space(condition);
  bool parenthesized = !condition.empty() && condition.front() == '(';
  if (parenthesized) condition.remove_prefix(1);
  std::string name = take_identifier(condition);
  condition = text::trim_space(condition);
  if (parenthesized) {
    if (condition.empty() || condition.front() != ')') return "";
    condition.remove_prefix(1);
  }
  return text::trim_space(condition).empty() ? name : "";
}

// The macro an #ifndef / #if !defined(...) directive tests for absence; "" for any other.
std::string tested_absent(const Directive& directive) {
  if (directive.keyword == "ifndef") {
    std::string_view rest = directive.rest;
    return take_identifier(rest);
  }
  if (directive.keyword == "if") return negated_defined(directive.rest);
  return "";
}

// The name and value of an object-like #define; name "" for a function-like one.
std::pair<std::string, std::string> defined_macro(const Directive& directive) {
  std::string_view rest = directive.rest;
  std::string name = take_identifier(rest);
  if (name.empty() || (!rest.empty() && rest.front() == '(')) return {};
  return {name, std::string(text::trim_space(rest))};
}

}  // namespace

std::string include_guard(std::string_view text) {
  std::string code = text::code_view(text);
  std::vector<Directive> found = directives(code);
  size_t first = 0;
  while (first < found.size() && found[first].keyword == "pragma") ++first;
  if (first + 1 >= found.size()) return "";
  std::string guard = tested_absent(found[first]);
  if (guard.empty() || found[first + 1].keyword != "define") return "";
  return defined_macro(found[first + 1]).first == guard ? guard : "";
}

std::vector<std::pair<std::string, std::string>> unconditional_macros(std::string_view text) {
  std::string code = text::code_view(text);
  std::vector<Directive> found = directives(code);
  std::string guard = include_guard(text);
  // One open conditional: the macros each of its branches defined, and what it tests for absence.
  struct Frame {
    bool transparent = false;    // the include guard: what it defines is defined
    std::string absent;          // X of #ifndef X: a #define X inside is a default, defined either way
    std::vector<std::map<std::string, std::string>> branches;
    bool has_else = false;
  };
  std::map<std::string, std::string> top;
  std::vector<Frame> frames;
  auto current = [&]() -> std::map<std::string, std::string>& {
    for (auto frame = frames.rbegin(); frame != frames.rend(); ++frame)
      if (!frame->transparent) return frame->branches.back();
    return top;
  };
  bool guard_seen = false;
  for (const Directive& directive : found) {
    const std::string& keyword = directive.keyword;
    if (keyword == "if" || keyword == "ifdef" || keyword == "ifndef") {
      Frame frame;
      frame.absent = tested_absent(directive);
      frame.transparent = !guard_seen && frames.empty() && !guard.empty() && frame.absent == guard;
      guard_seen = guard_seen || frame.transparent;
      frame.branches.emplace_back();
      frames.push_back(std::move(frame));
    } else if ((keyword == "elif" || keyword == "else") && !frames.empty() && !frames.back().transparent) {
      frames.back().branches.emplace_back();
      frames.back().has_else = frames.back().has_else || keyword == "else";
    } else if (keyword == "endif" && !frames.empty()) {
      Frame frame = std::move(frames.back());
      frames.pop_back();
      if (frame.transparent) continue;
      std::map<std::string, std::string>& parent = current();
      const std::map<std::string, std::string>& first = frame.branches.front();
      if (auto self = first.find(frame.absent); self != first.end()) parent[self->first] = self->second;
      if (!frame.has_else) continue;
      for (const auto& [name, value] : first) {
        bool everywhere = true;
        for (size_t b = 1; b < frame.branches.size() && everywhere; ++b) everywhere = frame.branches[b].count(name) > 0;
        if (everywhere) parent[name] = value;
      }
    } else if (keyword == "define") {
      auto [name, value] = defined_macro(directive);
      if (!name.empty()) current()[name] = value;
    } else if (keyword == "undef") {
      std::string_view rest = directive.rest;
      std::string name = take_identifier(rest);
      top.erase(name);
      for (Frame& frame : frames)
        for (auto& branch : frame.branches) branch.erase(name);
    }
  }
  return {top.begin(), top.end()};
}

std::vector<std::string> included_headers(std::string_view text) {
  std::vector<std::string> out;
  std::string code(text);  // include paths are quoted, so the code view would blank them
  for (const Directive& directive : directives(code)) {
    if (directive.keyword != "include") continue;
    std::string_view rest = text::trim_space(directive.rest);
    if (rest.size() < 2 || (rest.front() != '<' && rest.front() != '"')) continue;
    char close = rest.front() == '<' ? '>' : '"';
    size_t end = rest.find(close, 1);
    if (end != std::string_view::npos && end > 1) out.emplace_back(text::trim_space(rest.substr(1, end - 1)));
  }
  return out;
}

namespace {

// Reads each header once.
class HeaderFiles {
 public:
  Result<const std::string*> text(const fs::path& path) {
    std::string key = path.lexically_normal().string();
    if (auto it = texts_.find(key); it != texts_.end()) return &it->second;
    Result<std::string> read = read_text_file(path.string());
    if (!read) return read.error();
    return &texts_.emplace(key, std::move(*read)).first->second;
  }

 private:
  std::map<std::string, std::string> texts_;
};

// The existing headers `header` includes, as normalized paths: each looked up next to its
// includer, then in `folders` (the first match).
Result<std::vector<fs::path>> resolved_includes(HeaderFiles& files, const fs::path& header,
                                                const std::vector<fs::path>& folders) {
  Result<const std::string*> text = files.text(header);
  if (!text) return text.error();
  std::vector<fs::path> out;
  for (const std::string& included : included_headers(**text)) {
    std::vector<fs::path> candidates = {header.parent_path() / included};
    for (const fs::path& folder : folders) candidates.push_back(folder / included);
    for (const fs::path& candidate : candidates) {
      if (!fs::is_regular_file(candidate)) continue;
      out.push_back(candidate.lexically_normal());
      break;
    }
  }
  return out;
}

// Every header reachable from `root` through #include, itself included, as normalized paths.
Result<std::set<std::string>> include_closure(HeaderFiles& files, const fs::path& root,
                                              const std::vector<fs::path>& folders) {
  std::set<std::string> seen = {root.lexically_normal().string()};
  std::deque<fs::path> queue = {root.lexically_normal()};
  while (!queue.empty()) {
    Result<std::vector<fs::path>> included = resolved_includes(files, queue.front(), folders);
    queue.pop_front();
    if (!included) return included.error();
    for (const fs::path& header : *included)
      if (seen.insert(header.string()).second) queue.push_back(header);
  }
  return seen;
}

}  // namespace

Result<std::vector<GuardRule>> derive_guard_rules(const GuardSources& sources, const std::set<std::string>& leave) {
  const fs::path cuda_root = fs::path(sources.cuda_include).lexically_normal();
  HeaderFiles files;
  std::vector<fs::path> hip_folders;
  for (const std::string& include : sources.hip_includes) hip_folders.push_back(include);
  if (!sources.compat_dir.empty()) hip_folders.push_back(sources.compat_dir);

  // Per rule whose CUDA header is installed: what that header includes in CUDA, and, where it has
  // a HIP target, that target's path and what it includes in HIP.
  struct RuleReach {
    const HeaderRule* rule = nullptr;
    std::set<std::string> cuda;  // normalized paths
    fs::path target;             // empty: no HIP target found
    std::set<std::string> hip;
  };
  std::vector<RuleReach> reaches;
  for (const HeaderRule& rule : sources.headers) {
    fs::path header = cuda_root / rule.from;
    if (!fs::is_regular_file(header)) continue;
    RuleReach reach;
    reach.rule = &rule;
    Result<std::set<std::string>> cuda = include_closure(files, header, {cuda_root});
    if (!cuda) return cuda.error();
    reach.cuda = std::move(*cuda);
    if (!rule.to.empty()) {
      std::vector<fs::path> candidates;
      if (rule.compat) candidates.push_back(fs::path(sources.compat_dir) / rule.to);
      else
        for (const std::string& include : sources.hip_includes) candidates.push_back(fs::path(include) / rule.to);
      for (const fs::path& candidate : candidates) {
        if (!fs::is_regular_file(candidate)) continue;
        reach.target = candidate.lexically_normal();
        Result<std::set<std::string>> hip = include_closure(files, reach.target, hip_folders);
        if (!hip) return hip.error();
        reach.hip = std::move(*hip);
        break;
      }
    }
    reaches.push_back(std::move(reach));
  }

  // The rule standing for each CUDA header: the nearest one reaching it (rules with a HIP target
  // first, so cuComplex.h, which cublas_api.h and cufft.h both include, takes the HIP one).
  std::vector<std::pair<std::string, const RuleReach*>> owned;  // in order of discovery
  std::set<std::string> taken;
  for (int pass = 0; pass < 2; ++pass) {
    std::deque<std::pair<fs::path, const RuleReach*>> queue;
    for (const RuleReach& reach : reaches) {
      fs::path header = (cuda_root / reach.rule->from).lexically_normal();
      if (reach.target.empty() != (pass == 1) || !taken.insert(header.string()).second) continue;
      owned.emplace_back(header.string(), &reach);
      queue.emplace_back(header, &reach);
    }
    while (!queue.empty()) {
      auto [header, reach] = queue.front();
      queue.pop_front();
      Result<std::vector<fs::path>> included = resolved_includes(files, header, {cuda_root});
      if (!included) return included.error();
      for (const fs::path& next : *included) {
        if (!taken.insert(next.string()).second) continue;
        owned.emplace_back(next.string(), reach);
        queue.emplace_back(next, reach);
      }
    }
  }

  std::map<std::string, GuardRule> rules;
  for (const auto& [header, owner] : owned) {
    std::string relative = fs::path(header).lexically_relative(cuda_root).generic_string();
    if (relative.empty() || relative.starts_with("..")) continue;
    // The HIP guard answers "was this CUDA header included?" only when every CUDA header whose
    // HIP replacement brings the guard in includes this one: cuda.h and cuda_runtime.h both become
    // hip/hip_runtime.h, so its guard cannot tell whether cuda.h itself was included.
    std::string guard_to;
    if (!owner->target.empty()) {
      Result<const std::string*> target_text = files.text(owner->target);
      if (!target_text) return target_text.error();
      guard_to = include_guard(**target_text);
      for (const RuleReach& other : reaches)
        if (other.hip.count(owner->target.string()) && !other.cuda.count(header)) guard_to.clear();
    }
    Result<const std::string*> text = files.text(header);
    if (!text) return text.error();
    for (const auto& [name, value] : unconditional_macros(**text)) {
      if (leave.count(name) || rules.count(name)) continue;
      rules[name] = GuardRule{name, guard_to, relative};
    }
  }
  std::vector<GuardRule> out;
  for (auto& [name, rule] : rules) out.push_back(std::move(rule));
  return out;
}

}  // namespace tailforge
