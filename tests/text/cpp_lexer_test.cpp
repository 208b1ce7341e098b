#include "text/cpp_lexer.h"

#include <doctest/doctest.h>

#include <chrono>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace tailforge::text {
namespace {

using Kind = CppTokenKind;
using Tokens = std::vector<std::pair<Kind, std::string>>;
using Spelled = std::pair<Kind, std::string>;

// Every token of `text` but whitespace, as (kind, spelling); checks on the way that the tokens
// cover the text end to end.
Tokens tokens_of(std::string_view text) {
  Tokens out;
  size_t at = 0;
  while (at < text.size()) {
    CppToken token = next_cpp_token(text, at);
    REQUIRE(token.begin == at);
    REQUIRE(token.end > at);
    REQUIRE(token.end <= text.size());
    at = token.end;
    if (token.kind != Kind::whitespace)
      out.emplace_back(token.kind, std::string(text.substr(token.begin, token.end - token.begin)));
  }
  return out;
}

CppToken first_token(std::string_view text) { return next_cpp_token(text, 0); }

std::string body_of(std::string_view text, const CppToken& token) {
  return std::string(text.substr(token.body_begin, token.body_end - token.body_begin));
}

// Seconds to lex all of `text`, and the number of tokens.
std::pair<double, size_t> lex_all(std::string_view text) {
  auto start = std::chrono::steady_clock::now();
  size_t count = 0;
  for (size_t at = 0; at < text.size(); ++count) at = next_cpp_token(text, at).end;
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), count};
}

}  // namespace

TEST_CASE("identifiers, punctuation and whitespace split plain code") {
  std::string code = "int x_1 = a+++b;\n\tif (x) return;";
  Tokens expected = {{Kind::identifier, "int"}, {Kind::identifier, "x_1"},    {Kind::punctuation, "="},
                     {Kind::identifier, "a"},   {Kind::punctuation, "+"},     {Kind::punctuation, "+"},
                     {Kind::punctuation, "+"},  {Kind::identifier, "b"},      {Kind::punctuation, ";"},
                     {Kind::identifier, "if"},  {Kind::punctuation, "("},     {Kind::identifier, "x"},
                     {Kind::punctuation, ")"},  {Kind::identifier, "return"}, {Kind::punctuation, ";"}};
  CHECK(tokens_of(code) == expected);
  CppToken space = next_cpp_token(code, 16);
  CHECK(space.kind == Kind::whitespace);
  CHECK(space.end == 18);  // "\n\t" is one run
}

TEST_CASE("line and block comments are one token each, an unterminated one runs to the end") {
  CHECK(tokens_of("a // note */ b\nc") ==
        Tokens{{Kind::identifier, "a"}, {Kind::comment, "// note */ b"}, {Kind::identifier, "c"}});
  CHECK(tokens_of("a /* x\n // y */ b") ==
        Tokens{{Kind::identifier, "a"}, {Kind::comment, "/* x\n // y */"}, {Kind::identifier, "b"}});
  CppToken open = first_token("/* never closed\n x = 1;");
  CHECK(open.kind == Kind::comment);
  CHECK(open.end == 23);
  CHECK_FALSE(open.closed);
  CHECK(first_token("// last line").end == 12);
  CHECK(tokens_of("a / b") == Tokens{{Kind::identifier, "a"}, {Kind::punctuation, "/"}, {Kind::identifier, "b"}});
}

TEST_CASE("a line comment ending in a backslash goes on over the next line") {
  CHECK(tokens_of("// one \\\ntwo\nthree") == Tokens{{Kind::comment, "// one \\\ntwo"}, {Kind::identifier, "three"}});
  CHECK(tokens_of("// crlf \\\r\ntwo\r\nthree") ==
        Tokens{{Kind::comment, "// crlf \\\r\ntwo\r"}, {Kind::identifier, "three"}});
  CHECK(tokens_of("// a \\ b\nc").back() == Spelled{Kind::identifier, "c"});
  CHECK(tokens_of("//\\").front().second == "//\\");
}

TEST_CASE("strings and chars take escapes and end at their line when left open") {
  std::string text = R"(s = "a\"b\\" + 'c' + '\'' + "tab\t";)";
  Tokens tokens = tokens_of(text);
  REQUIRE(tokens.size() == 10);
  CHECK(tokens[2] == Spelled{Kind::string_literal, R"("a\"b\\")"});
  CHECK(tokens[4] == Spelled{Kind::char_literal, "'c'"});
  CHECK(tokens[6] == Spelled{Kind::char_literal, R"('\'')"});
  CHECK(tokens[8] == Spelled{Kind::string_literal, R"("tab\t")"});
  std::string open = "\"open\nnext";
  CppToken token = first_token(open);
  CHECK(token.end == 5);  // the newline is not the literal's
  CHECK_FALSE(token.closed);
  CHECK(body_of(open, token) == "open");
  std::string continued = "\"one \\\ntwo\" x";
  CHECK(first_token(continued).end == 11);  // a backslash before the newline continues it
  CHECK(first_token(continued).closed);
  CHECK_FALSE(first_token("'\\").closed);
  CHECK(first_token("'\\").end == 2);
}

TEST_CASE("encoding prefixes belong to their literal; other words before a quote do not") {
  for (std::string prefix : {"L", "u", "U", "u8"}) {
    std::string text = prefix + "\"x\" " + prefix + "'y'";
    Tokens tokens = tokens_of(text);
    CAPTURE(prefix);
    REQUIRE(tokens.size() == 2);
    CHECK(tokens[0] == Spelled{Kind::string_literal, prefix + "\"x\""});
    CHECK(tokens[1] == Spelled{Kind::char_literal, prefix + "'y'"});
    CppToken token = first_token(text);
    CHECK(token.prefix == prefix.size());
    CHECK(body_of(text, token) == "x");
    CHECK_FALSE(token.raw);
  }
  CHECK(tokens_of("u16\"x\"") == Tokens{{Kind::identifier, "u16"}, {Kind::string_literal, "\"x\""}});
  CHECK(tokens_of("\"s\"sv") == Tokens{{Kind::string_literal, "\"s\""}, {Kind::identifier, "sv"}});
}

TEST_CASE("a raw string is one token up to its own delimiter, with any prefix") {
  std::string text = "R\"(a \"quoted\" )\\n // not a comment\n)\" + 1";
  CppToken token = first_token(text);
  CHECK(token.kind == Kind::string_literal);
  CHECK(token.raw);
  CHECK(token.prefix == 1);
  CHECK(text.substr(token.begin, token.end) == "R\"(a \"quoted\" )\\n // not a comment\n)\"");
  CHECK(body_of(text, token) == "a \"quoted\" )\\n // not a comment\n");
  std::string delimited = "u8R\"xy(one )\" )x\" )xy\" end";
  token = first_token(delimited);
  CHECK(token.prefix == 3);
  CHECK(body_of(delimited, token) == "one )\" )x\" ");
  CHECK(delimited.substr(token.end) == " end");
  for (std::string prefix : {"LR", "uR", "UR"}) {
    CAPTURE(prefix);
    CHECK(tokens_of(prefix + "\"(x)\"") == Tokens{{Kind::string_literal, prefix + "\"(x)\""}});
  }
  CppToken open = first_token("R\"e(never closed)\" )f\"");
  CHECK_FALSE(open.closed);
  CHECK(open.end == 22);
}

TEST_CASE("a quote after R without a valid delimiter is an ordinary string") {
  // A space, a backslash or 17 characters: no raw string, so the R is a word of its own.
  CHECK(tokens_of("R\"a b(x)a b\"") == Tokens{{Kind::identifier, "R"}, {Kind::string_literal, "\"a b(x)a b\""}});
  CHECK(tokens_of("R\"abcdefghijklmnopq(x)abcdefghijklmnopq\"").front() == Spelled{Kind::identifier, "R"});
  CHECK(first_token("R\"abcdefghijklmnop(x)abcdefghijklmnop\"").raw);  // 16 is allowed
  CHECK(tokens_of("R\"no paren\n") == Tokens{{Kind::identifier, "R"}, {Kind::string_literal, "\"no paren"}});
  CHECK(tokens_of("XR\"(x)\"").front() == Spelled{Kind::identifier, "XR"});
  CHECK(tokens_of("R'x'").front() == Spelled{Kind::identifier, "R"});
}

TEST_CASE("numbers keep exponents, suffixes and digit separators") {
  for (std::string number : {"0", "42", "1.5e-3f", "1E+10", ".25", "3.", "0x1p+4", "0x1.8P-3L", "10ull", "0xFFu",
                             "1'000'000", "0x1'F", "0b1010'0101", "1'5e-3", "0XDEAD'BEEFull", "1e10_km"}) {
    CAPTURE(number);
    CHECK(tokens_of(number + ";") == Tokens{{Kind::number, number}, {Kind::punctuation, ";"}});
  }
  CHECK(tokens_of("1+2") == Tokens{{Kind::number, "1"}, {Kind::punctuation, "+"}, {Kind::number, "2"}});
  CHECK(tokens_of("x.y") == Tokens{{Kind::identifier, "x"}, {Kind::punctuation, "."}, {Kind::identifier, "y"}});
  // A quote after a number that no digit or letter follows starts a char literal.
  CHECK(tokens_of("1'+'") == Tokens{{Kind::number, "1"}, {Kind::char_literal, "'+'"}});
  CHECK(tokens_of("a1'0'").back() == Spelled{Kind::char_literal, "'0'"});
}

TEST_CASE("NUL, non-ASCII and stray bytes are punctuation, one byte each") {
  std::string text("a\0\xff$@`\\", 7);
  Tokens tokens = tokens_of(text);
  REQUIRE(tokens.size() == 7);
  CHECK(tokens[0].first == Kind::identifier);
  for (size_t i = 1; i < tokens.size(); ++i) CHECK(tokens[i] == Spelled{Kind::punctuation, text.substr(i, 1)});
  CppToken past = next_cpp_token("ab", 5);
  CHECK(past.kind == Kind::whitespace);
  CHECK(past.begin == 2);
  CHECK(past.end == 2);
}

TEST_CASE("hostile text of 10 MB on one line lexes in linear time") {
  const size_t size = size_t{10} << 20;
  std::vector<std::pair<std::string, std::string>> inputs = {
      {"quotes", std::string(size, '"')},       {"open comments", std::string(size, '/') + "*"},
      {"apostrophes", std::string(size, '\'')}, {"backslashes", std::string(size, '\\')},
      {"digits", std::string(size, '7')},       {"word", std::string(size, 'R')},
  };
  auto repeated = [&](const std::string& unit) {
    std::string out;
    while (out.size() < size) out += unit;
    return out;
  };
  inputs.push_back({"/* repeated", repeated("/*")});
  inputs.push_back({"R\"x( repeated", repeated("R\"x(")});
  inputs.push_back({"R\"x( with )x", repeated("R\"x()x)")});
  inputs.push_back({"long raw delimiters", repeated("R\"abcdefghijklmnop")});
  inputs.push_back({"// with backslash lines", repeated("//\\\n")});
  inputs.push_back({"1'1'", repeated("1'")});
  std::mt19937_64 random(43);
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(random());
  inputs.push_back({"random bytes", bytes});
  for (const auto& [name, text] : inputs) {
    CAPTURE(name);
    auto [seconds, tokens] = lex_all(text);
    CHECK(tokens > 0);
    CHECK(seconds < 5.0);  // a linear pass takes a fraction of a second; quadratic work would take hours
  }
  CHECK(lex_all(repeated("R\"x(")).second == 1);  // one unterminated raw string
}

}  // namespace tailforge::text
