// Commands over the dataset: export.
#include <iomanip>
#include <iostream>

#include "daemon/commands.h"
#include "daemon/context.h"
#include "policies/config.h"
#include "store/backup.h"
#include "store/samples.h"
#include "synth/export.h"
#include "verifier/toolchains.h"

namespace tailforge {

namespace {

// sass2rdna3 pairs come from verified CUDA programs whose SASS was dumped: say what stopped that.
std::string why_no_kernel_pairs(Database& db) {
  std::string why = "no sass2rdna3 pairs: each comes from a verified CUDA program's SASS (cuobjdump or nvdisasm) and its "
                    "gfx1100 assembly.\n";
  Result<std::optional<std::string>> skipped = latest_skip_reason(db, "nvidia.sass");
  if (skipped && *skipped) why += "the newest nvidia.sass stage was skipped: " + **skipped + "\n";
  const Toolchains& toolchains = detected_toolchains();
  if (!toolchains.tool("cuobjdump").found() && !toolchains.tool("nvdisasm").found()) {
    why += "this host has neither cuobjdump nor nvdisasm (both come with the CUDA toolkit): run the daemon on a host "
           "that has them.\n";
  }
  return why;
}

}  // namespace

int command_export(const CommandLine& args) {
  Result<CommandContext> context = make_context(args);
  if (!context) return report_failure(context.message());
  ExportOptions options;
  options.track = args.get("--track", "cuda2hip");
  options.format = args.get("--format", "alpaca");
  options.out_dir = args.get("--out");
  if (options.out_dir.empty()) {
    std::cerr << "tailforge: export needs --out DIR\n";
    return 2;
  }
  if (options.format != "alpaca" && options.format != "sharegpt" && options.format != "jsonl") {
    std::cerr << "tailforge: --format must be alpaca, sharegpt or jsonl, got '" << options.format << "'\n";
    return 2;
  }
  Result<SynthPolicy> policy = synth_policy_from_config(context->config["synth"], data_dir());
  if (!policy) return report_failure(policy.message());
  options.policy = std::move(*policy);
  Result<Database> db = Database::open(context->db_path);
  if (!db) return report_failure(db.message());
  Result<ExportSummary> summary = export_dataset(*db, options);
  if (!summary) return report_failure(summary.message());
  std::cout << "exported " << summary->samples << " " << options.track << " pairs to " << summary->out_dir << ": "
            << summary->train_samples << " train (" << summary->train_rows << " rows after resampling), "
            << summary->eval_samples << " held-out eval, " << summary->clusters << " near-duplicate clusters\n"
            << "manifest: " << summary->manifest_path << "\nsnapshot: " << summary->snapshot_hash << "\n";
  if (summary->near_duplicates_dropped > 0) {
    std::cout << "near-duplicates dropped: " << summary->near_duplicates_dropped << " (one sample kept per cluster)\n";
  }
  for (const auto& [name, reduction] : summary->length_reductions) {
    std::cout << "length reduction " << name << ": " << std::fixed << std::setprecision(1) << 100 * reduction << "%\n";
  }
  if (summary->harnesses > 0) std::cout << "recorded launches: " << summary->harnesses << " under harness/\n";
  if (summary->io_tests > 0) std::cout << "io tests: " << summary->io_tests << " functions under io_tests/\n";
  if (summary->samples == 0 && options.track == "sass2rdna3") std::cout << why_no_kernel_pairs(*db);
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

}  // namespace tailforge
