// The disk rules of every place the daemon writes, in one list: the database, the compile and
// LLM caches, training snapshots and scratch folders, each with its cap or retention rule from
// the configuration, what it holds now and what the rule frees. Stored artifacts have their own
// report (store/retention.h). `tailforge gc` prints the list and applies it with --collect; the
// daemon applies it on its 10 s disk timer. Rows of samples, verdicts and failures are never
// freed: daemon.min_free_disk_mb pauses generation instead. The daemon logs to stderr (journald
// or the caller keeps it) and writes no log file of its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/database.h"

namespace tailforge {

struct DiskRules {
  std::string db_path;
  std::string work_dir;       // daemon.work_dir, "" = <db>.work
  std::string scratch_root;   // verifier.scratch_root, "" = $TMPDIR or /tmp
  std::string snapshot_root;  // retrain.snapshot_dir, relative to the database's folder
  int64_t compile_cache_max_mb = 0;
  int64_t llm_cache_max_mb = 0;  // 0: no cap
  int64_t min_free_disk_mb = 0;
  int64_t scratch_max_age_minutes = 360;
  int64_t keep_snapshots = 0;  // 0: every snapshot stays
  int64_t keep_versions = 0;
};

// Reads the keys above from a validated configuration (policies/config.h).
DiskRules disk_rules_from_config(const nlohmann::json& config, const std::string& db_path);

struct DiskPlace {
  std::string name;   // "compile cache"
  std::string where;  // a path, or the database's namespace
  std::string rule;   // the config key, its value and what it does
  int64_t count = 0;  // entries or folders
  std::string unit;   // what count counts ("entries", "whole snapshots"); "" when it counts nothing
  int64_t bytes = 0;
  int64_t freed_count = 0;  // freed by apply, else what applying would free
  int64_t freed_bytes = 0;
};

// Every place with what its rule frees now; with `apply`, frees it.
Result<std::vector<DiskPlace>> check_disk_places(Database& db, const DiskRules& rules, bool apply);

// Scratch folders older than scratch_max_age_minutes: the verifier's under the scratch root
// (tailforge-verify-XXXXXX and its kin) and the per-sample ones under the work folder, left
// behind by killed runs.
std::vector<std::string> stale_scratch_folders(const DiskRules& rules);

// The daemon's pass on its disk timer: applies the LLM cache cap, snapshot retention and the
// stale scratch rule (the compile cache and artifacts have their own trims) and logs what each
// freed. Problems are logged, never returned.
void apply_disk_rules(Database& db, const nlohmann::json& config, const std::string& db_path);

}  // namespace tailforge
