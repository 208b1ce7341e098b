// The baseline CUDA->HIP learner: a phrase table of token rewrites learned from the aligned
// pairs of a training snapshot, and its application to new sources. It knows only what its
// training pairs taught it (a construct seen too rarely stays untranslated); it neither
// compiles nor verifies anything, and it holds no CUDA or HIP knowledge of its own.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agents/token_diff.h"
#include "base/result.h"

namespace tailforge {

struct TrainingPair {
  std::string source;  // CUDA
  std::string target;  // HIP
};

struct LearnOptions {
  int max_context = 3;         // common tokens on the left kept as context: 0..max_context
  int merge_gap = 2;           // hunks at most this many common tokens apart form one window
  int min_support = 3;         // training rows a rule must be seen in
  double min_precision = 0.9;  // share of the from-pattern's occurrences where the rule was seen
};

// One token of a rule. A literal has text; a slot ($1, $2, ...) stands for any token of its
// kind (identifier or number) and is copied from the from-side match to the to-side.
struct RuleToken {
  std::string text;  // empty for a slot
  int slot = 0;      // 0: literal
  TokenKind slot_kind = TokenKind::identifier;
  std::string whitespace;  // to-side only: written in front of the token (not for the first)
};

struct TranslationRule {
  std::vector<RuleToken> from;  // never empty, never starts with a slot
  std::vector<RuleToken> to;
  std::optional<std::string> next_whitespace;  // replaces the whitespace of the token after a match
  int64_t support = 0;                         // training rows it was seen in
  double precision = 0;
};

struct BaselineDictionary {
  LearnOptions options;
  int64_t training_rows = 0;
  std::vector<TranslationRule> rules;  // sorted by describe_rule's text
};

// The candidate rules one aligned pair yields, before any filter: one list per window of merged
// hunks, in source order, holding its valid candidates by growing left context (support 1).
std::vector<std::vector<TranslationRule>> extract_rule_candidates(const std::string& source, const std::string& target,
                                                                  const LearnOptions& options = {});

// Learns from every row (a duplicated row counts again). Same rows and options, same dictionary.
BaselineDictionary learn_dictionary(const std::vector<TrainingPair>& pairs, const LearnOptions& options = {});

struct DictionaryOutput {
  std::string text;
  std::vector<size_t> applied_rules;  // an index into dictionary.rules per rewrite, in source order
};

// Rewrites source left to right with the longest matching rule (ties: higher support, then
// earlier rule); every token no rule matches is copied byte for byte.
DictionaryOutput apply_dictionary(const BaselineDictionary& dictionary, const std::string& source);

// "cudaMemcpyToSymbol ( $1 => hipMemcpyToSymbol ( HIP_SYMBOL ( $1 )": a rule for messages.
std::string describe_rule(const TranslationRule& rule);

// {"format": "tailforge-baseline-dictionary/1", "options", "training_rows", "rules": [{"from",
// "to", "support", "precision", "next_whitespace"?}]}; a token is {"text"} or {"slot", "kind"},
// plus "whitespace" on the to-side. Saving then loading gives back an equal dictionary.
nlohmann::json dictionary_to_json(const BaselineDictionary& dictionary);
// Validates the format tag and every field; errors name `source_name` and the JSON path.
Result<BaselineDictionary> dictionary_from_json(const nlohmann::json& document, const std::string& source_name);
Status save_dictionary(const BaselineDictionary& dictionary, const std::string& path);
Result<BaselineDictionary> load_dictionary(const std::string& path);

// The training rows of an exported snapshot (synth/export.h): <dir>/manifest.json names the
// format (alpaca, sharegpt, jsonl) and files.train. The eval file is never read. Errors name the file.
Result<std::vector<TrainingPair>> read_snapshot_pairs(const std::string& snapshot_dir);

}  // namespace tailforge
