// The pieces every track's export shares: the split files' records, writing them and LLaMA-Factory's
// dataset_info.json, the near-duplicate clusters a split keeps whole, the deterministic draws that
// send a cluster to eval or round a resampling weight, and the snapshot hash of the ids written.
// synth/export.cpp (the tracks of verified pairs) and synth/kernelopt/export.cpp use them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "synth/minhash.h"

namespace tailforge {

// A split file's record in `format`: a sharegpt conversation (the human gives the instruction, a
// blank line and the input; gpt answers the output), else alpaca's instruction, input and output
// (jsonl rows too; the caller adds their other fields).
nlohmann::json training_record(const std::string& format, const std::string& instruction, const std::string& input,
                               const std::string& output);

// Writes `records` to `path`: one JSON document (alpaca, sharegpt) or a line each (jsonl).
Status write_export_records(const std::string& path, const std::string& format,
                            const std::vector<nlohmann::json>& records);

// Writes `value` to `path`, indented.
Status write_export_json(const std::string& path, const nlohmann::json& value);

// LLaMA-Factory's dataset_info.json entry for a split file of `format` (alpaca or sharegpt
// columns; jsonl rows carry alpaca's columns).
nlohmann::json dataset_info_entry(const std::string& file, const std::string& format);

// A uniform number in [0, 1) from a text, for deterministic split and rounding decisions.
double unit_hash(const std::string& text);

// Whether the cluster named by `cluster_key` (its first member's id) goes to the eval split.
bool cluster_held_out(const std::string& cluster_key, double eval_fraction);

// Per text, the smallest index of its near-duplicate cluster: LSH proposes, and every pair at or
// above the threshold, found exactly, joins its cluster, so no near-duplicate pair is split.
std::vector<size_t> near_duplicate_clusters(const std::vector<std::string>& texts, const MinHashOptions& dedup);

// SHA-256 of the sorted ids, a line each: the snapshot's name.
std::string snapshot_hash_of(std::vector<std::string> ids);

}  // namespace tailforge
