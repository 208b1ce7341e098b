#include <doctest/doctest.h>

#include <string>
#include <thread>

#include "store/cache.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

TEST_CASE("the cache stores, replaces and counts bytes per namespace") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("cache.db")).value());
  REQUIRE(cache_store(db, "compile", "a", std::string(1000, 'a')).ok());
  REQUIRE(cache_store(db, "compile", "b", std::string(500, 'b')).ok());
  REQUIRE(cache_store(db, "llm", "a", "answer").ok());
  CHECK(cache_bytes(db, "compile").value() == 1500);
  REQUIRE(cache_store(db, "compile", "a", std::string(10, 'x')).ok());  // replaced, not added
  CHECK(cache_bytes(db, "compile").value() == 510);
  CHECK(cache_count(db, "compile") == 2);
  CHECK(cache_lookup(db, "compile", "a") == std::optional<std::string>(std::string(10, 'x')));
  CHECK(cache_lookup(db, "llm", "a") == std::optional<std::string>("answer"));
  CHECK_FALSE(cache_lookup(db, "llm", "b").has_value());
}

TEST_CASE("a trim evicts the least recently used entries down to 90% of the cap, in one namespace only") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("cache.db")).value());
  for (int i = 0; i < 10; ++i) {
    REQUIRE(cache_store(db, "compile", "k" + std::to_string(i), std::string(1000, 'v')).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // distinct used_ms
  }
  REQUIRE(cache_store(db, "llm", "kept", std::string(5000, 'l')).ok());
  REQUIRE(cache_lookup(db, "compile", "k0").has_value());  // k0 is now the most recently used

  Result<CacheTrimOutcome> untouched = cache_trim(db, "compile", 10000);
  REQUIRE(untouched.ok());
  CHECK(untouched->removed == 0);

  Result<CacheTrimOutcome> trimmed = cache_trim(db, "compile", 5000);
  REQUIRE_MESSAGE(trimmed.ok(), trimmed.message());
  CHECK(trimmed->bytes_before == 10000);
  CHECK(trimmed->removed == 6);  // down to 4000 <= 4500
  CHECK(trimmed->bytes_after == 4000);
  CHECK(cache_bytes(db, "compile").value() == 4000);
  CHECK(cache_lookup(db, "compile", "k0").has_value());
  for (int i = 1; i <= 6; ++i) CHECK_FALSE(cache_lookup(db, "compile", "k" + std::to_string(i)).has_value());
  for (int i = 7; i <= 9; ++i) CHECK(cache_lookup(db, "compile", "k" + std::to_string(i)).has_value());
  CHECK(cache_bytes(db, "llm").value() == 5000);
}
