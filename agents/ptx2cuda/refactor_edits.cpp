#include <algorithm>
#include <cctype>

#include "agents/ptx2cuda/refactor_passes.h"

namespace tailforge::cuda_refactor {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// Whether `left` written right before `right` would read as different tokens.
bool would_glue(const std::string& left, const std::string& right) {
  if (left.empty() || right.empty()) return false;
  char a = left.back(), b = right.front();
  if (is_word_char(a) && is_word_char(b)) return true;
  static const char* const gluing[] = {"++", "--", "+=", "-=", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&",
                                       "||", "&=", "|=", "*=", "/=", "%=", "^=", "::", "//", "/*", "*/"};
  for (const char* pair : gluing)
    if (pair[0] == a && pair[1] == b) return true;
  return false;
}

}  // namespace

TokenEdits no_edits(const TokenizedText& tokenized) {
  TokenEdits edits;
  edits.removed.assign(tokenized.tokens.size(), false);
  return edits;
}

std::string apply_token_edits(const TokenizedText& tokenized, const TokenEdits& edits) {
  std::string out, pending_whitespace, last_text;
  bool pending = false, inside_replacement = false;  // removed tokens after a replaced one are its tail
  for (size_t i = 0; i < tokenized.tokens.size(); ++i) {
    const Token& token = tokenized.tokens[i];
    if (edits.removed[i]) {
      if (!pending && !inside_replacement) pending_whitespace = token.whitespace;
      pending = pending || !inside_replacement;
      continue;
    }
    auto replacement = edits.replaced.find(i);
    const std::string& text = replacement == edits.replaced.end() ? token.text : replacement->second;
    const std::string& whitespace = pending && token.whitespace.empty() ? pending_whitespace : token.whitespace;
    bool edited_here = pending || replacement != edits.replaced.end();
    if (whitespace.empty() && edited_here && would_glue(last_text, text)) out.push_back(' ');
    out.append(whitespace);
    out.append(text);
    last_text = text;
    pending = false;
    inside_replacement = replacement != edits.replaced.end();
    auto inserted = edits.inserted_after.find(i);
    if (inserted != edits.inserted_after.end()) out += inserted->second;
  }
  return out + tokenized.trailing_whitespace;
}

std::string lexeme_text(const SourceLexemes& source, size_t first, size_t last, const std::vector<size_t>& left_out) {
  std::string out;
  bool space = false;
  for (size_t i = first; i <= last; ++i) {
    const Lexeme& lexeme = source.lexemes[i];
    const Token& token = source.tokenized.tokens[lexeme.first_token];
    space = space || (i > first && !token.whitespace.empty());
    if (std::binary_search(left_out.begin(), left_out.end(), i)) continue;
    if (space && !out.empty()) out += ' ';
    out += lexeme.text;
    space = false;
  }
  return out;
}

}  // namespace tailforge::cuda_refactor
