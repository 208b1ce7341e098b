// The corpus's near-duplicate index in the store: it answers as the in-memory index does over the
// same texts, adds only what was stored since its last catch-up (also after reopening the file),
// keeps tracks apart, and signs the corpus again under other MinHash options.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "store/cycles.h"
#include "store/samples.h"
#include "synth/minhash.h"
#include "synth/stored_index.h"
#include "test_support/query.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

// Programs in families: members of a family differ in one constant, families differ in shape.
std::string program(int family, int member) {
  std::string body;
  for (int line = 0; line < 6; ++line) {
    body += "  acc = acc * " + std::to_string(family * 7 + line + 3) + " + v[" + std::to_string((line * family) % 5) +
            "] - " + std::to_string(family + line) + ";\n";
  }
  return "int f" + std::to_string(family) + "(const int* v) {\n  int acc = " + std::to_string(member) + ";\n" + body +
         "  return acc;\n}\n";
}

std::string store(Database& db, const std::string& track, const std::string& text) {
  Sample sample{.track = track, .origin = "template", .language = "c", .text = text};
  return insert_sample_if_absent(db, sample).value().id;
}

}  // namespace

TEST_CASE("the stored index finds the near-duplicates the in-memory index finds, and only them") {
  TempDir dir;
  Database db = Database::open(dir.file("index.db")).value();
  MinHashOptions options;
  NearDuplicateIndex memory(options);
  for (int family = 1; family <= 12; ++family) {
    store(db, "c2x86", program(family, 0));
    memory.add(program(family, 0));
  }
  StoredNearDuplicateIndex stored(db, "c2x86", options);
  CHECK(stored.catch_up().value() == 12);
  CHECK(stored.catch_up().value() == 0);
  int near = 0;
  for (int family = 1; family <= 16; ++family) {  // families 13..16 are new shapes
    for (int member : {0, 1, 9}) {
      std::vector<uint64_t> shingles = shingle_hashes(program(family, member), options);
      bool in_memory = memory.find_near_duplicate_of_shingles(shingles).has_value();
      std::optional<std::string> found = stored.find_near_duplicate(shingles).value();
      CHECK_MESSAGE(found.has_value() == in_memory, "family " << family << " member " << member);
      near += found.has_value();
    }
  }
  CHECK(near >= 12);          // at least every stored text itself
  CHECK(near <= 36);          // and never a new family
}

TEST_CASE("the stored index adds only new samples, survives reopening, keeps tracks apart and re-signs under new options") {
  TempDir dir;
  std::string path = dir.file("index.db");
  MinHashOptions options;
  {
    Database db = Database::open(path).value();
    store(db, "c2x86", program(1, 0));
    store(db, "cuda2hip", program(2, 0));
    StoredNearDuplicateIndex index(db, "c2x86", options);
    CHECK(index.catch_up().value() == 1);
    store(db, "c2x86", program(3, 0));
    CHECK(index.catch_up().value() == 1);
  }
  Database db = Database::open(path).value();
  StoredNearDuplicateIndex again(db, "c2x86", options);
  CHECK(again.catch_up().value() == 0);  // signatures are in the file
  CHECK(again.find_near_duplicate(shingle_hashes(program(3, 0), options)).value().has_value());
  CHECK_FALSE(again.find_near_duplicate(shingle_hashes(program(2, 0), options)).value().has_value());  // other track

  MinHashOptions masked = options;
  masked.mask_numbers = true;
  StoredNearDuplicateIndex other(db, "c2x86", masked);
  CHECK(other.catch_up().value() == 2);
  CHECK(query_int(db, "SELECT count(DISTINCT options_key) FROM sample_signature") == 2);
  // Masking numbers makes every member of a family the same text.
  CHECK(other.find_near_duplicate(shingle_hashes(program(1, 77), other.hasher().options())).value().has_value());
}

TEST_CASE("an index bounded to a cycle does not see the samples of a later cycle") {
  TempDir dir;
  Database db = Database::open(dir.file("index.db")).value();
  int64_t current = start_cycle(db, 1, 0).value();
  int64_t next = start_cycle(db, 1, 0).value();
  Sample early{.track = "c2x86", .origin = "template", .language = "c", .text = program(3, 0), .cycle_id = current};
  Sample later{.track = "c2x86", .origin = "template", .language = "c", .text = program(5, 0), .cycle_id = next};
  REQUIRE(insert_sample_if_absent(db, early));
  REQUIRE(insert_sample_if_absent(db, later));
  StoredNearDuplicateIndex index(db, "c2x86", MinHashOptions{});
  REQUIRE(index.catch_up().value() == 2);
  index.see_cycles_up_to(current);
  CHECK(index.find_near_duplicate(shingle_hashes(program(3, 1), index.hasher().options())).value().has_value());
  CHECK_FALSE(index.find_near_duplicate(shingle_hashes(program(5, 1), index.hasher().options())).value().has_value());
  index.see_cycles_up_to(next);
  CHECK(index.find_near_duplicate(shingle_hashes(program(5, 1), index.hasher().options())).value().has_value());
}
