// The failure taxonomy: categories and their match rules, loaded from policies/taxonomy.json,
// and the categorizer that assigns one category path to one failed stage. It stores nothing
// (store/failures.h does) and runs no tool; it only reads the evidence it is given.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "text/regex.h"

namespace tailforge {

// What a failed stage left behind.
struct FailureEvidence {
  std::string stage;        // dotted stage name, e.g. amd.assemble.gfx1100, nvidia.run
  std::string diagnostics;  // the tool's stderr/stdout as captured
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool timed_out = false;
  std::vector<std::string> features;  // the sample's feature tags
  std::string reason;                 // the stage's short reason (agents: rate_limited, ...)
};

struct Categorization {
  std::string category;      // e.g. amd.asm.register_alignment or <stage>.uncategorized
  std::string message_line;  // the diagnostics line that decided it (or a synthesized one)
  std::optional<std::string> evidence_file;
  std::optional<int> evidence_line;
};

// One match rule; every condition present must hold. Loaded from a category's "rules".
struct MatchRule {
  std::vector<std::string> stages;  // globs ('*' matches anything); empty: every stage
  std::optional<text::Regex> pattern;  // over diagnostics, line by line unless `multiline`
  std::string pattern_text;
  std::string required_literal;  // a substring every match contains: a cheap pre-filter
  bool multiline = false;
  std::optional<text::Regex> reason_pattern;
  std::optional<bool> timed_out;
  std::optional<int> signal;   // -1: any signal
  std::optional<int> exit_code;  // -1: any non-zero exit code
  std::vector<std::string> features_all;  // every tag must be present
};

struct Category {
  std::string path;  // may hold {1} (the regex's first group, snake_cased) or {signal}
  std::string description;
  std::vector<MatchRule> rules;
};

struct EvidencePattern {
  text::Regex pattern;  // group 1: file, group 2: line
};

struct Taxonomy {
  std::string source_path;
  std::vector<Category> categories;                   // file order: first match wins
  std::map<std::string, std::string> descriptions;    // every fixed path and its parents
  std::map<int, std::string> signal_names;            // 11 -> sigsegv
  std::map<std::string, std::string> aliases;         // templated result -> preferred path
  std::vector<EvidencePattern> evidence_patterns;
};

// Loads and validates the taxonomy; regexes are compiled once here. Errors name the file and
// the JSON path ("categories[4].rules[0].regex").
Result<Taxonomy> load_taxonomy(const std::string& path);

// Assigns one category. Never throws; unmatched evidence gives "<stage>.uncategorized".
Categorization categorize(const Taxonomy& taxonomy, const FailureEvidence& evidence);

// Masks what varies between occurrences of one message (quoted names, numbers, hex, paths), so
// that equal problems cluster: "a.s:1:12: error: undefined label 'x'" -> "<path>:<n>:<n>: error:
// undefined label '<id>'".
std::string normalize_message(std::string message);

// "amd.asm.register_alignment" -> "amd.asm"; "" for a top-level path.
std::string parent_category(const std::string& path);

}  // namespace tailforge
