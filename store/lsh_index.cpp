#include "store/lsh_index.h"

namespace tailforge {

Result<int64_t> lsh_signed_through(Database& db, const std::string& track, int64_t options_key) {
  Statement& progress = db.cached("SELECT last_rowid FROM sample_lsh_progress WHERE track = ?1 AND options_key = ?2");
  return single_int64(progress.bind(1, track).bind(2, options_key));
}

Status set_lsh_signed_through(Database& db, const std::string& track, int64_t options_key, int64_t rowid) {
  return db
      .cached("INSERT INTO sample_lsh_progress (track, options_key, last_rowid) VALUES (?1, ?2, ?3)"
              " ON CONFLICT (track, options_key) DO UPDATE SET last_rowid = excluded.last_rowid")
      .bind(1, track)
      .bind(2, options_key)
      .bind(3, rowid)
      .run();
}

Result<std::vector<SampleToSign>> samples_to_sign(Database& db, const std::string& track, int64_t after_rowid,
                                                  int64_t limit) {
  Statement& newer =
      db.cached("SELECT rowid, id, text FROM sample WHERE rowid > ?1 AND track = ?2 ORDER BY rowid LIMIT ?3");
  newer.bind(1, after_rowid).bind(2, track).bind(3, limit);
  return collect_rows<SampleToSign>(
      newer, [](const Statement& row, SampleToSign& sample) { read_row(row, sample.rowid, sample.id, sample.text); });
}

Result<int64_t> newest_sample_rowid(Database& db) {
  return single_int64(db.cached("SELECT coalesce(max(rowid), 0) FROM sample"));
}

Status store_lsh_signature(Database& db, const std::string& track, int64_t options_key, const std::string& sample_id,
                           const std::string& signature, const std::vector<int64_t>& band_buckets) {
  Statement& sign =
      db.cached("INSERT OR IGNORE INTO sample_signature (sample_id, options_key, signature) VALUES (?1, ?2, ?3)");
  if (Status s = sign.bind(1, sample_id).bind(2, options_key).bind_blob(3, signature).run(); !s) return s;
  Statement& bucket = db.cached(
      "INSERT OR IGNORE INTO sample_lsh (track, options_key, band, bucket, sample_id) VALUES (?1, ?2, ?3, ?4, ?5)");
  for (size_t band = 0; band < band_buckets.size(); ++band) {
    Status s = bucket.bind(1, track)
                   .bind(2, options_key)
                   .bind(3, static_cast<int64_t>(band))
                   .bind(4, band_buckets[band])
                   .bind(5, sample_id)
                   .run();
    if (!s) return s;
  }
  return {};
}

Result<std::vector<LshBucketMember>> lsh_bucket_members(Database& db, const std::string& track, int64_t options_key,
                                                        int band, int64_t bucket, int64_t max_cycle) {
  Statement& members = db.cached(
      "SELECT l.sample_id, g.signature FROM sample_lsh l"
      " JOIN sample_signature g ON g.sample_id = l.sample_id AND g.options_key = l.options_key"
      " JOIN sample s ON s.id = l.sample_id AND (s.cycle_id IS NULL OR s.cycle_id <= ?5)"
      " WHERE l.track = ?1 AND l.options_key = ?2 AND l.band = ?3 AND l.bucket = ?4");
  members.bind(1, track).bind(2, options_key).bind(3, band).bind(4, bucket).bind(5, max_cycle);
  return collect_rows<LshBucketMember>(members, [](const Statement& row, LshBucketMember& member) {
    read_row(row, member.sample_id, member.signature);
  });
}

}  // namespace tailforge
