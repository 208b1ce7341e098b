#include "daemon/disk_rules.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "store/cache.h"
#include "synth/snapshot_retention.h"

namespace tailforge {

namespace fs = std::filesystem;

namespace {

// The prefixes verifier/stage_runner's make_scratch_directory is given; mkdtemp adds six characters.
const char* const kScratchPrefixes[] = {"tailforge-verify-", "tailforge-c2x86-", "tailforge-kernelopt-",
                                        "tailforge-doctor-", "tailforge-ptx2cuda-"};

bool verifier_scratch_name(const std::string& name) {
  for (const char* prefix : kScratchPrefixes) {
    std::string text(prefix);
    if (name.size() == text.size() + 6 && name.compare(0, text.size(), text) == 0) return true;
  }
  return false;
}

std::string resolved_scratch_root(const std::string& configured) {
  if (!configured.empty()) return configured;
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir && *tmpdir ? tmpdir : "/tmp";
}

std::string megabytes_text(int64_t megabytes) { return std::to_string(megabytes) + " MB"; }

// A cache namespace under its cap: least recently used entries go down to 90% of it.
Result<DiskPlace> cache_place(Database& db, const std::string& name, const char* ns, const std::string& key,
                              int64_t max_mb, bool apply) {
  DiskPlace place{name, "the database (cache namespace '" + std::string(ns) + "')", "", cache_count(db, ns), "entries"};
  Result<int64_t> bytes = cache_bytes(db, ns);
  if (!bytes) return bytes.error();
  place.bytes = *bytes;
  if (max_mb <= 0) {
    place.rule = key + " 0: no cap";
    return place;
  }
  place.rule = key + " " + megabytes_text(max_mb) + ": least recently used entries go down to 90% of it";
  const int64_t cap = max_mb * 1048576;
  if (place.bytes <= cap) return place;
  if (!apply) {
    place.freed_bytes = place.bytes - cap / 10 * 9;  // the entry count is known once they are picked
    return place;
  }
  Result<CacheTrimOutcome> trimmed = cache_trim(db, ns, cap);
  if (!trimmed) return trimmed.error();
  place.freed_count = trimmed->removed;
  place.freed_bytes = trimmed->bytes_before - trimmed->bytes_after;
  return place;
}

DiskPlace database_place(const DiskRules& rules) {
  DiskPlace place{"database", rules.db_path, "", 0, ""};
  for (const char* suffix : {"", "-wal"}) {
    std::error_code ec;
    uintmax_t size = fs::file_size(rules.db_path + suffix, ec);
    if (!ec) place.bytes += static_cast<int64_t>(size);
  }
  place.rule = "samples, verdicts and failures are kept; daemon.min_free_disk_mb " +
               megabytes_text(rules.min_free_disk_mb) + ": generation pauses below that much free space";
  return place;
}

Result<DiskPlace> snapshot_place(Database& db, const DiskRules& rules, bool apply) {
  Result<SnapshotPlan> plan = apply ? prune_snapshots(db, rules.snapshot_root, rules.keep_snapshots, rules.keep_versions)
                                    : plan_snapshot_retention(db, rules.snapshot_root, rules.keep_snapshots,
                                                              rules.keep_versions);
  if (!plan) return plan.error();
  DiskPlace place{"snapshots", plan->root, "", static_cast<int64_t>(plan->folders.size()), "whole snapshots"};
  place.bytes = plan->bytes();
  place.freed_count = plan->count("remove") + plan->count("thin");
  place.freed_bytes = plan->bytes_to_free();
  place.rule = rules.keep_snapshots <= 0
                   ? "retrain.keep_snapshots 0: every snapshot stays"
                   : "retrain.keep_snapshots " + std::to_string(rules.keep_snapshots) +
                         ": older ones go, except those a retrain event in progress or an evaluated model uses; "
                         "those only retired or superseded models use keep just the files they name";
  return place;
}

DiskPlace scratch_place(const DiskRules& rules, bool apply) {
  DiskPlace place{"stale scratch", resolved_scratch_root(rules.scratch_root) + " and " + rules.work_dir, "", 0, "folders"};
  place.rule = "daemon.scratch_max_age_minutes " + std::to_string(rules.scratch_max_age_minutes) +
               ": scratch folders older than that (left by killed runs) are removed";
  for (const std::string& folder : stale_scratch_folders(rules)) {
    int64_t bytes = folder_bytes(folder);
    ++place.count;
    place.bytes += bytes;
    std::error_code ec;
    if (apply) fs::remove_all(folder, ec);
    if (ec) {
      spdlog::warn("stale scratch folder {} not removed: {}", folder, ec.message());
      continue;
    }
    ++place.freed_count;
    place.freed_bytes += bytes;
  }
  return place;
}

}  // namespace

DiskRules disk_rules_from_config(const nlohmann::json& config, const std::string& db_path) {
  DiskRules rules;
  rules.db_path = db_path;
  rules.work_dir = config["daemon"]["work_dir"].get<std::string>();
  if (rules.work_dir.empty()) rules.work_dir = db_path + ".work";
  rules.scratch_root = config["verifier"]["scratch_root"].get<std::string>();
  fs::path snapshots(config["retrain"]["snapshot_dir"].get<std::string>());
  if (snapshots.is_relative()) snapshots = fs::absolute(db_path).parent_path() / snapshots;
  rules.snapshot_root = snapshots.string();
  rules.compile_cache_max_mb = config["verifier"]["cache_max_mb"].get<int64_t>();
  rules.llm_cache_max_mb = config["store"]["llm_cache_max_mb"].get<int64_t>();
  rules.min_free_disk_mb = config["daemon"]["min_free_disk_mb"].get<int64_t>();
  rules.scratch_max_age_minutes = config["daemon"]["scratch_max_age_minutes"].get<int64_t>();
  rules.keep_snapshots = config["retrain"]["keep_snapshots"].get<int64_t>();
  rules.keep_versions = config["eval"]["keep_versions"].get<int64_t>();
  return rules;
}

std::vector<std::string> stale_scratch_folders(const DiskRules& rules) {
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::minutes(rules.scratch_max_age_minutes);
  std::vector<std::string> stale;
  auto collect = [&](const std::string& root, bool verifier_names_only) {
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code entry_error;
      if (!it->is_directory(entry_error) || it->is_symlink(entry_error)) continue;
      if (verifier_names_only && !verifier_scratch_name(it->path().filename().string())) continue;
      fs::file_time_type written = it->last_write_time(entry_error);
      if (!entry_error && written < cutoff) stale.push_back(it->path().string());
    }
  };
  collect(resolved_scratch_root(rules.scratch_root), true);
  collect(rules.work_dir, false);
  return stale;
}

Result<std::vector<DiskPlace>> check_disk_places(Database& db, const DiskRules& rules, bool apply) {
  std::vector<DiskPlace> places = {database_place(rules)};
  Result<DiskPlace> compile = cache_place(db, "compile cache", "compile", "verifier.cache_max_mb",
                                          rules.compile_cache_max_mb, apply);
  if (!compile) return compile.error();
  places.push_back(*compile);
  Result<DiskPlace> llm = cache_place(db, "LLM cache", "llm", "store.llm_cache_max_mb", rules.llm_cache_max_mb, apply);
  if (!llm) return llm.error();
  places.push_back(*llm);
  Result<DiskPlace> snapshots = snapshot_place(db, rules, apply);
  if (!snapshots) return snapshots.error();
  places.push_back(*snapshots);
  places.push_back(scratch_place(rules, apply));
  return places;
}

void apply_disk_rules(Database& db, const nlohmann::json& config, const std::string& db_path) {
  Result<std::vector<DiskPlace>> places = check_disk_places(db, disk_rules_from_config(config, db_path), true);
  if (!places) {
    spdlog::warn("disk rules not applied: {}", places.message());
    return;
  }
  for (const DiskPlace& place : *places) {
    if (place.freed_count == 0) continue;
    spdlog::info("{}: freed {} ({:.1f} MB) under {}", place.name, place.freed_count, place.freed_bytes / 1048576.0,
                 place.rule);
  }
}

}  // namespace tailforge
