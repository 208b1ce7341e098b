#include "policies/feature_tags.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <optional>

#include <nlohmann/json.hpp>

namespace tailforge {

namespace {

using json = nlohmann::json;

Result<json> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error("cannot read " + path);
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    return make_error(path + ": " + e.what());
  }
}

// The name of a rules-file entry {"<name_key>": string, "<list_key>": [...]}; none for another shape.
std::optional<std::string> rule_entry_name(const json& entry, const char* name_key, const char* list_key) {
  if (!entry.is_object() || !entry.contains(name_key) || !entry[name_key].is_string() || !entry.contains(list_key) ||
      !entry[list_key].is_array()) {
    return std::nullopt;
  }
  return entry[name_key].get<std::string>();
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

size_t occurrences(const std::string& haystack, const std::string& needle) {
  size_t count = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size())) {
    bool word_start = at == 0 || !std::isalnum(static_cast<unsigned char>(haystack[at - 1]));
    if (word_start) ++count;
  }
  return count;
}

}  // namespace

Result<FeatureRules> load_feature_rules(const std::string& path) {
  Result<json> root = read_file(path);
  if (!root) return root.error();
  FeatureRules rules;
  for (const auto& [language, list] : root->items()) {
    if (language == "comment") continue;
    if (!list.is_array()) return make_error(path + ": " + language + ": expected a list of rules");
    for (size_t i = 0; i < list.size(); ++i) {
      std::string where = path + ": " + language + "[" + std::to_string(i) + "]";
      const json& entry = list[i];
      std::optional<std::string> tag = rule_entry_name(entry, "tag", "regex");
      if (!tag) return make_error(where + ": expected {\"tag\": string, \"regex\": [strings]}");
      FeatureRule rule{*tag, {}};
      for (const json& pattern : entry["regex"]) {
        if (!pattern.is_string()) return make_error(where + ".regex: expected strings");
        try {
          rule.patterns.emplace_back(pattern.get<std::string>());
        } catch (const text::RegexError& e) {
          return make_error(where + ".regex: invalid regex '" + pattern.get<std::string>() + "': " + e.what());
        }
      }
      rules.by_language[language].push_back(std::move(rule));
    }
  }
  return rules;
}

Result<DomainRules> load_domain_rules(const std::string& path) {
  Result<json> root = read_file(path);
  if (!root) return root.error();
  DomainRules rules;
  if (!root->is_object() || !root->contains("domains") || !(*root)["domains"].is_array()) {
    return make_error(path + ": expected an object with a \"domains\" list");
  }
  if (root->contains("default")) {
    if (!(*root)["default"].is_string()) return make_error(path + ": default: expected a domain name");
    rules.fallback = (*root)["default"].get<std::string>();
  }
  const json& domains = (*root)["domains"];
  for (size_t i = 0; i < domains.size(); ++i) {
    const json& entry = domains[i];
    std::string where = path + ": domains[" + std::to_string(i) + "]";
    std::optional<std::string> name = rule_entry_name(entry, "name", "keywords");
    if (!name) return make_error(where + ": expected {\"name\": string, \"keywords\": [strings]}");
    DomainRule rule{*name, {}};
    for (const json& keyword : entry["keywords"]) {
      if (!keyword.is_string() || keyword.get<std::string>().empty()) return make_error(where + ".keywords: expected non-empty strings");
      rule.keywords.push_back(lower(keyword.get<std::string>()));
    }
    rules.domains.push_back(std::move(rule));
  }
  return rules;
}

std::vector<std::string> feature_tags(const FeatureRules& rules, const std::string& language, const std::string& source) {
  std::vector<std::string> tags;
  auto it = rules.by_language.find(language == "hip" ? "cuda" : language);
  if (it == rules.by_language.end()) return tags;
  for (const FeatureRule& rule : it->second) {
    bool matched = false;
    for (const text::Regex& pattern : rule.patterns) {
      try {
        if (text::regex_search(source, pattern)) {
          matched = true;
          break;
        }
      } catch (const std::exception&) {
        // a source too complex for this pattern: the tag stays unset
      }
    }
    if (matched && std::find(tags.begin(), tags.end(), rule.tag) == tags.end()) tags.push_back(rule.tag);
  }
  return tags;
}

std::string classify_domain(const DomainRules& rules, const std::string& text) {
  std::string haystack = lower(text);
  std::string best = rules.fallback;
  size_t best_score = 0;
  for (const DomainRule& domain : rules.domains) {
    size_t score = 0;
    for (const std::string& keyword : domain.keywords) score += occurrences(haystack, keyword);
    if (score > best_score) {
      best_score = score;
      best = domain.name;
    }
  }
  return best;
}

}  // namespace tailforge
