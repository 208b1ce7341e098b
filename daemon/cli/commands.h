// The subcommands of `tailforge`, one function each. Each takes the parsed command line and
// returns the exit code. Shared set-up (config, store) lives in daemon/cli/context.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "daemon/cli/command_line.h"

namespace tailforge {

int command_status(const CommandLine& args);
int command_daemon(const CommandLine& args);
int command_toolchains(const CommandLine& args);
int command_taxonomy(const CommandLine& args);
int command_lineage(const CommandLine& args);
int command_tails(const CommandLine& args);
int command_coverage(const CommandLine& args);
int command_api_prior(const CommandLine& args);
int command_generate(const CommandLine& args);
int command_translate(const CommandLine& args);
int command_hipify_table(const CommandLine& args);
int command_verify(const CommandLine& args);
int command_export(const CommandLine& args);
int command_model(const CommandLine& args);
int command_models(const CommandLine& args);
int command_eval(const CommandLine& args);
int command_rejudge(const CommandLine& args);
int command_baseline(const CommandLine& args);
int command_import(const CommandLine& args);
int command_reroll(const CommandLine& args);
int command_backup(const CommandLine& args);
int command_doctor(const CommandLine& args);
int command_install_service(const CommandLine& args);
int command_gc(const CommandLine& args);
int command_serve(const CommandLine& args);
int command_worker(const CommandLine& args);
int command_slurm(const CommandLine& args);
int command_kernelopt(const CommandLine& args);
int command_curate(const CommandLine& args);
// The kernelopt track's export (the newest curation's choices) and import (task files).
int export_kernelopt(const CommandLine& args);
int import_kernelopt(const CommandLine& args);
// `generate --track kernelopt`: `count` tasks of the generator (the daemon's, from `seed`) written
// to `out_dir` as a task file in the import format with one reference file each.
int generate_kernel_tasks(uint64_t count, uint64_t seed, const std::string& out_dir);
// What every export prints after its files: the decontamination count (when benchmarks were
// given), the leakage figures of the split as written, and where the card is.
void print_export_checks(bool decontamination_asked, int64_t decontaminated, int64_t eval_rows_with_near_duplicate,
                         std::optional<double> largest_eval_train_similarity, double dedup_threshold,
                         const std::string& card_path);

}  // namespace tailforge
