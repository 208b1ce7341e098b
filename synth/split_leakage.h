// The train/eval leakage check of an export: reads the train and eval files as written (alpaca,
// sharegpt or jsonl) and measures, exactly, how similar the most similar eval/train pair of inputs
// is and how many eval rows have a near-duplicate among the train rows. It reads files and knows
// no store; the export guarantees the count is 0, this proves it on what a trainer will read.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "synth/minhash.h"

namespace tailforge {

// The inputs (the text the model reads, without the instruction) of a written split file, one per
// row as written (replicated rows included). sharegpt: the first user turn, less a leading
// "<instruction>\n\n". Errors name the file and the row.
Result<std::vector<std::string>> written_inputs(const std::string& path, const std::string& format,
                                                const std::string& instruction);

struct SplitLeakage {
  int64_t train_rows = 0;  // rows read, replicated rows included
  int64_t eval_rows = 0;
  double threshold = 0;  // the near-duplicate threshold (exact Jaccard of the store's shingles)
  // Every eval/train pair at or above this similarity is compared exactly (prefix filtering);
  // pairs below it are not.
  double compared_from = 0;
  // The exact largest similarity of an eval row to a train row; unset when no pair reaches
  // compared_from (every pair is below it).
  std::optional<double> largest_similarity;
  int64_t eval_rows_with_near_duplicate = 0;  // eval rows with a train row at or above threshold
};

// Measures the written files; `options` are the store's near-duplicate settings (the same ones the
// split is made with). Pairs below min(0.5, threshold) are not compared (prefix filtering).
Result<SplitLeakage> measure_split_leakage(const std::string& train_path, const std::string& eval_path,
                                           const std::string& format, const std::string& instruction,
                                           const MinHashOptions& options);

// The evaluation set's side of the same guarantee: the written train file against the track's
// evaluation items as a model reads them (each item once; eval_rows counts the items).
Result<SplitLeakage> measure_item_leakage(const std::string& train_path, const std::string& format,
                                          const std::string& instruction, const std::vector<std::string>& items,
                                          const MinHashOptions& options);

// The manifest's "evaluation_set" object: the item figures of measure_item_leakage, at `version`
// of the evaluation set.
nlohmann::json item_leakage_json(const SplitLeakage& leakage, const MinHashOptions& options, int64_t version);

// The manifest's "leakage" object: what was measured and how, the rows read, the figures
// (largest_similarity null when unset).
nlohmann::json split_leakage_json(const SplitLeakage& leakage, const MinHashOptions& options);

}  // namespace tailforge
