#include "verifier/compare.h"

#include <doctest/doctest.h>

#include <thread>

using namespace tailforge;

TEST_CASE("numbers within the normalized absolute error match, words must be exact") {
  CHECK(compare_outputs("sum = 1000.0 PASSED", "sum = 1000.9 PASSED").equal);
  CHECK_FALSE(compare_outputs("sum = 1000.0 PASSED", "sum = 1001.1 PASSED").equal);
  CHECK(compare_outputs("x 0.0001", "x 0.0009").equal);    // |a| < 1: absolute error
  CHECK_FALSE(compare_outputs("x 0.0001", "x 0.0012").equal);
  CHECK_FALSE(compare_outputs("CUDA ok", "HIP ok").equal);
}

TEST_CASE("the first differing tokens are named") {
  CompareResult result = compare_outputs("y[0] = 2.5 y[1] = 3.0", "y[0] = 2.5 y[1] = 3.5");
  CHECK_FALSE(result.equal);
  CHECK(result.first_difference_index == 9);
  CHECK(result.expected_token == "3.0");
  CHECK(result.actual_token == "3.5");
  CHECK(result.message.find("expected '3.0', got '3.5'") != std::string::npos);
}

TEST_CASE("a missing token at the end is a difference") {
  CompareResult result = compare_outputs("a 1 2", "a 1");
  CHECK_FALSE(result.equal);
  CHECK(result.expected_token == "2");
  CHECK(result.actual_token.empty());
}

TEST_CASE("the tolerance is configurable and whitespace layout does not matter") {
  CHECK(compare_outputs("1.0\n2.0", "1.05   2.0", {0.1}).equal);
  CHECK_FALSE(compare_outputs("1.0\n2.0", "1.05   2.0", {0.01}).equal);
  CHECK(compare_outputs("nan inf", "nan inf").equal);
  CHECK_FALSE(compare_outputs("inf", "-inf").equal);
}

TEST_CASE("numbers inside words become their own tokens") {
  auto tokens = output_tokens("y[10]=2.5e3,");
  REQUIRE(tokens.size() == 5);
  CHECK(tokens[0] == "y[");
  CHECK(tokens[1] == "10");
  CHECK(tokens[2] == "]=");
  CHECK(tokens[3] == "2.5e3");
  CHECK(tokens[4] == ",");
}

TEST_CASE("tokens that differ between two runs of one program can be left out of a comparison") {
  std::string first = "result 42.0 time 0.1281 ms OK", second = "result 42.0 time 0.1217 ms OK";
  std::vector<size_t> unstable = unstable_tokens(first, second);
  REQUIRE(unstable.size() == 1);
  CHECK(unstable[0] == 3);
  CHECK(unstable_tokens(first, "result 42.0 time 0.12811 ms OK").empty());  // within the tolerance
  CHECK(unstable_tokens(first, "result 42.0 OK").empty());                  // positions cannot be matched

  // The translation's own timing differs: equal once the unstable token is left out.
  std::string translated = "result 42.0 time 0.2000 ms OK";
  CHECK_FALSE(compare_outputs(first, translated).equal);
  CompareResult masked = compare_outputs(first, translated, {1e-3, unstable});
  CHECK(masked.equal);
  CHECK(masked.tokens_ignored == 1);
  CHECK(masked.tokens_compared == 5);  // the left-out token is not counted as compared
  // A wrong result stays a mismatch: only the unstable positions are left out.
  CHECK_FALSE(compare_outputs(first, "result 41.0 time 0.2000 ms OK", {1e-3, unstable}).equal);
}

TEST_CASE("a number before a measurement unit is a measurement, not a result") {
  std::vector<std::string> units = {"ms", "GB/s"};
  std::vector<size_t> measured = measurement_tokens("block 32 | time 0.1281 ms | bandwidth 315.31 GB/s | 7 ms", units);
  REQUIRE(measured.size() == 3);
  CHECK(measured[0] == 4);  // 0.1281
  CHECK(measured[1] == 8);  // 315.31
  CHECK(measured[2] == 11); // 7
  CHECK(measurement_tokens("error ms 3", units).empty());  // a unit after a word measures nothing
  CHECK(measurement_tokens("total 42", units).empty());
}

TEST_CASE("a token of a million characters is compared on a worker thread's stack: equal to itself, then named") {
  // The original matcher recursed once per character and overflowed an 8 MiB thread stack at a
  // few tens of thousands; the scanner's stack use does not depend on the token.
  std::string digits(1'000'000, '7');
  std::string changed = digits;
  changed[changed.size() - 1] = '8';
  std::string words(1'000'000, 'x');
  std::string words_changed = words;
  words_changed[500'000] = 'y';
  CompareResult same, different, same_words, different_words;
  std::thread worker([&] {
    same = compare_outputs("result " + digits + "\n", "result " + digits + "\n");
    different = compare_outputs("result " + digits + "\n", "result " + changed + "\n");
    same_words = compare_outputs(words, words);
    different_words = compare_outputs(words, words_changed);
  });
  worker.join();
  CHECK(same.equal);
  CHECK_FALSE(different.equal);
  CHECK(different.first_difference_index == 1);
  CHECK(different.expected_token == digits);
  CHECK(different.message.find("expected '" + digits.substr(0, 64) + "... (1000000 characters)'") != std::string::npos);
  CHECK(different.message.size() < 400);
  CHECK(same_words.equal);
  CHECK_FALSE(different_words.equal);
}

TEST_CASE("numbers too large for a double are compared as text, not as two infinities") {
  std::string huge = "1" + std::string(400, '0');
  CHECK(compare_outputs(huge, huge).equal);
  CHECK_FALSE(compare_outputs(huge, "2" + std::string(400, '0')).equal);
  CHECK(compare_outputs("1e999", "1e999").equal);
  CHECK_FALSE(compare_outputs("1e999", "1e998").equal);
}

TEST_CASE("the number scanner splits words as the pattern it replaced did") {
  auto tokens_of = [](const std::string& text) {
    std::string joined;
    for (const std::string& token : output_tokens(text)) joined += "[" + token + "]";
    return joined;
  };
  CHECK(tokens_of("x-5") == "[x][-5]");
  CHECK(tokens_of("1.e5 .5 1e 1e+ -.25E-2") == "[1.e5][.5][1][e][1][e+][-.25E-2]");
  CHECK(tokens_of("infinity inform NaN xnan -inf. +Inf") == "[infinity][inform][NaN][x][nan][-inf][.][+Inf]");
  CHECK(tokens_of("a+b 3.14.15") == "[a+b][3.14][.15]");
  CHECK(tokens_of("5nan") == "[5][nan]");
}
