// The kernelopt track's export: the curation's choices as training rows (the task and its
// reference in, reasoning and a faster kernel out), split by near-duplicate cluster of what the
// model reads, checked against the user's benchmarks, with LLaMA-Factory's dataset_info.json, a
// manifest, the measured train/eval leakage and a dataset card. It writes files and knows no
// store: the command reads the choices (synth/kernelopt/store.h) and hands them here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "synth/decontaminate.h"
#include "synth/minhash.h"
#include "verifier/kernelopt/kernel_task.h"

namespace tailforge {

// One curated candidate with its task and latest measurement.
struct KerneloptExportRow {
  int64_t candidate_id = 0;
  std::string sample_id;  // the candidate's sample in the store
  KernelTask task;
  KernelCandidate candidate;
  std::string rule, why;  // the curation rule that chose it, and its reason
  bool timed = false;     // a speedup was measured on a GPU
  double speedup = 0;
  std::string device;     // the GPU that measured it
};

struct KerneloptExportOptions {
  std::string out_dir;
  std::string format = "alpaca";          // alpaca, sharegpt or jsonl
  std::vector<std::string> decontaminate;  // benchmark folders and JSONL files (synth/decontaminate.h)
  MinHashOptions dedup;                    // the store's near-duplicate settings
  DecontaminationSettings decontamination;
  double eval_fraction = 0.1;  // clusters drawn for the eval split
  std::string source_database;
};

struct KerneloptExportSummary {
  int64_t samples = 0, train_samples = 0, eval_samples = 0, clusters = 0, decontaminated = 0;
  std::map<std::string, int64_t> by_rule;
  std::optional<double> largest_eval_train_similarity;  // unset: no pair reaches the compared floor
  int64_t eval_rows_with_near_duplicate = 0;
  std::string train_path, eval_path, manifest_path, card_path;
};

// What a row's model reads besides the instruction: the task and its reference.
std::string kernelopt_row_input(const KernelTask& task);

// The instruction every row carries; the task and its reference are the row's input.
extern const char* const kKerneloptInstruction;

// Writes <out_dir>/{train,eval}.{json|jsonl}, dataset_info.json, manifest.json and README.md.
// Errors: an unknown format, a benchmark path that holds nothing, files that cannot be written.
Result<KerneloptExportSummary> write_kernelopt_export(std::vector<KerneloptExportRow> rows,
                                                      const KerneloptExportOptions& options);

}  // namespace tailforge
