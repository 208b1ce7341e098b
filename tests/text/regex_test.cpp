#include "text/regex.h"

#include <doctest/doctest.h>

#include <string>
#include <thread>

namespace tailforge::text {

TEST_CASE("a pattern matches a token of a million characters without growing the stack") {
  std::string token(1'000'000, '7');
  // A thread with a small stack: libstdc++'s recursive matcher overflows 8 MiB at tens of
  // thousands of characters; this one must not grow with the input at all.
  bool matched = false, iterated = false;
  std::thread worker([&] {
    Regex number(R"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)");
    matched = regex_match(token, number);
    iterated = count_matches("a " + token + " b", number) == 1;
  });
  worker.join();
  CHECK(matched);
  CHECK(iterated);
}

TEST_CASE("anchors and dot keep std::regex's ECMAScript meaning unless multiline is asked") {
  CHECK_FALSE(regex_search("first\nsecond", Regex("^second")));
  CHECK(regex_search("first\nsecond", Regex("^second", {.multiline = true})));
  CHECK_FALSE(regex_search("a\nb", Regex("a.b")));
  CHECK(regex_search("ERROR here", Regex("error", {.icase = true})));
  Match match;
  REQUIRE(regex_search("file.cu:12: bad", match, Regex(R"(^([^:]+):(\d+):)")));
  CHECK(match[1] == "file.cu");
  CHECK(match[2] == "12");
}

TEST_CASE("a replacement's backslash is an ordinary character, $& and $1 are the match") {
  CHECK(regex_replace("a.b$c", Regex(R"([.$])"), "\\$&") == "a\\.b\\$c");
  CHECK(regex_replace("x=12 y=3", Regex(R"((\w)=(\d+))"), "$2:$1") == "12:x 3:y");
}

TEST_CASE("a match past the matcher's bound is no match, never an exception") {
  // Nested quantifiers over a long input without a match: exponential backtracking, which
  // Boost.Regex stops at its complexity bound.
  std::string text(200'000, 'a');
  text += 'b';
  Regex pathological("(a*)*c");
  CHECK_FALSE(regex_search(text, pathological));
  Match match;
  CHECK_FALSE(regex_search(text, match, pathological));
  CHECK(regex_replace(text, pathological, "x") == text);
  CHECK(count_matches(text, pathological) == 0);
}

TEST_CASE("a malformed pattern throws RegexError at construction") {
  CHECK_THROWS_AS(Regex("(unclosed"), RegexError);
}

TEST_CASE("for_each_match stops when the visitor says so") {
  int seen = 0;
  size_t visited = for_each_match("a1 b2 c3", Regex(R"(\d)"), [&](const Match&) { return ++seen < 2; });
  CHECK(visited == 2);
}

}  // namespace tailforge::text
