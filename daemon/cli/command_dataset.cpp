// Commands over the dataset: export, backup, and gc (the disk rules: stored artifacts, caches,
// snapshots, stale scratch).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>

#include "base/files.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/disk_rules.h"
#include "store/backup.h"
#include "store/retention.h"
#include "synth/export.h"
#include "synth/tracks.h"

namespace tailforge {

void print_export_checks(bool decontamination_asked, int64_t decontaminated, int64_t eval_rows_with_near_duplicate,
                         std::optional<double> largest_eval_train_similarity, double dedup_threshold,
                         const std::string& card_path) {
  if (decontamination_asked) {
    std::cout << "decontamination: " << decontaminated
              << " samples left out for matching a benchmark text (listed in manifest.json and README.md)\n";
  }
  std::cout << "leakage: eval rows with a near-duplicate in train: " << eval_rows_with_near_duplicate
            << "; the most similar eval/train pair: ";
  if (largest_eval_train_similarity) {
    std::cout << std::fixed << std::setprecision(3) << *largest_eval_train_similarity << std::defaultfloat << "\n";
  } else {
    std::cout << "below " << std::min(0.5, dedup_threshold) << "\n";
  }
  std::cout << "dataset card: " << card_path << "\n";
}

int command_export(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  const Track* named = find_track(args.get("--track", "cuda2hip"));
  if (named && named->exported == Track::Exported::curated_kernels) return export_kernelopt(args);
  ExportOptions options;
  options.track = args.get("--track", "cuda2hip");
  options.format = args.get("--format", "alpaca");
  options.out_dir = args.get("--out");
  for (const std::string& path : args.get_all("--decontaminate")) {  // named in the manifest wherever it is read
    std::error_code ec;
    options.decontaminate.push_back(std::filesystem::absolute(path, ec).lexically_normal().string());
  }
  if (options.out_dir.empty()) {
    std::cerr << "tailforge: export needs --out DIR\n";
    return 2;
  }
  Result<SynthPolicy> policy = synth_policy_from_config(context->config["synth"], data_dir());
  if (!policy) return report_failure(policy.message());
  options.policy = std::move(*policy);
  Result<HeldOutSplit> held_out = held_out_split_from_json(context->config["eval"]);
  if (!held_out) return report_failure(held_out.message());
  options.held_out = std::move(*held_out);
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<ExportSummary> summary = export_dataset(*db, options);
  if (!summary) return report_failure(summary.message());
  std::cout << "exported " << summary->samples << " " << options.track << " pairs to " << summary->out_dir << ": "
            << summary->train_samples << " train (" << summary->train_rows << " rows after resampling), "
            << summary->eval_samples << " held-out eval, " << summary->clusters << " near-duplicate clusters\n"
            << "manifest: " << summary->manifest_path << "\nsnapshot: " << summary->snapshot_hash << "\n";
  print_export_checks(!options.decontaminate.empty(), summary->decontaminated, summary->eval_rows_with_near_duplicate,
                      summary->largest_eval_train_similarity, options.policy.dedup.threshold, summary->card_path);
  if (!options.held_out.empty()) {
    std::cout << "held out for evaluation (eval.held_out_templates, eval.held_out_trees): "
              << summary->held_out_left_out << " samples of reserved templates and trees left out\n";
  }
  if (summary->near_duplicates_dropped > 0) {
    std::cout << "near-duplicates dropped: " << summary->near_duplicates_dropped << " (one sample kept per cluster)\n";
  }
  for (const auto& [name, reduction] : summary->length_reductions) {
    std::cout << "length reduction " << name << ": " << std::fixed << std::setprecision(1) << 100 * reduction << "%\n";
  }
  if (summary->harnesses > 0) std::cout << "recorded launches: " << summary->harnesses << " under harness/\n";
  if (summary->io_tests > 0) std::cout << "io tests: " << summary->io_tests << " functions under io_tests/\n";
  if (summary->samples == 0 && named && named->why_none_exported) std::cout << named->why_none_exported(*db);
  return 0;
}

int command_backup(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  std::string out = args.get("--out");
  if (out.empty()) {
    std::cerr << "tailforge: backup needs --out FILE\n";
    return 2;
  }
  Result<BackupSummary> backup = backup_database(context->db_path, out);
  if (!backup) return report_failure(backup.message());
  if (args.has("--json")) {
    std::cout << nlohmann::json{{"source", context->db_path}, {"path", backup->path}, {"pages", backup->pages},
                                {"bytes", backup->bytes}, {"samples", backup->samples},
                                {"schema_version", backup->schema_version}, {"seconds", backup->seconds}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "backed up " << context->db_path << " to " << backup->path << ": " << backup->pages << " pages, "
              << backup->bytes << " bytes, " << backup->samples << " samples, schema v" << backup->schema_version
              << ", integrity ok (" << std::fixed << std::setprecision(2) << backup->seconds << " s)\n";
  }
  return 0;
}

namespace {

nlohmann::json class_json(const ArtifactClass& group) { return {{"count", group.count}, {"bytes", group.bytes}}; }

nlohmann::json place_json(const DiskPlace& place, bool collect) {
  return {{"name", place.name}, {"where", place.where}, {"rule", place.rule}, {"count", place.count}, {"unit", place.unit},
          {"bytes", place.bytes}, {collect ? "freed" : "would_free", {{"count", place.freed_count},
                                                                      {"bytes", place.freed_bytes}}}};
}

std::string megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1048576.0);
  return text;
}

}  // namespace

int command_gc(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  int64_t cap_mb = context->config["store"]["artifact_cap_mb"].get<int64_t>();
  cap_mb = args.get_int("--cap-mb", cap_mb);
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  const bool collect = args.has("--collect");
  Result<ArtifactGcPlan> plan = collect ? collect_artifacts(*db, cap_mb * 1048576) : plan_artifact_gc(*db, cap_mb * 1048576);
  if (!plan) return report_failure(plan.message());
  Result<std::vector<DiskPlace>> places =
      check_disk_places(*db, disk_rules_from_config(context->config, context->db_path), collect);
  if (!places) return report_failure(places.message());
  nlohmann::json places_json = nlohmann::json::array();
  for (const DiskPlace& place : *places) places_json.push_back(place_json(place, collect));
  if (args.has("--json")) {
    std::cout << nlohmann::json{{"cap_bytes", plan->cap_bytes}, {"total", class_json(plan->total)},
                                {"unreferenced", class_json(plan->unreferenced)},
                                {"failed_only", class_json(plan->failed_only)}, {"kept", class_json(plan->kept)},
                                {collect ? "freed" : "would_free", class_json(plan->to_free)},
                                {"bytes_after", plan->bytes_after()}, {"places", places_json}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "artifacts: " << plan->total.count << " (" << megabytes(plan->total.bytes) << "); cap "
            << (cap_mb > 0 ? std::to_string(cap_mb) + " MB (store.artifact_cap_mb)" : std::string("none")) << "\n";
  auto row = [](const char* name, const ArtifactClass& group, const char* rule) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-24s %8lld %12s   ", name, static_cast<long long>(group.count),
                  megabytes(group.bytes).c_str());
    std::cout << line << rule << "\n";
  };
  row("unreferenced", plan->unreferenced, "freed always");
  row("of failed samples only", plan->failed_only,
      "freed oldest first over the cap (`tailforge verify` makes them again)");
  row("kept", plan->kept, "verified and pending samples' artifacts, evaluation references and answers");
  std::cout << (collect ? "freed: " : "would free: ") << plan->to_free.count << " artifacts, "
            << megabytes(plan->to_free.bytes) << " -> " << megabytes(plan->bytes_after()) << "\n";
  if (cap_mb > 0 && plan->bytes_after() > cap_mb * 1048576) {
    std::cout << "still over the cap: what is kept is never freed; raise store.artifact_cap_mb\n";
  }
  bool more = plan->to_free.count > 0;
  std::cout << "other places:\n";
  for (const DiskPlace& place : *places) {
    more = more || place.freed_count > 0 || place.freed_bytes > 0;
    std::cout << "  " << place.name << ": "
              << (place.unit.empty() ? "" : std::to_string(place.count) + " " + place.unit + ", ") << megabytes(place.bytes) << " in " << place.where << "\n      rule: " << place.rule << "\n      "
              << (collect ? "freed: " : "would free: ");
    if (place.freed_count == 0 && place.freed_bytes > 0) std::cout << "about ";
    if (place.freed_count > 0) std::cout << place.freed_count << ", ";
    std::cout << megabytes(place.freed_bytes) << "\n";
  }
  if (!collect && more) std::cout << "run with --collect to free it now (the daemon does it on its own every 10 s)\n";
  std::cout << "samples, verdicts and failures are never freed. SQLite reuses freed pages for new data; VACUUM with the "
               "daemon stopped shrinks the file.\n";
  return 0;
}

}  // namespace tailforge
