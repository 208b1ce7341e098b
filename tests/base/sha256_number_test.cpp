#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "base/number.h"
#include "base/sha256.h"

using namespace tailforge;

TEST_CASE("SHA-256 matches the standard's test vectors; the 64-bit prefix is its first 16 hex digits") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex(std::string("a\0b", 3)) != sha256_hex("ab"));  // bytes, not a C string
  CHECK(sha256_prefix64("abc") == 0xba7816bf8f01cfeaULL);
  CHECK(sha256_prefix64("") == std::stoull(sha256_hex("").substr(0, 16), nullptr, 16));
}

TEST_CASE("numbers from untrusted text: the whole text or nothing, never a throw") {
  int64_t value = 0;
  CHECK(parse_int64("-42", value));
  CHECK(value == -42);
  CHECK(parse_int64("ff", value, 16));
  CHECK(value == 255);
  CHECK_FALSE(parse_int64("12x", value));
  CHECK_FALSE(parse_int64("", value));
  CHECK_FALSE(parse_int64("99999999999999999999", value));  // past int64: an answer, not a crash
  CHECK(parse_int64("9223372036854775807", value));

  CHECK(whole_number_of("+7") == 7);
  CHECK_FALSE(whole_number_of("7.5").has_value());
  CHECK_FALSE(whole_number_of("+").has_value());
  CHECK(number_of("2.5e3") == 2500.0);
  CHECK_FALSE(number_of("inf").has_value());
  CHECK_FALSE(number_of("nan").has_value());
  CHECK_FALSE(number_of("1e999").has_value());
  CHECK_FALSE(number_of("1 ").has_value());
  CHECK(number_pair_of("0.5,2") == std::make_pair(0.5, 2.0));
  CHECK_FALSE(number_pair_of("1;2").has_value());
  CHECK_FALSE(number_pair_of("1,x").has_value());
  std::string long_digits(1 << 20, '9');  // a megabyte on one line
  CHECK_FALSE(whole_number_of(long_digits).has_value());
  CHECK_FALSE(number_of(long_digits + "x").has_value());
}
