// Near-duplicates decide what enters evaluation sets, exports and the corpus, so none at or above
// the threshold may slip through: LSH only proposes, the exact Jaccard similarity of the shingle
// sets decides. Pairs are made at similarities around the threshold (0.75 to 1) and each index
// must report exactly those at or above it.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "store/samples.h"
#include "synth/minhash.h"
#include "synth/stored_index.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

struct Pair {
  std::string base, copy;
  double similarity = 0;
};

// A text of distinct words (so its shingle count is known) and a copy with `changed` of them
// replaced; words carry the pair's number, so texts of different pairs share nothing.
Pair make_pair(std::mt19937_64& random, int number, int words, int changed, const MinHashOptions& options) {
  std::vector<std::string> tokens;
  for (int i = 0; i < words; ++i) tokens.push_back("w" + std::to_string(number) + "_" + std::to_string(i));
  std::vector<std::string> copy = tokens;
  for (int i = 0; i < changed; ++i) copy[random() % copy.size()] = "x" + std::to_string(number) + "_" + std::to_string(i);
  Pair pair;
  for (const std::string& token : tokens) pair.base += token + " ";
  for (const std::string& token : copy) pair.copy += token + " ";
  pair.similarity = shingle_jaccard(pair.base, pair.copy, options);
  return pair;
}

// Pairs spread over 0.7..1, at least `per_band` in each of [0.75, 0.8), [0.8, 0.85), [0.85, 0.9),
// [0.9, 0.99) and [0.99, 1].
std::vector<Pair> pairs_around(double threshold, int per_band, const MinHashOptions& options) {
  std::mt19937_64 random(2026);
  std::vector<Pair> pairs;
  std::map<int, int> in_band;
  auto band_of = [](double s) { return s >= 0.99 ? 4 : s >= 0.9 ? 3 : s >= 0.85 ? 2 : s >= 0.8 ? 1 : s >= 0.75 ? 0 : -1; };
  for (int number = 0; pairs.size() < 5u * per_band && number < 200000; ++number) {
    int words = 150 + static_cast<int>(random() % 600);
    // Each changed word removes up to k shingles of each side: aim near the threshold.
    double target = threshold - 0.07 + 0.3 * static_cast<double>(random() % 1000) / 1000.0;
    int changed = static_cast<int>(std::lround(words * (1 - target) / (1 + target) / options.shingle_tokens));
    Pair pair = make_pair(random, number, words, std::max(0, changed), options);
    int band = band_of(pair.similarity);
    if (band < 0 || in_band[band] >= per_band) continue;
    ++in_band[band];
    pairs.push_back(std::move(pair));
  }
  for (int band = 0; band < 5; ++band) REQUIRE(in_band[band] == per_band);
  return pairs;
}

}  // namespace

TEST_CASE("the bands leave a pair at the threshold unproposed less than once in a million") {
  for (double threshold : {0.5, 0.7, 0.8, 0.9}) {
    LshBands bands = choose_lsh_bands(128, threshold);
    CAPTURE(threshold);
    CHECK(bands.bands * bands.rows <= 128);
    CHECK(std::pow(1 - std::pow(threshold, bands.rows), bands.bands) <= 1e-6);
  }
}

TEST_CASE("no pair at or above the threshold is missed, and none below it is reported, in memory or in the store") {
  MinHashOptions options;  // 5-token shingles, threshold 0.8
  std::vector<Pair> pairs = pairs_around(options.threshold, 150, options);
  int at_or_above = 0, missed = 0, wrongly_reported = 0, missed_by_estimate_alone = 0;
  NearDuplicateIndex index(options);
  for (const Pair& pair : pairs) index.add(pair.base);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const Pair& pair = pairs[i];
    std::vector<size_t> found = index.near_duplicates(shingle_hashes(pair.copy, options));
    bool reported = found.size() == 1 && found.front() == i;
    CHECK(found.size() <= 1);
    if (pair.similarity >= options.threshold) {
      ++at_or_above;
      missed += !reported;
      MinHasher hasher(options);
      missed_by_estimate_alone += estimated_jaccard(hasher.signature(pair.base), hasher.signature(pair.copy)) < options.threshold;
    } else {
      wrongly_reported += reported;
    }
  }
  MESSAGE(at_or_above << " pairs at or above " << options.threshold << "; the estimate alone would miss "
                      << missed_by_estimate_alone);
  CHECK(at_or_above == 600);
  CHECK(missed == 0);
  CHECK(wrongly_reported == 0);

  // The store's index answers the same.
  TempDir dir;
  Database db = Database::open(dir.file("recall.db")).value();
  std::map<std::string, size_t> pair_of;
  for (size_t i = 0; i < pairs.size(); ++i) {
    Sample sample{.track = "c2x86", .origin = "template", .language = "c", .text = pairs[i].base};
    pair_of[insert_sample_if_absent(db, sample).value().id] = i;
  }
  StoredNearDuplicateIndex stored(db, "c2x86", options);
  REQUIRE(stored.catch_up().value() == static_cast<int64_t>(pairs.size()));
  int stored_missed = 0, stored_wrong = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::optional<std::string> found = stored.find_near_duplicate(shingle_hashes(pairs[i].copy, options)).value();
    bool reported = found && pair_of[*found] == i;
    if (pairs[i].similarity >= options.threshold) {
      stored_missed += !reported;
    } else {
      stored_wrong += found.has_value();
    }
  }
  CHECK(stored_missed == 0);
  CHECK(stored_wrong == 0);
}
