// Near-duplicate detection: MinHash signatures over normalized token shingles, and an LSH index
// that answers "is there a near-duplicate of this text?" and "cluster these texts". Deterministic.
// It knows nothing of samples or the store; callers feed it texts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tailforge {

struct MinHashOptions {
  int shingle_tokens = 5;     // k: tokens per shingle
  int permutations = 128;     // signature length
  double threshold = 0.8;     // Jaccard similarity at or above which two texts are near-duplicates
  bool mask_numbers = false;  // numeric literals become one token "0"
  bool mask_identifiers = false;  // identifiers that are not keywords become one token "id"
  uint64_t seed = 0x7461696c666f7267ull;  // seeds the permutations
};

// Comments removed, whitespace dropped, literals and identifiers masked per the options.
std::vector<std::string> normalized_tokens(std::string_view text, const MinHashOptions& options);

// 64-bit hashes of the distinct k-token shingles of the text (one shingle when shorter than k).
std::vector<uint64_t> shingle_hashes(std::string_view text, const MinHashOptions& options);

// The 64-bit mixer the hashes above are made with (splitmix64's finalizer), and a token's hash
// (FNV-1a, mixed): for other exact token matchers to share them.
uint64_t mix64(uint64_t x);
uint64_t token_hash64(std::string_view token);

// The exact Jaccard similarity of two texts' shingle sets.
double shingle_jaccard(std::string_view a, std::string_view b, const MinHashOptions& options);
// The same of two shingle sets (sorted and distinct, as shingle_hashes gives them); two empty
// sets are equal (1).
double shingle_set_jaccard(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);

using MinHashSignature = std::vector<uint32_t>;

class MinHasher {
 public:
  explicit MinHasher(const MinHashOptions& options);
  MinHashSignature signature(std::string_view text) const;
  MinHashSignature signature_of_shingles(const std::vector<uint64_t>& shingles) const;
  const MinHashOptions& options() const { return options_; }

 private:
  MinHashOptions options_;
  std::vector<uint64_t> multipliers_;
  std::vector<uint64_t> offsets_;
};

// The share of equal positions: an estimate of the Jaccard similarity.
double estimated_jaccard(const MinHashSignature& a, const MinHashSignature& b);

struct LshBands {
  int bands = 0;
  int rows = 0;
};

// Bands for proposing candidates that are then confirmed exactly: as many rows per band
// (bands = permutations / rows) as keep the chance that a pair at `threshold` shares no band
// below one in a million. A pair above the threshold is missed less often still; pairs well below
// it become candidates too, which costs a comparison each.
LshBands choose_lsh_bands(int permutations, double threshold);

// A candidate whose estimated similarity is this far below the threshold is not compared exactly:
// for a pair at the threshold, an estimate from 128 permutations falls that low less than once in
// a million times.
inline constexpr double kEstimateMargin = 0.25;

// The bucket of `signature` in `band`: a hash of the band's rows.
uint64_t lsh_band_key(const MinHashSignature& signature, const LshBands& bands, int band);

// An LSH index over texts' shingle sets. Shared bands propose candidates (choose_lsh_bands) and
// the exact Jaccard similarity of the shingle sets decides, so a reported near-duplicate is at or
// above the threshold, and one at or above it is missed less than once in a million.
class NearDuplicateIndex {
 public:
  explicit NearDuplicateIndex(const MinHashOptions& options);

  // Adds a text (or its shingle set, as shingle_hashes gives it); returns its index (0, 1, 2, ...
  // in order of addition).
  size_t add(std::string_view text);
  size_t add_shingles(std::vector<uint64_t> shingles);
  // The first added text that is a near-duplicate of `text`, if any.
  std::optional<size_t> find_near_duplicate(std::string_view text) const;
  std::optional<size_t> find_near_duplicate_of_shingles(const std::vector<uint64_t>& shingles) const;
  // Every added text that is a near-duplicate of the shingle set, ascending.
  std::vector<size_t> near_duplicates(const std::vector<uint64_t>& shingles) const;

  size_t size() const { return signatures_.size(); }
  const MinHasher& hasher() const { return hasher_; }
  LshBands bands() const { return bands_; }
  const MinHashSignature& signature_at(size_t index) const { return signatures_[index]; }
  const std::vector<uint64_t>& shingles_at(size_t index) const { return shingles_[index]; }

 private:
  MinHasher hasher_;
  LshBands bands_;
  std::vector<MinHashSignature> signatures_;
  std::vector<std::vector<uint64_t>> shingles_;
  std::unordered_map<uint64_t, uint32_t> bucket_head_;  // band key -> newest member + 1
  std::vector<uint32_t> next_in_bucket_;                // (index * bands + band) -> older member + 1
};

// Groups texts into near-duplicate clusters (transitively); returns, per text, the smallest
// index of its cluster.
std::vector<size_t> cluster_texts(const std::vector<std::string>& texts, const MinHashOptions& options);

}  // namespace tailforge
