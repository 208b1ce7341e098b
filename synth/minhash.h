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

// The exact Jaccard similarity of two texts' shingle sets (for tests and benchmarks).
double shingle_jaccard(std::string_view a, std::string_view b, const MinHashOptions& options);

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

// bands x rows <= permutations, chosen to minimize the false-positive plus false-negative
// probability mass around `threshold` (the classic S-curve optimum).
LshBands choose_lsh_bands(int permutations, double threshold);

// The bucket of `signature` in `band`: a hash of the band's rows.
uint64_t lsh_band_key(const MinHashSignature& signature, const LshBands& bands, int band);

// An LSH index over signatures. Candidates from shared bands are confirmed by the estimated
// Jaccard similarity, so a reported near-duplicate is at or above the threshold by estimate.
class NearDuplicateIndex {
 public:
  explicit NearDuplicateIndex(const MinHashOptions& options);

  // Adds a text; returns its index (0, 1, 2, ... in order of addition).
  size_t add(std::string_view text);
  size_t add_signature(MinHashSignature signature);
  // The first added text that is a near-duplicate of `text`, if any.
  std::optional<size_t> find_near_duplicate(std::string_view text) const;
  std::optional<size_t> find_near_duplicate_of_signature(const MinHashSignature& signature) const;
  // Every added text that is a near-duplicate of the signature, ascending.
  std::vector<size_t> near_duplicates(const MinHashSignature& signature) const;

  size_t size() const { return signatures_.size(); }
  const MinHasher& hasher() const { return hasher_; }
  LshBands bands() const { return bands_; }
  const MinHashSignature& signature_at(size_t index) const { return signatures_[index]; }

 private:
  MinHasher hasher_;
  LshBands bands_;
  std::vector<MinHashSignature> signatures_;
  std::unordered_map<uint64_t, uint32_t> bucket_head_;  // band key -> newest member + 1
  std::vector<uint32_t> next_in_bucket_;                // (index * bands + band) -> older member + 1
};

// Groups texts into near-duplicate clusters (transitively); returns, per text, the smallest
// index of its cluster.
std::vector<size_t> cluster_texts(const std::vector<std::string>& texts, const MinHashOptions& options);

}  // namespace tailforge
