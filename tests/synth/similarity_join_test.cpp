#include "synth/similarity_join.h"

#include <doctest/doctest.h>

#include <numeric>
#include <random>
#include <set>

#include "synth/minhash.h"

using namespace tailforge;

namespace {

// Random sets over a small universe with planted near-copies, so every similarity level occurs.
std::vector<ShingleSet> random_sets(size_t count, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<ShingleSet> sets;
  for (size_t i = 0; i < count; ++i) {
    std::set<uint64_t> set;
    if (i > 0 && random() % 3 == 0) {  // a variant of an earlier set
      const ShingleSet& base = sets[random() % sets.size()];
      for (uint64_t shingle : base) {
        if (random() % 10 != 0) set.insert(shingle);
      }
      for (int extra = random() % 4; extra > 0; --extra) set.insert(random() % 400);
    } else {
      for (int n = 5 + random() % 40; n > 0; --n) set.insert(random() % 400);
    }
    sets.emplace_back(set.begin(), set.end());
  }
  sets.push_back({});  // a text without tokens is similar to nothing
  return sets;
}

}  // namespace

TEST_CASE("the exact joins find every pair a brute-force comparison finds, and no other") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::vector<ShingleSet> sets = random_sets(160, seed);
    for (double at_least : {0.3, 0.5, 0.8, 1.0}) {
      std::set<std::pair<size_t, size_t>> expected;
      for (size_t a = 0; a < sets.size(); ++a) {
        for (size_t b = a + 1; b < sets.size(); ++b) {
          if (set_jaccard(sets[a], sets[b]) >= at_least) expected.insert({a, b});
        }
      }
      std::set<std::pair<size_t, size_t>> found;
      for (const SimilarPair& pair : similar_pairs_within(sets, at_least)) {
        CHECK(pair.first < pair.second);
        CHECK(pair.similarity == doctest::Approx(set_jaccard(sets[pair.first], sets[pair.second])));
        found.insert({pair.first, pair.second});
      }
      CHECK(found == expected);
      if (at_least == 0.8) CHECK_FALSE(expected.empty());

      std::vector<ShingleSet> queries(sets.begin(), sets.begin() + 60), corpus(sets.begin() + 60, sets.end());
      for (double threshold : {at_least, std::min(1.0, at_least + 0.2)}) {
        double largest = 0;
        int64_t at_or_above = 0;
        for (const ShingleSet& query : queries) {
          double best = 0;
          for (const ShingleSet& set : corpus) best = std::max(best, set_jaccard(query, set));
          largest = std::max(largest, best);
          at_or_above += best >= threshold;
        }
        CrossSimilarity cross = cross_similarity(queries, corpus, at_least, threshold);
        CHECK(cross.queries_at_or_above == at_or_above);
        if (largest >= at_least) {
          CHECK(cross.largest.value() == doctest::Approx(largest));
        } else {
          CHECK_FALSE(cross.largest.has_value());
        }
      }
    }
  }
}

TEST_CASE("clusters merge along every exact pair, each labelled by its smallest index") {
  std::vector<ShingleSet> sets = {{1, 2, 3, 4, 5}, {10, 11, 12, 13},   {1, 2, 3, 4, 5, 6},
                                  {20, 21},        {1, 2, 3, 4, 5, 7}, {10, 11, 12, 13, 14}};
  // LSH put 0 and 2 together and missed the rest.
  std::vector<size_t> merged = merge_similar(sets, {0, 1, 0, 3, 4, 5}, 0.8);
  CHECK(merged == std::vector<size_t>{0, 1, 0, 3, 0, 1});
  for (uint32_t seed : {4u, 5u}) {
    std::vector<ShingleSet> random = random_sets(120, seed);
    std::vector<size_t> singletons(random.size());
    std::iota(singletons.begin(), singletons.end(), 0);
    std::vector<size_t> by_pairs = singletons;  // the same merge from the brute-force pair list
    for (size_t a = 0; a < random.size(); ++a) {
      for (size_t b = a + 1; b < random.size(); ++b) {
        if (set_jaccard(random[a], random[b]) < 0.6) continue;
        size_t x = by_pairs[a], y = by_pairs[b];
        while (by_pairs[x] != x) x = by_pairs[x];
        while (by_pairs[y] != y) y = by_pairs[y];
        by_pairs[std::max(x, y)] = std::min(x, y);
      }
    }
    for (size_t& label : by_pairs) {
      while (by_pairs[label] != label) label = by_pairs[label];
    }
    CHECK(merge_similar(random, singletons, 0.6) == by_pairs);
  }
}

TEST_CASE("on program texts the exact join measures what shingle_jaccard measures") {
  MinHashOptions options;
  std::string a =
      "__global__ void k(float* o, const float* i, int n) { int t = threadIdx.x; if (t < n) o[t] = i[t] * 2.0f; }";
  std::string b = a + " // tail";
  std::vector<ShingleSet> sets = {shingle_hashes(a, options), shingle_hashes(b, options)};
  std::vector<SimilarPair> pairs = similar_pairs_within(sets, 0.8);
  REQUIRE(pairs.size() == 1);
  CHECK(pairs[0].similarity == doctest::Approx(shingle_jaccard(a, b, options)));
}
