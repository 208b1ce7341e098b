// Feature tags (shared memory, atomics, switch, float literals, ...) and the CASS-style domain of a
// program, both from keyword/regex tables in policies/feature_rules.json and policies/domains.json.
// It only reads source text; it neither parses the language nor stores anything.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "text/regex.h"

namespace tailforge {

struct FeatureRule {
  std::string tag;
  std::vector<text::Regex> patterns;  // any match sets the tag
};

struct FeatureRules {
  std::map<std::string, std::vector<FeatureRule>> by_language;  // "cuda", "c"; "hip" uses "cuda"
};

struct DomainRule {
  std::string name;
  std::vector<std::string> keywords;  // lower case
};

struct DomainRules {
  std::string fallback = "general compute";
  std::vector<DomainRule> domains;  // ties go to the earlier domain
};

// Load and validate the tables; errors name the file and the JSON path.
Result<FeatureRules> load_feature_rules(const std::string& path);
Result<DomainRules> load_domain_rules(const std::string& path);

// The tags whose rules match `source`, in table order; an unknown language gives none.
std::vector<std::string> feature_tags(const FeatureRules& rules, const std::string& language, const std::string& source);

// The domain whose keywords occur most often in `text` (a program, prompt or description).
std::string classify_domain(const DomainRules& rules, const std::string& text);

}  // namespace tailforge
