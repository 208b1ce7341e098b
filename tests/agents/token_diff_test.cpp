#include "agents/token_diff.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace tailforge;

namespace {

std::vector<std::string> texts(const TokenizedText& tokenized) {
  std::vector<std::string> out;
  for (const Token& token : tokenized.tokens) out.push_back(token.text);
  return out;
}

// Length of a longest common subsequence, by the textbook table: the reference for the diff.
size_t lcs_length(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<std::vector<size_t>> table(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      table[i][j] = a[i - 1] == b[j - 1] ? table[i - 1][j - 1] + 1 : std::max(table[i - 1][j], table[i][j - 1]);
    }
  }
  return table[a.size()][b.size()];
}

}  // namespace

TEST_CASE("joining the tokens gives back every byte of odd text") {
  std::vector<std::string> samples = {
      "",
      "  \n\t ",
      "int x=1;",
      "a+++b // done",
      "  float f = 1.5e-3f + .25 + 0x1P+4 - 3u;\n\n",
      "const char* s = u8\"h\\\"i\"; wchar_t c = L'\\''; /* unterminated",
      "printf(\"open\n  string on next line\"); char q = '",
      "#include <cuda_runtime.h>\r\n  x = y ;   \t",
      "caf\xc3\xa9 = `@$`;",
  };
  for (const std::string& text : samples) {
    CAPTURE(text);
    CHECK(join_tokens(tokenize_source(text)) == text);
  }
}

TEST_CASE("literals, comments and numbers are one token each, other symbols one char each") {
  TokenizedText tokenized = tokenize_source(
      "x = 1.5e-3f+y; // note: cudaMalloc\n"
      "s = u8\"a\\\"b\" /* c\nd */ 'q' L'\\n' 0x1Fu .5");
  CHECK(texts(tokenized) == std::vector<std::string>{"x", "=", "1.5e-3f", "+", "y", ";", "// note: cudaMalloc", "s",
                                                     "=", "u8\"a\\\"b\"", "/* c\nd */", "'q'", "L'\\n'", "0x1Fu",
                                                     ".5"});
  CHECK(tokenized.tokens[6].kind == TokenKind::comment);
  CHECK(tokenized.tokens[6].whitespace == " ");
  CHECK(tokenized.tokens[7].whitespace == "\n");
  CHECK(tokenized.tokens[9].kind == TokenKind::string_literal);
  CHECK(tokenized.tokens[12].kind == TokenKind::char_literal);
  CHECK(tokenized.tokens[14].kind == TokenKind::number);
}

TEST_CASE("a raw string and a digit-separated number are one token each") {
  std::string text = "auto s = u8R\"x(a \"b\" )\" c)x\"; long n = 1'000'000 + 0x1'Fu;";
  TokenizedText tokenized = tokenize_source(text);
  CHECK(texts(tokenized) == std::vector<std::string>{"auto", "s", "=", "u8R\"x(a \"b\" )\" c)x\"", ";", "long", "n",
                                                     "=", "1'000'000", "+", "0x1'Fu", ";"});
  CHECK(tokenized.tokens[3].kind == TokenKind::string_literal);
  CHECK(tokenized.tokens[8].kind == TokenKind::number);
  CHECK(join_tokens(tokenized) == text);
}

TEST_CASE("the token diff keeps a longest common subsequence and ignores whitespace") {
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<int> a(random() % 60), b(random() % 60);
    for (int& x : a) x = static_cast<int>(random() % 4);
    for (int& x : b) x = static_cast<int>(random() % 4);
    std::vector<DiffHunk> hunks = diff_token_ids(a, b);
    // Outside the hunks the two sides must pair up token for token.
    size_t common = 0, i = 0, j = 0;
    for (size_t h = 0; h <= hunks.size(); ++h) {
      size_t a_stop = h < hunks.size() ? hunks[h].a_begin : a.size();
      size_t b_stop = h < hunks.size() ? hunks[h].b_begin : b.size();
      REQUIRE(a_stop - i == b_stop - j);
      for (; i < a_stop; ++i, ++j, ++common) REQUIRE(a[i] == b[j]);
      if (h < hunks.size()) {
        i = hunks[h].a_end;
        j = hunks[h].b_end;
      }
    }
    CHECK(common == lcs_length(a, b));
  }
  std::vector<int> far_apart_a(300, 1), far_apart_b(300, 2);
  CHECK(diff_token_ids(far_apart_a, far_apart_b, 10).size() == 1);  // past max_edits: one hunk

  TokenizedText a = tokenize_source("CHECK(cudaMalloc(&p, n));");
  TokenizedText b = tokenize_source("CHECK( hipMalloc(&p,\n n) );");
  std::vector<DiffHunk> hunks = diff_token_texts(a.tokens, b.tokens);
  REQUIRE(hunks.size() == 1);
  CHECK(hunks[0].a_begin == 2);
  CHECK(hunks[0].a_end == 3);
  CHECK(b.tokens[hunks[0].b_begin].text == "hipMalloc");
}
