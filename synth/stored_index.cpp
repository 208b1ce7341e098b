#include "synth/stored_index.h"

#include <cstring>
#include <set>
#include <vector>

namespace tailforge {
namespace {

// Everything a signature and its buckets depend on, hashed (FNV-1a) into one key.
int64_t options_key_of(const MinHashOptions& options) {
  std::string text = std::to_string(options.shingle_tokens) + "/" + std::to_string(options.permutations) + "/" +
                     std::to_string(options.threshold) + "/" + std::to_string(options.mask_numbers) + "/" +
                     std::to_string(options.mask_identifiers) + "/" + std::to_string(options.seed);
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
      options_key_(options_key_of(options)) {}

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
  Statement& progress = db_.cached("SELECT last_rowid FROM sample_lsh_progress WHERE track = ?1 AND options_key = ?2");
  progress.bind(1, track_).bind(2, options_key_);
  int64_t last = progress.step() ? progress.int64(0) : 0;
  progress.reset();
  Statement& newer = db_.cached(
      "SELECT rowid, id, text FROM sample WHERE rowid > ?1 AND track = ?2 ORDER BY rowid LIMIT ?3");
  newer.bind(1, last).bind(2, track_).bind(3, kBatch);
  struct Row {
    int64_t rowid;
    std::string id;
    MinHashSignature signature;
  };
  std::vector<Row> rows;
  while (newer.step()) rows.push_back({newer.int64(0), newer.text(1), hasher_.signature(newer.text(2))});
  Status read = newer.status();
  newer.reset();
  if (!read) return read.error();
  Statement& sign = db_.cached(
      "INSERT OR IGNORE INTO sample_signature (sample_id, options_key, signature) VALUES (?1, ?2, ?3)");
  Statement& bucket = db_.cached(
      "INSERT OR IGNORE INTO sample_lsh (track, options_key, band, bucket, sample_id) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (const Row& row : rows) {
    if (Status s = sign.bind(1, row.id).bind(2, options_key_).bind_blob(3, encode(row.signature)).run(); !s) {
      return s.error();
    }
    for (int band = 0; band < bands_.bands; ++band) {
      int64_t key = static_cast<int64_t>(lsh_band_key(row.signature, bands_, band));
      if (Status s = bucket.bind(1, track_).bind(2, options_key_).bind(3, band).bind(4, key).bind(5, row.id).run(); !s) {
        return s.error();
      }
    }
  }
  // A full batch may have more behind it; a short one reached the end, so everything stored
  // (other tracks' samples too) is behind the mark. No one writes while the caller's write
  // transaction holds.
  int64_t mark = rows.empty() ? last : rows.back().rowid;
  if (static_cast<int64_t>(rows.size()) < kBatch) {
    Statement& newest = db_.cached("SELECT coalesce(max(rowid), 0) FROM sample");
    if (newest.step()) mark = std::max(mark, newest.int64(0));
    newest.reset();
  }
  Statement& save = db_.cached(
      "INSERT INTO sample_lsh_progress (track, options_key, last_rowid) VALUES (?1, ?2, ?3)"
      " ON CONFLICT (track, options_key) DO UPDATE SET last_rowid = excluded.last_rowid");
  if (Status s = save.bind(1, track_).bind(2, options_key_).bind(3, mark).run(); !s) return s.error();
  return static_cast<int64_t>(rows.size());
}

Result<std::optional<std::string>> StoredNearDuplicateIndex::find_near_duplicate(const MinHashSignature& signature) {
  Statement& members = db_.cached(
      "SELECT l.sample_id, g.signature FROM sample_lsh l"
      " JOIN sample_signature g ON g.sample_id = l.sample_id AND g.options_key = l.options_key"
      " JOIN sample s ON s.id = l.sample_id AND (s.cycle_id IS NULL OR s.cycle_id <= ?5)"
      " WHERE l.track = ?1 AND l.options_key = ?2 AND l.band = ?3 AND l.bucket = ?4");
  std::set<std::string> seen;
  const double threshold = hasher_.options().threshold;
  for (int band = 0; band < bands_.bands; ++band) {
    members.bind(1, track_).bind(2, options_key_).bind(3, band).bind(4, static_cast<int64_t>(lsh_band_key(signature, bands_, band)));
    members.bind(5, max_cycle_);
    std::optional<std::string> found;
    while (!found && members.step()) {
      std::string id = members.text(0);
      if (!seen.insert(id).second) continue;
      if (estimated_jaccard(signature, decode(members.text(1))) >= threshold) found = id;
    }
    Status read = members.status();
    members.reset();
    if (!read) return read.error();
    if (found) return found;
  }
  return std::optional<std::string>();
}

}  // namespace tailforge
