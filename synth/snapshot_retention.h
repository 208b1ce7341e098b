// Retention of training snapshots (retrain.keep_snapshots). Each retrain exports a full snapshot
// under retrain.snapshot_dir; only the newest N (by their manifest's time) stay whole. Never
// touched: a snapshot a pending, running or interrupted retrain event names (a rerun reads it),
// and one whose files a model still evaluated (active, not superseded: synth/model_versions.h)
// names. An older snapshot that only retired or superseded models name is thinned to the files
// they name (a baseline dictionary), so those versions still answer when activated again; any
// other older snapshot is removed. Folders without manifest.json (thinned ones, foreign folders)
// are left alone. It reads the store and deletes files; it writes no rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/database.h"

namespace tailforge {

struct SnapshotFolder {
  std::string path;
  int64_t bytes = 0;        // on disk before the action
  int64_t bytes_freed = 0;  // what the action frees (or would)
  std::string action;       // keep, thin, remove
  std::string reason;       // why: "newest 5", "retrain event 7 is running", "model baseline-v3 is evaluated"
};

struct SnapshotPlan {
  std::string root;
  int64_t keep_snapshots = 0;           // 0: no rule, every snapshot stays
  std::vector<SnapshotFolder> folders;  // whole snapshots, newest first
  int64_t bytes() const;
  int64_t bytes_to_free() const;
  int64_t count(const std::string& action) const;
};

// What the rule would do now to the snapshots under `root` and those retrain events name.
Result<SnapshotPlan> plan_snapshot_retention(Database& db, const std::string& root, int64_t keep_snapshots,
                                             int64_t keep_versions);

// Plans and carries the plan out; a folder that cannot be removed is an error naming it.
Result<SnapshotPlan> prune_snapshots(Database& db, const std::string& root, int64_t keep_snapshots,
                                     int64_t keep_versions);

// Bytes of the files under `path` (0 when it is missing).
int64_t folder_bytes(const std::string& path);

}  // namespace tailforge
