// `tailforge import PATH`: one pending bundle sample per program file of a source tree, with a
// summary of what was kept and why the rest was skipped; `--format exebench FILE.jsonl`: one
// c2x86 sample per ExeBench record.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "agents/c2x86/c_samples.h"
#include "agents/c2x86/exebench.h"
#include "agents/importer.h"
#include "base/files.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/planner.h"
#include "store/queue.h"
#include "synth/api_coverage.h"
#include "synth/minhash.h"
#include "synth/tracks.h"

namespace tailforge {

namespace {

using nlohmann::json;

// Skips of these reasons are counted but not listed one by one in the text summary.
bool listed_in_text(const std::string& reason) { return reason != "not_source" && reason != "already_present"; }

json summary_to_json(const ImportSummary& summary) {
  json skips = json::array();
  for (const ImportSkip& skip : summary.skips) {
    skips.push_back({{"path", skip.path}, {"reason", skip.reason}, {"detail", skip.detail}});
  }
  return {{"tree", summary.tree_name},
          {"root", summary.root},
          {"commit", summary.commit ? json(*summary.commit) : json(nullptr)},
          {"files_seen", summary.files_seen},
          {"programs_kept", summary.programs_kept},
          {"new_samples", summary.sample_ids.size()},
          {"skipped", summary.skipped},
          {"skips", skips},
          {"sample_ids", summary.sample_ids}};
}

void print_summary(const ImportSummary& summary, std::ostream& out) {
  out << "imported " << summary.tree_name << " (" << summary.root << ", commit " << summary.commit.value_or("none")
      << "): " << summary.files_seen << " files seen, " << summary.programs_kept << " programs kept as new samples\n";
  int64_t total = 0;
  for (const auto& [reason, count] : summary.skipped) total += count;
  std::string by_reason;
  for (const auto& [reason, count] : summary.skipped) {
    by_reason += (by_reason.empty() ? " " : ", ") + reason + " " + std::to_string(count);
  }
  out << "skipped " << total << (by_reason.empty() ? "" : ":" + by_reason) << "\n";
  for (const ImportSkip& skip : summary.skips) {
    if (!listed_in_text(skip.reason)) continue;
    out << "  " << skip.reason << "  " << skip.path << (skip.detail.empty() ? "" : "  (" + skip.detail + ")") << "\n";
  }
}

// `import --format exebench FILE.jsonl`: one pending c2x86 sample per usable record, each with a
// verify job; a record that cannot be used is skipped with its line and the field at fault.
int import_exebench(const CommandContext& context, const CommandLine& args) {
  const std::string path = args.positionals[0];
  std::ifstream in(path, std::ios::binary);
  if (!in) return report_failure("cannot read " + path);
  Result<Database> db = Database::open(context.db_path);
  if (!db) return report_failure(db.message());
  JobQueue queue(*db);
  int64_t lines = 0, kept = 0, present = 0;
  json skips = json::array();
  std::vector<std::string> ids;
  std::string line;
  while (std::getline(in, line)) {
    ++lines;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json record = json::parse(line, nullptr, false);
    Result<CFunction> function =
        record.is_discarded() ? Result<CFunction>(make_error("not JSON")) : c_function_from_exebench(record);
    if (!function) {
      skips.push_back({{"line", lines}, {"reason", function.message()}});
      continue;
    }
    Sample sample = c2x86_sample(*function, "exebench", "imported", std::nullopt);
    sample.template_id = "exebench";
    sample.model = "exebench:" + std::filesystem::path(path).filename().string();
    Transaction transaction(*db);
    if (Status s = transaction.begin_status(); !s) return report_failure(s.message());
    Result<InsertOutcome> inserted = insert_sample_if_absent(*db, sample);
    if (!inserted) return report_failure(inserted.message());
    NewJob verify{.kind = kVerifyJob, .payload = json{{"sample_id", inserted->id}}.dump(),
                  .idempotency_key = "verify:" + inserted->id};
    if (Result<EnqueueOutcome> enqueued = queue.enqueue(verify); !enqueued) return report_failure(enqueued.message());
    if (Status s = transaction.commit(); !s) return report_failure(s.message());
    (inserted->inserted ? kept : present) += 1;
    if (inserted->inserted) ids.push_back(inserted->id);
  }
  if (args.has("--json")) {
    std::cout << json{{"file", path}, {"records", lines}, {"new_samples", kept}, {"already_present", present},
                      {"skipped", skips.size()}, {"skips", skips}, {"sample_ids", ids}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << "imported " << path << ": " << lines << " records, " << kept << " new c2x86 samples, " << present
              << " already stored, " << skips.size() << " skipped\n";
    for (const json& skip : skips) {
      std::cout << "  line " << skip["line"].get<int64_t>() << ": " << skip["reason"].get<std::string>() << "\n";
    }
    if (kept > 0) std::cout << "the daemon verifies them (IO tests against the record's outputs) in its next cycles\n";
  }
  return 0;
}

}  // namespace

int command_import(const CommandLine& args) {
  const Track* named = find_track(args.get("--track"));
  if (named && named->imported == Track::Imported::task_file) return import_kernelopt(args);
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  if (args.positionals.size() != 1) {
    std::cerr << "tailforge: import needs one folder (or, with --format exebench, one .jsonl file)\n";
    return 2;
  }
  std::string format = args.get("--format", "tree");
  if (format == "exebench") return import_exebench(*context, args);
  if (format != "tree") {
    std::cerr << "tailforge: --format must be tree or exebench, got '" << format << "'\n";
    return 2;
  }
  Result<ImportFilters> filters = load_import_filters(args.get("--filters", data_path("policies/import_filters.json")));
  if (!filters) return report_failure(filters.message());
  std::string track = args.get("--track", filters->track);
  if (const Track* tree_track = find_track(track); !tree_track || tree_track->imported != Track::Imported::cuda_tree) {
    auto takes = [](Track::Imported what) { return [what](const Track& t) { return t.imported == what; }; };
    std::cerr << "tailforge: --track must be " << track_names(takes(Track::Imported::cuda_tree)) << " for a source tree ("
              << track_names(takes(Track::Imported::task_file)) << " imports a task file), got '" << track << "'\n";
    return 2;
  }
  Result<FeatureRules> features =
      load_feature_rules(data_path(context->config["taxonomy"]["features_file"].get<std::string>()));
  if (!features) return report_failure(features.message());
  Result<DomainRules> domains =
      load_domain_rules(data_path(context->config["taxonomy"]["domains_file"].get<std::string>()));
  if (!domains) return report_failure(domains.message());
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());

  ImportRequest request;
  request.root = args.positionals[0];
  request.name = args.get("--name");
  request.filters = std::move(*filters);
  request.filters.track = track;
  request.feature_rules = &*features;
  request.domain_rules = &*domains;
  MinHashOptions dedup;
  dedup.threshold = request.filters.near_duplicate_threshold;
  dedup.shingle_tokens = request.filters.near_duplicate_shingle_tokens;
  dedup.permutations = request.filters.near_duplicate_permutations;
  NearDuplicateIndex index(dedup);
  if (request.filters.near_duplicate_enabled) {
    request.near_duplicates.remember = [&index](const std::string& text) { index.add(text); };
    request.near_duplicates.seen_similar = [&index](const std::string& text) {
      return index.find_near_duplicate(text).has_value();
    };
  }
  bool show = !args.has("--no-progress") && isatty(STDERR_FILENO);
  if (show) {
    request.on_progress = [](const ImportProgress& progress) {
      std::cerr << "\r\033[K" << progress.files_seen << " files seen, " << progress.programs_kept
                << " programs kept: " << progress.current << std::flush;
    };
  }
  std::cerr << "importing " << request.root << " into " << context->db_path << " (track " << track << ")\n";
  Result<ImportSummary> summary = import_tree(*db, request);
  if (show) std::cerr << "\r\033[K" << std::flush;
  if (!summary) return report_failure(summary.message());
  // Every imported program is verified by the daemon's next cycles; a program imported before
  // whose job was lost (a kill between the two) gets it now: the idempotency key keeps one job.
  JobQueue queue(*db);
  std::vector<std::string> to_verify = summary->sample_ids;
  to_verify.insert(to_verify.end(), summary->present_ids.begin(), summary->present_ids.end());
  for (const std::string& id : to_verify) {
    NewJob verify{.kind = kVerifyJob, .payload = nlohmann::json{{"sample_id", id}}.dump(), .idempotency_key = "verify:" + id};
    if (Result<EnqueueOutcome> enqueued = queue.enqueue(verify); !enqueued) return report_failure(enqueued.message());
  }
  // The tree's CUDA API names become the usage prior of coverage and the API tails.
  std::optional<TreeApiCount> api;
  Result<SynthPolicy> policy = synth_policy_from_config(context->config["synth"], data_dir());
  if (!policy) return report_failure(policy.message());
  if (policy->api.enabled) {
    TreeScanOptions scan;
    scan.skip_dir_names = request.filters.skip_dir_names;
    scan.max_file_bytes = request.filters.max_file_bytes;
    Result<TreeApiCount> counted = record_tree_api_uses(*db, policy->api, summary->tree_name, request.root, scan);
    if (!counted) return report_failure(counted.message());
    api = std::move(*counted);
  }
  if (args.has("--json")) {
    json out = summary_to_json(*summary);
    if (api) out["api"] = {{"files", api->files}, {"api_files", api->api_files}, {"names", api->names.size()}};
    std::cout << out.dump(2) << "\n";
  } else {
    print_summary(*summary, std::cout);
    if (api) {
      std::cout << "CUDA API: " << api->names.size() << " names in " << api->api_files << " of " << api->files
                << " source files; the imported trees are now the usage prior of `coverage` and the API tails\n";
    }
  }
  return 0;
}

}  // namespace tailforge
