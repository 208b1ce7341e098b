#include "synth/stored_index.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <vector>

#include "store/lsh_index.h"
#include "store/samples.h"

namespace tailforge {
namespace {

// Everything a signature and its buckets depend on, hashed (FNV-1a) into one key.
int64_t options_key_of(const MinHashOptions& options, const LshBands& bands) {
  std::string text = std::to_string(options.shingle_tokens) + "/" + std::to_string(options.permutations) + "/" +
                     std::to_string(options.threshold) + "/" + std::to_string(options.mask_numbers) + "/" +
                     std::to_string(options.mask_identifiers) + "/" + std::to_string(options.seed) + "/" +
                     std::to_string(bands.bands) + "x" + std::to_string(bands.rows);
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return static_cast<int64_t>(hash >> 1);
}

std::string encode(const MinHashSignature& signature) {
  std::string bytes(signature.size() * sizeof(uint32_t), '\0');
  std::memcpy(bytes.data(), signature.data(), bytes.size());
  return bytes;
}

MinHashSignature decode(const std::string& bytes) {
  MinHashSignature signature(bytes.size() / sizeof(uint32_t));
  std::memcpy(signature.data(), bytes.data(), signature.size() * sizeof(uint32_t));
  return signature;
}

constexpr int64_t kBatch = 1000;  // samples signed per write transaction

}  // namespace

StoredNearDuplicateIndex::StoredNearDuplicateIndex(Database& db, std::string track, const MinHashOptions& options)
    : db_(db),
      track_(std::move(track)),
      hasher_(options),
      bands_(choose_lsh_bands(options.permutations, options.threshold)),
      options_key_(options_key_of(options, bands_)) {}

Result<int64_t> StoredNearDuplicateIndex::catch_up() {
  int64_t added = 0;
  while (true) {
    Transaction transaction(db_);
    if (!transaction.begin_status()) return transaction.begin_status().error();
    Result<int64_t> signed_now = sign_batch();
    if (!signed_now) return signed_now.error();
    if (Status s = transaction.commit(); !s) return s.error();
    added += *signed_now;
    if (*signed_now < kBatch) return added;
  }
}

Result<int64_t> StoredNearDuplicateIndex::catch_up_in_transaction() {
  int64_t added = 0;
  while (true) {
    Result<int64_t> signed_now = sign_batch();
    if (!signed_now) return signed_now.error();
    added += *signed_now;
    if (*signed_now < kBatch) return added;
  }
}

Result<int64_t> StoredNearDuplicateIndex::sign_batch() {
  Result<int64_t> last = lsh_signed_through(db_, track_, options_key_);
  if (!last) return last.error();
  Result<std::vector<SampleToSign>> samples = samples_to_sign(db_, track_, *last, kBatch);
  if (!samples) return samples.error();
  std::vector<int64_t> buckets(static_cast<size_t>(bands_.bands));
  for (const SampleToSign& sample : *samples) {
    MinHashSignature signature = hasher_.signature(sample.text);
    for (int band = 0; band < bands_.bands; ++band) {
      buckets[static_cast<size_t>(band)] = static_cast<int64_t>(lsh_band_key(signature, bands_, band));
    }
    if (Status s = store_lsh_signature(db_, track_, options_key_, sample.id, encode(signature), buckets); !s) {
      return s.error();
    }
  }
  // A full batch may have more behind it; a short one reached the end, so everything stored
  // (other tracks' samples too) is behind the mark. No one writes while the caller's write
  // transaction holds.
  int64_t mark = samples->empty() ? *last : samples->back().rowid;
  if (static_cast<int64_t>(samples->size()) < kBatch) {
    Result<int64_t> newest = newest_sample_rowid(db_);
    if (!newest) return newest.error();
    mark = std::max(mark, *newest);
  }
  if (Status s = set_lsh_signed_through(db_, track_, options_key_, mark); !s) return s.error();
  return static_cast<int64_t>(samples->size());
}

Result<std::optional<std::string>> StoredNearDuplicateIndex::find_near_duplicate(const std::vector<uint64_t>& shingles) {
  const double threshold = hasher_.options().threshold;
  MinHashSignature signature = hasher_.signature_of_shingles(shingles);
  std::set<std::string> seen;
  for (int band = 0; band < bands_.bands; ++band) {
    Result<std::vector<LshBucketMember>> members =
        lsh_bucket_members(db_, track_, options_key_, band, static_cast<int64_t>(lsh_band_key(signature, bands_, band)),
                           max_cycle_);
    if (!members) return members.error();
    for (const LshBucketMember& member : *members) {
      if (!seen.insert(member.sample_id).second) continue;
      if (estimated_jaccard(signature, decode(member.signature)) < threshold - kEstimateMargin) continue;
      Result<std::optional<Sample>> sample = find_sample(db_, member.sample_id);
      if (!sample) return sample.error();
      if (!*sample) continue;
      if (shingle_set_jaccard(shingles, shingle_hashes((*sample)->text, hasher_.options())) >= threshold) {
        return std::optional(member.sample_id);
      }
    }
  }
  return std::optional<std::string>();
}

}  // namespace tailforge
