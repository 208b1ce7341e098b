#include "agents/baseline/dictionary.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>

namespace tailforge {
namespace {

bool slot_worthy(TokenKind kind) { return kind == TokenKind::identifier || kind == TokenKind::number; }

// A rule extracted at one place of a training source.
struct RuleSite {
  TranslationRule rule;
  size_t window = 0;  // which window of merged hunks, counting those with a valid candidate
};

// The candidate for one window of merged hunks with `context` common tokens on its left.
std::optional<TranslationRule> candidate_for(const std::vector<Token>& a, const std::vector<Token>& b,
                                             const std::vector<DiffHunk>& window, size_t context) {
  TranslationRule rule;
  const DiffHunk& first = window.front();
  const DiffHunk& last = window.back();
  for (size_t i = 0; i < context; ++i) {
    rule.from.push_back({.text = a[first.a_begin - context + i].text});
    const Token& to = b[first.b_begin - context + i];
    rule.to.push_back({.text = to.text, .whitespace = to.whitespace});
  }
  int slots = 0;
  for (size_t h = 0; h < window.size(); ++h) {
    const DiffHunk& hunk = window[h];
    for (size_t i = hunk.a_begin; i < hunk.a_end; ++i) rule.from.push_back({.text = a[i].text});
    for (size_t j = hunk.b_begin; j < hunk.b_end; ++j)
      rule.to.push_back({.text = b[j].text, .whitespace = b[j].whitespace});
    if (h + 1 == window.size()) break;
    // Common tokens between this hunk and the next: identifiers and numbers become slots.
    for (size_t i = hunk.a_end, j = hunk.b_end; i < window[h + 1].a_begin; ++i, ++j) {
      if (slot_worthy(a[i].kind)) {
        ++slots;
        rule.from.push_back({.slot = slots, .slot_kind = a[i].kind});
        rule.to.push_back({.slot = slots, .whitespace = b[j].whitespace});
      } else {
        rule.from.push_back({.text = a[i].text});
        rule.to.push_back({.text = b[j].text, .whitespace = b[j].whitespace});
      }
    }
  }
  if (rule.from.empty() || rule.from.front().slot != 0) return std::nullopt;
  if (!rule.to.empty()) rule.to.front().whitespace.clear();  // the match's own whitespace is used
  if (last.a_end < a.size() && last.b_end < b.size() && a[last.a_end].whitespace != b[last.b_end].whitespace) {
    rule.next_whitespace = b[last.b_end].whitespace;
  }
  return rule;
}

std::vector<RuleSite> extract_sites(const std::vector<Token>& a, const std::vector<Token>& b,
                                    const std::vector<DiffHunk>& hunks, const LearnOptions& options) {
  const size_t merge_gap = static_cast<size_t>(std::max(options.merge_gap, 0));
  std::vector<RuleSite> sites;
  size_t windows = 0;
  size_t previous_end = 0;  // end in a of the last window, where left context stops
  for (size_t h = 0; h < hunks.size();) {
    std::vector<DiffHunk> window{hunks[h++]};
    while (h < hunks.size() && hunks[h].a_begin - window.back().a_end <= merge_gap) {
      window.push_back(hunks[h++]);
    }
    size_t available = window.front().a_begin - previous_end;
    size_t max_context = std::min(available, static_cast<size_t>(std::max(options.max_context, 0)));
    bool any = false;
    for (size_t context = 0; context <= max_context; ++context) {
      auto rule = candidate_for(a, b, window, context);
      if (!rule) continue;
      sites.push_back({std::move(*rule), windows});
      any = true;
    }
    if (any) ++windows;
    previous_end = window.back().a_end;
  }
  return sites;
}

// Length-prefixed so that no two token lists share a key.
std::string pattern_key(const std::vector<RuleToken>& tokens) {
  std::string key;
  for (const RuleToken& token : tokens) {
    if (token.slot != 0) {
      key += "$" + std::to_string(token.slot) + (token.slot_kind == TokenKind::number ? "n" : "i") + ";";
    } else {
      key += std::to_string(token.text.size()) + ":" + token.text;
    }
  }
  return key;
}

std::string layout_key(const TranslationRule& rule) {
  std::string key;
  for (const RuleToken& token : rule.to) key += std::to_string(token.whitespace.size()) + ":" + token.whitespace;
  if (rule.next_whitespace) key += "|" + *rule.next_whitespace;
  return key;
}

// What learning knows of one candidate: the rows and sites it was seen in, and each layout of
// whitespace it came with (the most frequent one is kept).
struct CandidateStats {
  int64_t rows = 0;
  int64_t sites = 0;
  size_t last_row = SIZE_MAX;
  std::map<std::string, std::pair<int64_t, TranslationRule>> layouts;
};

// The training sources, tokens as ids, for counting where a from-pattern occurs.
struct SourceIndex {
  std::unordered_map<std::string, int> ids;
  std::vector<std::vector<int>> row_ids;
  std::vector<std::vector<TokenKind>> row_kinds;
  std::vector<int64_t> row_weights;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> positions;  // id -> (row, index)

  int id_of(const std::string& text) {
    auto [it, added] = ids.emplace(text, static_cast<int>(ids.size()));
    if (added) positions.emplace_back();
    return it->second;
  }
};

// Weighted count of the places in the training sources where `from` matches, found from the
// positions of its rarest literal token.
int64_t count_occurrences(const SourceIndex& index, const std::vector<RuleToken>& from) {
  std::vector<int> ids(from.size(), -1);
  size_t anchor = 0;
  size_t anchor_count = SIZE_MAX;
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i].slot != 0) continue;
    auto it = index.ids.find(from[i].text);
    if (it == index.ids.end()) return 0;
    ids[i] = it->second;
    if (index.positions[ids[i]].size() < anchor_count) {
      anchor_count = index.positions[ids[i]].size();
      anchor = i;
    }
  }
  int64_t count = 0;
  for (const auto& [row, position] : index.positions[ids[anchor]]) {
    if (position < anchor || position - anchor + from.size() > index.row_ids[row].size()) continue;
    size_t start = position - anchor;
    bool matches = true;
    for (size_t i = 0; i < from.size() && matches; ++i) {
      matches = from[i].slot != 0 ? index.row_kinds[row][start + i] == from[i].slot_kind
                                  : index.row_ids[row][start + i] == ids[i];
    }
    if (matches) count += index.row_weights[row];
  }
  return count;
}

std::string rule_side_text(const std::vector<RuleToken>& tokens) {
  std::string text;
  for (const RuleToken& token : tokens) {
    if (!text.empty()) text += " ";
    text += token.slot != 0 ? "$" + std::to_string(token.slot) : token.text;
  }
  return text;
}

bool rule_matches(const TranslationRule& rule, const std::vector<Token>& tokens, size_t at,
                  std::vector<const std::string*>& captures) {
  if (at + rule.from.size() > tokens.size()) return false;
  std::fill(captures.begin(), captures.end(), nullptr);
  for (size_t i = 0; i < rule.from.size(); ++i) {
    const RuleToken& want = rule.from[i];
    const Token& have = tokens[at + i];
    if (want.slot == 0 ? have.text != want.text : have.kind != want.slot_kind) return false;
    if (want.slot != 0) {
      if (captures.size() <= static_cast<size_t>(want.slot)) captures.resize(want.slot + 1, nullptr);
      captures[want.slot] = &have.text;
    }
  }
  return true;
}

}  // namespace

std::vector<std::vector<TranslationRule>> extract_rule_candidates(const std::string& source, const std::string& target,
                                                                  const LearnOptions& options) {
  TokenizedText a = tokenize_source(source);
  TokenizedText b = tokenize_source(target);
  std::vector<std::vector<TranslationRule>> windows;
  for (RuleSite& site : extract_sites(a.tokens, b.tokens, diff_token_texts(a.tokens, b.tokens), options)) {
    if (windows.empty() || site.window != windows.size() - 1) windows.emplace_back();
    site.rule.support = 1;
    windows.back().push_back(std::move(site.rule));
  }
  return windows;
}

BaselineDictionary learn_dictionary(const std::vector<TrainingPair>& pairs, const LearnOptions& options) {
  // Identical rows are learned once and weighted by how often they occur.
  std::map<std::pair<std::string, std::string>, size_t> row_of;
  std::vector<const TrainingPair*> rows;
  SourceIndex index;
  for (const TrainingPair& pair : pairs) {
    auto [it, added] = row_of.emplace(std::make_pair(pair.source, pair.target), rows.size());
    if (added) {
      rows.push_back(&pair);
      index.row_weights.push_back(0);
    }
    index.row_weights[it->second] += 1;
  }

  std::map<std::string, CandidateStats> candidates;
  for (size_t row = 0; row < rows.size(); ++row) {
    TokenizedText a = tokenize_source(rows[row]->source);
    TokenizedText b = tokenize_source(rows[row]->target);
    std::vector<int> a_ids, b_ids;
    std::vector<TokenKind> a_kinds;
    for (const Token& token : a.tokens) {
      int id = index.id_of(token.text);
      index.positions[id].push_back({static_cast<uint32_t>(row), static_cast<uint32_t>(a_ids.size())});
      a_ids.push_back(id);
      a_kinds.push_back(token.kind);
    }
    for (const Token& token : b.tokens) b_ids.push_back(index.id_of(token.text));
    int64_t weight = index.row_weights[row];
    for (RuleSite& site : extract_sites(a.tokens, b.tokens, diff_token_ids(a_ids, b_ids), options)) {
      CandidateStats& stats = candidates[pattern_key(site.rule.from) + "=>" + pattern_key(site.rule.to)];
      if (stats.last_row != row) {
        stats.rows += weight;
        stats.last_row = row;
      }
      stats.sites += weight;
      auto& layout = stats.layouts[layout_key(site.rule)];
      if (layout.first == 0) layout.second = std::move(site.rule);
      layout.first += weight;
    }
    index.row_ids.push_back(std::move(a_ids));
    index.row_kinds.push_back(std::move(a_kinds));
  }

  BaselineDictionary dictionary;
  dictionary.options = options;
  dictionary.training_rows = static_cast<int64_t>(pairs.size());
  for (auto& [key, stats] : candidates) {
    if (stats.rows < options.min_support) continue;
    // The most frequent whitespace layout; on a tie the first in key order.
    auto best = stats.layouts.begin();
    for (auto it = stats.layouts.begin(); it != stats.layouts.end(); ++it) {
      if (it->second.first > best->second.first) best = it;
    }
    TranslationRule rule = std::move(best->second.second);
    int64_t occurrences = count_occurrences(index, rule.from);
    rule.support = stats.rows;
    rule.precision = occurrences > 0 ? static_cast<double>(stats.sites) / static_cast<double>(occurrences) : 0;
    if (rule.precision >= options.min_precision) dictionary.rules.push_back(std::move(rule));
  }
  std::stable_sort(
      dictionary.rules.begin(), dictionary.rules.end(),
      [](const TranslationRule& x, const TranslationRule& y) { return describe_rule(x) < describe_rule(y); });
  return dictionary;
}

DictionaryOutput apply_dictionary(const BaselineDictionary& dictionary, const std::string& source) {
  // First token text -> rules, in the order they are tried.
  std::unordered_map<std::string, std::vector<size_t>> by_first_token;
  for (size_t r = 0; r < dictionary.rules.size(); ++r) {
    const TranslationRule& rule = dictionary.rules[r];
    if (!rule.from.empty() && rule.from.front().slot == 0) by_first_token[rule.from.front().text].push_back(r);
  }
  for (auto& [text, list] : by_first_token) {
    std::stable_sort(list.begin(), list.end(), [&](size_t x, size_t y) {
      const TranslationRule& rx = dictionary.rules[x];
      const TranslationRule& ry = dictionary.rules[y];
      if (rx.from.size() != ry.from.size()) return rx.from.size() > ry.from.size();
      return rx.support > ry.support;
    });
  }

  TokenizedText tokenized = tokenize_source(source);
  const std::vector<Token>& tokens = tokenized.tokens;
  DictionaryOutput out;
  std::optional<std::string> whitespace_override;
  std::vector<const std::string*> captures;
  for (size_t i = 0; i < tokens.size();) {
    std::string whitespace = whitespace_override.value_or(tokens[i].whitespace);
    whitespace_override.reset();
    const TranslationRule* match = nullptr;
    auto candidates = by_first_token.find(tokens[i].text);
    if (candidates != by_first_token.end()) {
      for (size_t r : candidates->second) {
        if (!rule_matches(dictionary.rules[r], tokens, i, captures)) continue;
        match = &dictionary.rules[r];
        out.applied_rules.push_back(r);
        break;
      }
    }
    if (match == nullptr) {
      out.text += whitespace + tokens[i].text;
      ++i;
      continue;
    }
    for (size_t t = 0; t < match->to.size(); ++t) {
      const RuleToken& token = match->to[t];
      out.text += t == 0 ? whitespace : token.whitespace;
      if (token.slot == 0) {
        out.text += token.text;
      } else if (static_cast<size_t>(token.slot) < captures.size() && captures[token.slot] != nullptr) {
        out.text += *captures[token.slot];
      }
    }
    whitespace_override = match->next_whitespace;
    i += match->from.size();
  }
  out.text += tokenized.trailing_whitespace;
  return out;
}

std::string describe_rule(const TranslationRule& rule) {
  return rule_side_text(rule.from) + " => " + rule_side_text(rule.to);
}

}  // namespace tailforge
