#include "agents/token_diff.h"

#include "text/cpp_lexer.h"

#include <algorithm>
#include <unordered_map>

namespace tailforge {
namespace {

TokenKind kind_of(text::CppTokenKind kind) {
  switch (kind) {
    case text::CppTokenKind::identifier: return TokenKind::identifier;
    case text::CppTokenKind::number: return TokenKind::number;
    case text::CppTokenKind::string_literal: return TokenKind::string_literal;
    case text::CppTokenKind::char_literal: return TokenKind::char_literal;
    case text::CppTokenKind::comment: return TokenKind::comment;
    case text::CppTokenKind::whitespace:
    case text::CppTokenKind::punctuation: break;
  }
  return TokenKind::punctuation;
}

// The edit that brings diagonal k to step d: a step down (an insertion, from diagonal k + 1) or
// right (a deletion, from k - 1), whichever reaches further without leaving the n x m grid.
// start_x is where the snake of step d begins, -1 when no move stays inside the grid.
struct Move {
  bool down = false;
  long start_x = -1;
};

template <typename Furthest>
Move choose_move(const Furthest& before, long k, long d, long n, long m) {
  long down_x = k < d ? before(k + 1) : -1;
  if (down_x >= 0 && down_x - k > m) down_x = -1;
  long right_x = k > -d && before(k - 1) >= 0 ? before(k - 1) + 1 : -1;
  if (right_x > n) right_x = -1;
  if (down_x < 0 && right_x < 0) return {};
  return down_x >= right_x ? Move{true, down_x} : Move{false, right_x};
}

// Hunks from the aligned (common) index pairs, given in increasing order.
std::vector<DiffHunk> hunks_between(const std::vector<std::pair<size_t, size_t>>& common, size_t a_size,
                                    size_t b_size) {
  std::vector<DiffHunk> hunks;
  size_t a = 0, b = 0;
  auto close_gap = [&](size_t a_next, size_t b_next) {
    if (a_next > a || b_next > b) hunks.push_back({a, a_next, b, b_next});
  };
  for (const auto& [x, y] : common) {
    close_gap(x, y);
    a = x + 1;
    b = y + 1;
  }
  close_gap(a_size, b_size);
  return hunks;
}

}  // namespace

TokenizedText tokenize_source(const std::string& text) {
  TokenizedText out;
  size_t previous_end = 0;
  for (size_t at = 0; at < text.size();) {
    text::CppToken token = text::next_cpp_token(text, at);
    at = token.end;
    if (token.kind == text::CppTokenKind::whitespace) continue;
    Token& added = out.tokens.emplace_back();
    added.kind = kind_of(token.kind);
    added.whitespace = text.substr(previous_end, token.begin - previous_end);
    added.text = text.substr(token.begin, token.end - token.begin);
    previous_end = token.end;
  }
  out.trailing_whitespace = text.substr(previous_end);
  return out;
}

std::string join_tokens(const TokenizedText& tokenized) {
  std::string out;
  for (const Token& token : tokenized.tokens) out += token.whitespace + token.text;
  return out + tokenized.trailing_whitespace;
}

std::vector<DiffHunk> diff_token_ids(const std::vector<int>& a, const std::vector<int>& b, size_t max_edits) {
  // The common prefix and suffix are aligned before Myers' search runs on the middle.
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix])
    ++suffix;
  const long n = static_cast<long>(a.size() - prefix - suffix);
  const long m = static_cast<long>(b.size() - prefix - suffix);
  auto same = [&](long x, long y) { return a[prefix + x] == b[prefix + y]; };

  // furthest[k + offset]: the furthest x reached on diagonal k = x - y (-1: none inside the
  // grid). trace[d] keeps the diagonals -d..d after d edits, for walking back.
  const long limit = std::min<long>(n + m, static_cast<long>(max_edits));
  const long offset = limit + 1;
  std::vector<long> furthest(2 * offset + 1, -1);
  std::vector<std::vector<long>> trace;
  long found = -1;
  for (long d = 0; d <= limit && found < 0; ++d) {
    auto before = [&](long diagonal) { return furthest[offset + diagonal]; };
    for (long k = -d; k <= d; k += 2) {
      Move move = d == 0 ? Move{true, 0} : choose_move(before, k, d, n, m);
      long x = move.start_x;
      if (x < 0) {
        furthest[offset + k] = -1;
        continue;
      }
      long y = x - k;
      while (x < n && y < m && same(x, y)) {
        ++x;
        ++y;
      }
      furthest[offset + k] = x;
      if (x == n && y == m) found = d;
    }
    trace.emplace_back(furthest.begin() + offset - d, furthest.begin() + offset + d + 1);
  }

  std::vector<std::pair<size_t, size_t>> common;
  for (size_t i = 0; i < prefix; ++i) common.push_back({i, i});
  if (found >= 0) {
    std::vector<std::pair<size_t, size_t>> middle;  // collected backwards
    long x = n, y = m;
    for (long d = found; d >= 0; --d) {
      long k = x - y;
      if (d > 0) {
        const std::vector<long>& previous = trace[d - 1];  // diagonals -(d-1)..(d-1)
        Move move = choose_move([&](long diagonal) { return previous[diagonal + d - 1]; }, k, d, n, m);
        long previous_k = move.down ? k + 1 : k - 1;
        for (; x > move.start_x; --x, --y) middle.push_back({prefix + x - 1, prefix + y - 1});
        x = previous[previous_k + d - 1];
        y = x - previous_k;
      } else {
        for (; x > 0; --x, --y) middle.push_back({prefix + x - 1, prefix + y - 1});
      }
    }
    common.insert(common.end(), middle.rbegin(), middle.rend());
  }
  for (size_t i = 0; i < suffix; ++i) common.push_back({a.size() - suffix + i, b.size() - suffix + i});
  return hunks_between(common, a.size(), b.size());
}

std::vector<DiffHunk> diff_token_texts(const std::vector<Token>& a, const std::vector<Token>& b, size_t max_edits) {
  std::unordered_map<std::string, int> ids;
  auto to_ids = [&](const std::vector<Token>& tokens) {
    std::vector<int> out;
    out.reserve(tokens.size());
    for (const Token& token : tokens)
      out.push_back(ids.emplace(token.text, static_cast<int>(ids.size())).first->second);
    return out;
  };
  std::vector<int> a_ids = to_ids(a);
  std::vector<int> b_ids = to_ids(b);
  return diff_token_ids(a_ids, b_ids, max_edits);
}

}  // namespace tailforge
