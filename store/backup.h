// Online backups of the store: a consistent copy of the database taken with SQLite's backup API
// while the daemon keeps writing (in WAL mode a reader holds one snapshot and blocks no writer),
// written beside the target and renamed into place only after an integrity check, so a backup
// file is either complete or absent. It does not prune or rotate old backups.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"

namespace tailforge {

struct BackupSummary {
  std::string path;
  int64_t pages = 0;
  int64_t bytes = 0;
  int64_t samples = 0;       // in the copy
  int64_t schema_version = 0;
  double seconds = 0;
};

// Copies the database at `source` to `target` (replacing it). The error names the file and what
// failed; on error nothing is left at `target` that was not there before.
Result<BackupSummary> backup_database(const std::string& source, const std::string& target);

}  // namespace tailforge
