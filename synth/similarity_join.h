// Exact similarity joins over shingle sets (the output of shingle_hashes): every pair at or above
// a Jaccard similarity, found by prefix filtering, so with no false negatives (unlike MinHash LSH)
// and without comparing every pair. It knows nothing of samples, splits or files.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace tailforge {

using ShingleSet = std::vector<uint64_t>;  // sorted, distinct (shingle_hashes)

// The exact Jaccard similarity of two shingle sets; 0 when either is empty (an empty text, one
// without tokens, is similar to nothing in these joins).
double set_jaccard(const ShingleSet& a, const ShingleSet& b);

struct SimilarPair {
  size_t first = 0;
  size_t second = 0;  // first < second
  double similarity = 0;
};

// Every pair i < j of `sets` whose similarity is at least `at_least` (in (0, 1]), by (first, second).
std::vector<SimilarPair> similar_pairs_within(const std::vector<ShingleSet>& sets, double at_least);

// Clusters (per item, the smallest index of its cluster, as cluster_texts returns them) merged,
// transitively, with every pair of `sets` at or above `at_least`. A pair already in one cluster is
// not compared, so clusters LSH made cost little.
std::vector<size_t> merge_similar(const std::vector<ShingleSet>& sets, const std::vector<size_t>& clusters,
                                  double at_least);

// How similar two lists are: the largest similarity of any query to any corpus set, exact when it
// is at least `floor` (in (0, 1]; unset: every pair is below it), and how many queries have a
// corpus set at or above `threshold` (>= floor).
struct CrossSimilarity {
  std::optional<double> largest;
  int64_t queries_at_or_above = 0;
};
CrossSimilarity cross_similarity(const std::vector<ShingleSet>& queries, const std::vector<ShingleSet>& corpus,
                                 double floor, double threshold);

}  // namespace tailforge
