// The corpus's near-duplicate index kept in the store, for synthesis: each sample's MinHash
// signature and its LSH buckets are written once (tables sample_signature and sample_lsh), the
// samples stored since the last catch-up (by any process) are added by rowid, and a query reads
// only the samples that share a bucket with it. So a cycle neither re-reads and re-hashes the
// whole corpus nor holds it in memory. Same answers as NearDuplicateIndex over the same texts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/database.h"
#include "synth/minhash.h"

namespace tailforge {

class StoredNearDuplicateIndex {
 public:
  StoredNearDuplicateIndex(Database& db, std::string track, const MinHashOptions& options);

  // Signs and buckets the track's samples stored since the last catch-up; how many it added.
  Result<int64_t> catch_up();
  // The same inside the caller's open write transaction (a sample just inserted joins the index
  // with it, in one commit).
  Result<int64_t> catch_up_in_transaction();
  // A stored sample of the track (as of the last catch-up) whose shingle set's exact Jaccard
  // similarity with `shingles` (shingle_hashes) is at or above the threshold: shared LSH bands
  // propose, as in NearDuplicateIndex, and the stored text of each candidate decides.
  Result<std::optional<std::string>> find_near_duplicate(const std::vector<uint64_t>& shingles);
  // From now on queries see only samples of cycles up to `cycle_id` (and those of no cycle): a
  // cycle's synthesis does not depend on how far the next cycle, running beside it, has got.
  void see_cycles_up_to(int64_t cycle_id) { max_cycle_ = cycle_id; }

  const MinHasher& hasher() const { return hasher_; }

 private:
  Database& db_;
  std::string track_;
  MinHasher hasher_;
  LshBands bands_;
  int64_t options_key_;  // signatures under other options (a changed policy) are not mixed in
  int64_t max_cycle_ = INT64_MAX;

  // Signs one batch of up to kBatch samples past the mark and moves the mark; how many it signed.
  Result<int64_t> sign_batch();
};

}  // namespace tailforge
