// Dataset export: verified pairs of one track as LLaMA-Factory files (alpaca, sharegpt or jsonl)
// with dataset_info.json, a manifest (counts, resampling weights, filters, sample hashes) and a
// held-out validation split that shares no near-duplicate cluster with training. The frozen
// evaluation set (synth/eval_set.h) and its near-duplicates are never exported, nor the samples of
// templates and trees reserved for evaluation (synth/held_out.h), nor samples that match a
// benchmark the user named (synth/decontaminate.h), and the samples of the training split
// are recorded so that they never become evaluation items. Each export also measures train/eval
// leakage on the written files (synth/split_leakage.h) and writes a dataset card, README.md
// (synth/dataset_card.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "synth/held_out.h"
#include "synth/policy.h"

namespace tailforge {

// A feature, domain or CUDA API family the model under test fails: its training samples weigh
// policy.resampling.model_failure_weight at least.
struct BoostedTail {
  std::string dimension;  // feature, domain or api_family
  std::string name;
};

struct ExportOptions {
  std::string track = "cuda2hip";
  std::string format = "alpaca";  // alpaca, sharegpt, jsonl
  std::string out_dir;
  SynthPolicy policy;  // pairs, eval fraction, dedup, resampling
  std::vector<BoostedTail> boosted;
  // Benchmark folders and JSONL files: samples matching one of their texts are left out.
  std::vector<std::string> decontaminate;
  // Templates and trees reserved for evaluation (eval.held_out_*): none of their samples is written.
  HeldOutSplit held_out;
};

// Weights that up-sample tails: per tracked feature/domain, target x head / count, in [1, max].
struct ResamplingWeights {
  std::map<std::string, double> feature;
  std::map<std::string, double> domain;
  int64_t feature_head = 0;
  int64_t domain_head = 0;
};
ResamplingWeights resampling_weights(const std::map<std::string, int64_t>& feature_counts,
                                     const std::map<std::string, int64_t>& domain_counts,
                                     const ResamplingSettings& settings);
// A sample's weight: the largest weight among its features and its domain (1 when none).
double sample_weight(const ResamplingWeights& weights, const std::vector<std::string>& features,
                     const std::string& domain);

struct ExportSummary {
  std::string out_dir;
  std::string manifest_path;
  std::string snapshot_hash;  // sha256 of the sorted exported sample ids, one per line
  int64_t samples = 0;
  int64_t train_samples = 0;
  int64_t train_rows = 0;  // after replication by weight
  int64_t eval_samples = 0;
  int64_t clusters = 0;
  int64_t held_back_for_evaluation = 0;  // evaluation items and their near-duplicates left out
  int64_t held_out_left_out = 0;         // other samples of reserved templates and trees left out
  int64_t near_duplicates_dropped = 0;   // with the pair's drop_near_duplicates
  int64_t harnesses = 0;                 // recorded launches written (launch_harness)
  int64_t io_tests = 0;                  // IO test files written (io_tests)
  std::map<std::string, double> length_reductions;  // the pair's length_reductions: 1 - after/before
  int64_t decontaminated = 0;                       // samples left out for matching a benchmark
  // The leakage check of the written files: the most similar eval/train pair (unset: below
  // compared_from, see synth/split_leakage.h) and the eval rows with a near-duplicate in train.
  std::optional<double> largest_eval_train_similarity;
  int64_t eval_rows_with_near_duplicate = 0;
  // The same of the written train file against the track's evaluation items (manifest
  // "evaluation_set"): the largest similarity of an item to a train row, and the items at or above
  // the threshold, which a retrain refuses (synth/retrain.h).
  std::optional<double> largest_item_train_similarity;
  int64_t items_with_near_duplicate = 0;
  int64_t evaluation_items = 0;
  int64_t evaluation_set_version = 0;
  std::string card_path;  // README.md
  std::vector<std::string> train_ids;
  std::vector<std::string> eval_ids;
  std::vector<std::string> files;
};

// The ids (sorted) and snapshot hash an export with these options would write, without writing.
Result<std::string> export_snapshot_hash(Database& db, const ExportOptions& options);

// Writes <out_dir>/{train,eval}.{json|jsonl}, dataset_info.json, manifest.json and README.md, and
// records the training split's samples in the store.
Result<ExportSummary> export_dataset(Database& db, const ExportOptions& options);

// SASS normalization (CASS): // and /* */ comments removed, whitespace runs collapsed, blank lines dropped.
std::string normalize_assembly(const std::string& text);

}  // namespace tailforge
