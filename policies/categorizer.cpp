#include "policies/categorizer.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "store/failures.h"
#include "text/regex.h"

namespace tailforge {

namespace {

using json = nlohmann::json;

// Bounds on the text each rule reads, for time: the matcher's stack does not grow with the text.
constexpr size_t kMaxDiagnostics = 256 * 1024;  // longer text is cut before matching
constexpr size_t kMaxLine = 4096;              // a line is matched up to this length
constexpr size_t kMaxMultiline = 16 * 1024;    // multiline rules see this much text

bool glob_match(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// The longest run of literal characters that every match of `pattern` must contain, or "" when
// the pattern has alternatives or no such run. Used to skip a regex cheaply.
std::string required_literal(const std::string& pattern) {
  if (pattern.find('|') != std::string::npos) return "";
  std::string best, run;
  auto flush = [&] {
    if (run.size() > best.size()) best = run;
    run.clear();
  };
  int depth = 0;  // characters inside a group may be optional: never collected
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '(' || c == ')') {
      depth += c == '(' ? 1 : -1;
      flush();
    } else if (depth > 0) {
      if (c == '\\') ++i;
    } else if (c == '\\' && i + 1 < pattern.size()) {
      char next = pattern[++i];
      if (std::isalnum(static_cast<unsigned char>(next))) {
        flush();
      } else {
        run += next;
      }
    } else if (c == '*' || c == '?' || c == '{') {
      if (!run.empty()) run.pop_back();  // the quantified character is optional or repeated
      flush();
      if (c == '{') i = pattern.find('}', i) == std::string::npos ? pattern.size() : pattern.find('}', i);
    } else if (c == '+') {
      flush();
    } else if (c == '[') {
      flush();
      size_t close = pattern.find(']', i + 2);
      i = close == std::string::npos ? pattern.size() : close;
    } else if (c == '.' || c == '^' || c == '$') {
      flush();
    } else {
      run += c;
    }
  }
  flush();
  return best;
}

std::string snake_case(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (std::isupper(c)) {
      if (i > 0 && !out.empty() && out.back() != '_') out += '_';
      out += static_cast<char>(std::tolower(c));
    } else if (std::isalnum(c)) {
      out += static_cast<char>(c);
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

std::string trim(std::string_view text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return "";
  size_t end = text.find_last_not_of(" \t");
  return std::string(text.substr(begin, end - begin + 1));
}

bool is_noise(std::string_view line) {
  return line.find("warning:") != std::string_view::npos || line.find("Assembler messages:") != std::string_view::npos;
}

// The line a human would read first: the first error line, else the first non-noise line.
std::string pick_message_line(const std::vector<std::string_view>& lines) {
  for (std::string_view line : lines) {
    if (is_noise(line)) continue;
    if (line.find("error") != std::string_view::npos || line.find("Error") != std::string_view::npos ||
        line.find("ERROR") != std::string_view::npos) {
      return trim(line.substr(0, kMaxLine));
    }
  }
  for (std::string_view line : lines) {
    if (!is_noise(line) && !trim(line).empty()) return trim(line.substr(0, kMaxLine));
  }
  return "";
}

std::string synthesized_line(const Taxonomy& taxonomy, const FailureEvidence& evidence) {
  if (evidence.timed_out) return "timed out";
  if (evidence.signal) {
    auto name = taxonomy.signal_names.find(*evidence.signal);
    return "killed by signal " + std::to_string(*evidence.signal) +
           (name != taxonomy.signal_names.end() ? " (" + name->second + ")" : "");
  }
  if (!evidence.reason.empty()) return evidence.reason;
  if (evidence.exit_code) return "exit code " + std::to_string(*evidence.exit_code);
  return "";
}

struct RuleMatch {
  bool matched = false;
  std::string line;
  std::string group;
};

RuleMatch match_pattern(const MatchRule& rule, std::string_view text, const std::vector<std::string_view>& lines) {
  RuleMatch result;
  if (!rule.required_literal.empty() && text.find(rule.required_literal) == std::string_view::npos) return result;
  text::ViewMatch match;
  if (rule.multiline) {
    std::string_view window = text.substr(0, kMaxMultiline);
    if (!text::regex_search(window, match, *rule.pattern)) return result;
    size_t offset = static_cast<size_t>(match[0].first - window.begin());
    size_t line_start = window.rfind('\n', offset);
    line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
    result.line = trim(split_lines(window.substr(line_start)).front());
  } else {
    bool found = false;
    for (std::string_view line : lines) {
      std::string_view capped = line.substr(0, kMaxLine);
      if (!rule.required_literal.empty() && capped.find(rule.required_literal) == std::string_view::npos) continue;
      if (text::regex_search(capped, match, *rule.pattern)) {
        result.line = trim(capped);
        found = true;
        break;
      }
    }
    if (!found) return result;
  }
  if (match.size() > 1 && match[1].matched) result.group = match[1].str();
  result.matched = true;
  return result;
}

bool conditions_hold(const MatchRule& rule, const FailureEvidence& evidence) {
  if (!rule.stages.empty() &&
      std::none_of(rule.stages.begin(), rule.stages.end(),
                   [&](const std::string& glob) { return glob_match(glob, evidence.stage); })) {
    return false;
  }
  if (rule.timed_out && *rule.timed_out != evidence.timed_out) return false;
  if (rule.signal) {
    if (!evidence.signal) return false;
    if (*rule.signal != -1 && *rule.signal != *evidence.signal) return false;
  }
  if (rule.exit_code) {
    if (!evidence.exit_code) return false;
    if (*rule.exit_code == -1 ? *evidence.exit_code == 0 : *rule.exit_code != *evidence.exit_code) return false;
  }
  for (const std::string& tag : rule.features_all) {
    if (std::find(evidence.features.begin(), evidence.features.end(), tag) == evidence.features.end()) return false;
  }
  return true;
}

std::string expand_path(const Taxonomy& taxonomy, const std::string& path, const std::string& group,
                        const FailureEvidence& evidence) {
  std::string out = path;
  if (size_t at = out.find("{1}"); at != std::string::npos) {
    std::string name = snake_case(group);
    out.replace(at, 3, name.empty() ? "other" : name);
  }
  if (size_t at = out.find("{signal}"); at != std::string::npos) {
    std::string name = "signal_" + std::to_string(evidence.signal.value_or(0));
    if (evidence.signal) {
      auto known = taxonomy.signal_names.find(*evidence.signal);
      if (known != taxonomy.signal_names.end()) name = known->second;
    }
    out.replace(at, 8, name);
  }
  auto alias = taxonomy.aliases.find(out);
  return alias == taxonomy.aliases.end() ? out : alias->second;
}

void fill_evidence_location(const Taxonomy& taxonomy, Categorization& result) {
  for (const EvidencePattern& evidence : taxonomy.evidence_patterns) {
    text::Match match;
    if (text::regex_search(result.message_line, match, evidence.pattern) && match.size() > 2) {
      result.evidence_file = match[1].str();
      try {
        result.evidence_line = std::stoi(match[2].str());
      } catch (const std::exception&) {
        result.evidence_line.reset();
      }
      return;
    }
  }
}

}  // namespace

std::string parent_category(const std::string& path) {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

Categorization categorize(const Taxonomy& taxonomy, const FailureEvidence& evidence) {
  std::string_view text = std::string_view(evidence.diagnostics).substr(0, kMaxDiagnostics);
  std::vector<std::string_view> lines = split_lines(text);
  Categorization result;
  for (const Category& category : taxonomy.categories) {
    for (const MatchRule& rule : category.rules) {
      if (!conditions_hold(rule, evidence)) continue;
      RuleMatch match;
      if (rule.reason_pattern) {
        text::Match reason_match;
        if (!text::regex_search(evidence.reason, reason_match, *rule.reason_pattern)) continue;
        if (reason_match.size() > 1) match.group = reason_match[1].str();
      }
      if (rule.pattern) {
        std::string reason_group = match.group;
        match = match_pattern(rule, text, lines);
        if (!match.matched) continue;
        if (match.group.empty()) match.group = reason_group;
      }
      result.category = expand_path(taxonomy, category.path, match.group, evidence);
      result.message_line = !match.line.empty() ? match.line : pick_message_line(lines);
      if (result.message_line.empty()) result.message_line = synthesized_line(taxonomy, evidence);
      fill_evidence_location(taxonomy, result);
      return result;
    }
  }
  result.category = (evidence.stage.empty() ? std::string("unknown") : evidence.stage) + ".uncategorized";
  result.message_line = pick_message_line(lines);
  if (result.message_line.empty()) result.message_line = synthesized_line(taxonomy, evidence);
  fill_evidence_location(taxonomy, result);
  return result;
}

namespace {

// Reading one JSON value of a rule; errors name the file and the JSON path.
struct RuleReader {
  const std::string& file;
  std::string where;

  Error error(const std::string& key, const std::string& what) const {
    return make_error(file + ": " + where + "." + key + ": " + what);
  }
};

Result<text::Regex> compile_regex(const RuleReader& reader, const std::string& key, const std::string& text, bool icase) {
  try {
    return text::Regex(text, {.icase = icase});
  } catch (const text::RegexError& e) {
    return reader.error(key, "invalid regex '" + text + "': " + e.what());
  }
}

Result<MatchRule> parse_rule(const RuleReader& reader, const json& object) {
  static const std::vector<std::string> known = {"stage", "regex", "multiline", "icase", "reason",
                                                 "timed_out", "signal", "exit_code", "features"};
  if (!object.is_object()) return make_error(reader.file + ": " + reader.where + ": expected an object");
  for (const auto& [key, value] : object.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) return reader.error(key, "unknown key");
  }
  MatchRule rule;
  bool icase = object.value("icase", false);
  rule.multiline = object.value("multiline", false);
  if (object.contains("stage")) {
    const json& stage = object["stage"];
    if (stage.is_string()) {
      rule.stages.push_back(stage.get<std::string>());
    } else if (stage.is_array()) {
      for (const json& glob : stage) {
        if (!glob.is_string()) return reader.error("stage", "expected strings");
        rule.stages.push_back(glob.get<std::string>());
      }
    } else {
      return reader.error("stage", "expected a glob or a list of globs");
    }
  }
  if (object.contains("regex")) {
    if (!object["regex"].is_string()) return reader.error("regex", "expected a string");
    rule.pattern_text = object["regex"].get<std::string>();
    Result<text::Regex> compiled = compile_regex(reader, "regex", rule.pattern_text, icase);
    if (!compiled) return compiled.error();
    rule.pattern = std::move(compiled.value());
    if (!icase) rule.required_literal = required_literal(rule.pattern_text);
  }
  if (object.contains("reason")) {
    if (!object["reason"].is_string()) return reader.error("reason", "expected a string");
    Result<text::Regex> compiled = compile_regex(reader, "reason", object["reason"].get<std::string>(), icase);
    if (!compiled) return compiled.error();
    rule.reason_pattern = std::move(compiled.value());
  }
  if (object.contains("timed_out")) {
    if (!object["timed_out"].is_boolean()) return reader.error("timed_out", "expected true or false");
    rule.timed_out = object["timed_out"].get<bool>();
  }
  for (const char* key : {"signal", "exit_code"}) {
    if (!object.contains(key)) continue;
    const json& value = object[key];
    std::optional<int> parsed;
    if (value.is_number_integer()) parsed = value.get<int>();
    if (value == "any" || value == "nonzero") parsed = -1;
    if (!parsed) return reader.error(key, "expected an integer, \"any\" or \"nonzero\"");
    (std::string_view(key) == "signal" ? rule.signal : rule.exit_code) = parsed;
  }
  if (object.contains("features")) {
    if (!object["features"].is_array()) return reader.error("features", "expected a list of tags");
    for (const json& tag : object["features"]) {
      if (!tag.is_string()) return reader.error("features", "expected strings");
      rule.features_all.push_back(tag.get<std::string>());
    }
  }
  return rule;
}

void add_with_parents(Taxonomy& taxonomy, const std::string& path, const std::string& description) {
  if (path.find('{') != std::string::npos) {
    add_with_parents(taxonomy, parent_category(path.substr(0, path.find('{'))) , "");
    return;
  }
  if (path.empty()) return;
  std::string& slot = taxonomy.descriptions[path];
  if (slot.empty()) slot = description;
  add_with_parents(taxonomy, parent_category(path), "");
}

Status parse_taxonomy(Taxonomy& taxonomy, const json& root) {
  const std::string& file = taxonomy.source_path;
  if (!root.is_object() || !root.contains("categories") || !root["categories"].is_array()) {
    return make_error(file + ": expected an object with a \"categories\" list");
  }
  const json signal_names = root.value("signal_names", json::object());
  for (const auto& [number, name] : signal_names.items()) {
    try {
      taxonomy.signal_names[std::stoi(number)] = name.get<std::string>();
    } catch (const std::exception&) {
      return make_error(file + ": signal_names." + number + ": expected a number mapped to a name");
    }
  }
  const json aliases = root.value("aliases", json::object());
  for (const auto& [from, to] : aliases.items()) {
    if (!to.is_string()) return make_error(file + ": aliases." + from + ": expected a category path");
    taxonomy.aliases[from] = to.get<std::string>();
  }
  const json patterns = root.value("evidence_patterns", json::array());
  for (size_t i = 0; i < patterns.size(); ++i) {
    RuleReader reader{file, "evidence_patterns"};
    if (!patterns[i].is_string()) return reader.error(std::to_string(i), "expected a regex string");
    Result<text::Regex> compiled = compile_regex(reader, std::to_string(i), patterns[i].get<std::string>(), false);
    if (!compiled) return compiled.error();
    taxonomy.evidence_patterns.push_back({std::move(compiled.value())});
  }
  const json descriptions = root.value("descriptions", json::object());
  for (const auto& [path, description] : descriptions.items()) {
    if (!description.is_string()) return make_error(file + ": descriptions." + path + ": expected a string");
    add_with_parents(taxonomy, path, description.get<std::string>());
  }
  const json& categories = root["categories"];
  for (size_t i = 0; i < categories.size(); ++i) {
    std::string where = "categories[" + std::to_string(i) + "]";
    const json& entry = categories[i];
    if (!entry.is_object() || !entry.contains("path") || !entry["path"].is_string() || entry["path"] == "") {
      return make_error(file + ": " + where + ".path: expected a non-empty category path");
    }
    Category category;
    category.path = entry["path"].get<std::string>();
    category.description = entry.value("description", "");
    if (!entry.contains("rules") || !entry["rules"].is_array() || entry["rules"].empty()) {
      return make_error(file + ": " + where + ".rules: expected a non-empty list (" + category.path + ")");
    }
    for (size_t r = 0; r < entry["rules"].size(); ++r) {
      RuleReader reader{file, where + ".rules[" + std::to_string(r) + "]"};
      Result<MatchRule> rule = parse_rule(reader, entry["rules"][r]);
      if (!rule) return rule.error();
      category.rules.push_back(std::move(rule.value()));
    }
    add_with_parents(taxonomy, category.path, category.description);
    taxonomy.categories.push_back(std::move(category));
  }
  for (const auto& [from, to] : taxonomy.aliases) add_with_parents(taxonomy, to, "");
  return {};
}

}  // namespace

Result<Taxonomy> load_taxonomy(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error("cannot read taxonomy file " + path);
  Taxonomy taxonomy;
  taxonomy.source_path = path;
  try {
    json root = json::parse(in);
    if (Status s = parse_taxonomy(taxonomy, root); !s) return s.error();
  } catch (const json::exception& e) {
    return make_error(path + ": " + e.what());
  }
  return taxonomy;
}

std::string normalize_message(std::string message) { return normalize_failure_message(std::move(message)); }

}  // namespace tailforge
