// The tables of the stored near-duplicate index (synth/stored_index.h): per track and options key,
// each sample's MinHash signature, its LSH band buckets, and how far through the sample table
// signing has come. SQL only; hashing and banding are synth/minhash.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

// The rowid of the sample table up to which the track's samples are signed under `options_key`
// (0: none yet).
Result<int64_t> lsh_signed_through(Database& db, const std::string& track, int64_t options_key);
// Records that signing reached `rowid`.
Status set_lsh_signed_through(Database& db, const std::string& track, int64_t options_key, int64_t rowid);

struct SampleToSign {
  int64_t rowid = 0;
  std::string id, text;
};
// At most `limit` samples of the track after `rowid`, in rowid order.
Result<std::vector<SampleToSign>> samples_to_sign(Database& db, const std::string& track, int64_t after_rowid,
                                                  int64_t limit);
// The largest rowid of the sample table (0 when empty).
Result<int64_t> newest_sample_rowid(Database& db);

// Stores a sample's signature (its bytes) and its bucket in each band; what is stored already
// stays.
Status store_lsh_signature(Database& db, const std::string& track, int64_t options_key, const std::string& sample_id,
                           const std::string& signature, const std::vector<int64_t>& band_buckets);

struct LshBucketMember {
  std::string sample_id;
  std::string signature;  // its bytes, as stored
};
// The samples in `bucket` of `band` whose cycle is at most `max_cycle` (or that have none).
Result<std::vector<LshBucketMember>> lsh_bucket_members(Database& db, const std::string& track, int64_t options_key,
                                                        int band, int64_t bucket, int64_t max_cycle);

}  // namespace tailforge
