#include "store/api_uses.h"
#include "synth/api_coverage.h"
#include "synth/export.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agents/c2x86/c_samples.h"
#include "base/process.h"
#include "base/sha256.h"
#include "store/corpus.h"
#include "store/evaluations.h"
#include "store/samples.h"
#include "synth/dataset_card.h"
#include "synth/decontaminate.h"
#include "synth/evaluate_ptx2cuda.h"
#include "synth/export_files.h"
#include "synth/minhash.h"
#include "synth/split_leakage.h"
#include "synth/training_text.h"
#include "verifier/c2x86/io_tests.h"

namespace tailforge {
namespace {

using nlohmann::json;

std::vector<std::string> tags_of(const std::string& features_json) {
  std::vector<std::string> tags;
  json parsed = json::parse(features_json, nullptr, false);
  if (parsed.is_array()) {
    for (const json& tag : parsed) {
      if (tag.is_string()) tags.push_back(tag.get<std::string>());
    }
  }
  return tags;
}

// The rows of templates, trees and API families reserved for evaluation (synth/held_out.h) left out; returns how many.
Result<int64_t> drop_held_out(Database& db, const HeldOutSplit& split, std::vector<ExportRow>& rows) {
  if (split.empty()) return int64_t{0};
  std::vector<ExportRow> kept;
  for (ExportRow& row : rows) {
    std::optional<std::string> template_id;
    if (!row.template_id.empty()) template_id = row.template_id;
    Result<std::optional<std::string>> group = held_out_group(db, split, row.sample_id, template_id);
    if (!group) return make_error("export: " + group.message());
    if (!*group) kept.push_back(std::move(row));
  }
  int64_t dropped = static_cast<int64_t>(rows.size() - kept.size());
  rows = std::move(kept);
  return dropped;
}

// The track's verified pairs, less the evaluation set's items and their near-duplicates (a model
// must never train on what it is evaluated on) and less the samples of reserved templates and
// trees; `held_back` and `held_out` count what was left out.
Result<std::vector<ExportRow>> rows_for(Database& db, const ExportOptions& options, const ExportPair** pair,
                                        int64_t* held_back = nullptr, std::vector<std::string>* item_sources = nullptr,
                                        int64_t* held_out = nullptr) {
  auto found = options.policy.export_pairs.find(options.track);
  if (found == options.policy.export_pairs.end()) {
    return make_error("export: track '" + options.track + "' has no pair in the synth policy's export.pairs");
  }
  *pair = &found->second;
  Result<std::vector<ExportRow>> rows =
      verified_export_rows(db, found->second.sample_tracks, found->second.source_kind, found->second.target_kind);
  if (!rows) return make_error("export: " + rows.message());
  // What a model reads and writes, never what tailforge added to it (synth/training_text.h).
  for (ExportRow& row : *rows) {
    row.source = training_text(row.source);
    row.target = training_text(row.target);
  }
  if (found->second.source_normalization == "assembly") {
    for (ExportRow& row : *rows) row.source = normalize_assembly(row.source);
  }
  Result<std::set<std::string>> items = eval_item_ids(db, options.track);
  if (!items) return make_error("export: " + items.message());
  std::vector<ExportRow> kept;
  if (items->empty()) {
    kept = std::move(*rows);
  } else {
    // Items are verified samples of the track, so their sources are among the rows: near-duplicates
    // are judged on the side the model reads.
    NearDuplicateIndex evaluated(options.policy.dedup);
    for (const ExportRow& row : *rows) {
      if (!items->count(row.sample_id)) continue;
      evaluated.add(row.source);
      if (item_sources) item_sources->push_back(row.source);
    }
    for (ExportRow& row : *rows) {
      if (items->count(row.sample_id) || evaluated.find_near_duplicate(row.source)) continue;
      kept.push_back(std::move(row));
    }
    if (held_back) *held_back = static_cast<int64_t>(rows->size() - kept.size());
  }
  if (!options.held_out.families.empty() && options.policy.api.enabled) {
    // A sample of a reserved API family is known by its counted names: count the newest first.
    Result<const ApiTable*> table = api_table_of(options.policy.api);
    if (!table) return make_error("export: " + table.message());
    if (Result<int64_t> counted = count_sample_api(db, **table); !counted) return make_error("export: " + counted.message());
  }
  Result<int64_t> dropped = drop_held_out(db, options.held_out, kept);
  if (!dropped) return dropped.error();
  if (held_out) *held_out = *dropped;
  return kept;
}

}  // namespace

std::string normalize_assembly(const std::string& text) {
  std::string out;
  std::istringstream lines(text);
  std::string line;
  bool in_block_comment = false;
  while (std::getline(lines, line)) {
    std::string kept;
    for (size_t i = 0; i < line.size(); ++i) {
      if (in_block_comment) {
        if (line.compare(i, 2, "*/") == 0) {
          in_block_comment = false;
          ++i;
        }
        continue;
      }
      if (line.compare(i, 2, "/*") == 0) {
        in_block_comment = true;
        ++i;
        continue;
      }
      if (line.compare(i, 2, "//") == 0) break;
      bool space = line[i] == ' ' || line[i] == '\t' || line[i] == '\r';
      if (space) {
        if (!kept.empty() && kept.back() != ' ') kept.push_back(' ');
      } else {
        kept.push_back(line[i]);
      }
    }
    while (!kept.empty() && kept.back() == ' ') kept.pop_back();
    if (!kept.empty()) out += kept + "\n";
  }
  return out;
}

ResamplingWeights resampling_weights(const std::map<std::string, int64_t>& feature_counts,
                                     const std::map<std::string, int64_t>& domain_counts,
                                     const ResamplingSettings& settings) {
  ResamplingWeights weights;
  auto fill = [&settings](const std::map<std::string, int64_t>& counts, std::map<std::string, double>& out,
                          int64_t& head) {
    for (const auto& [name, count] : counts) head = std::max(head, count);
    for (const auto& [name, count] : counts) {
      double wanted = settings.target_fraction_of_head * static_cast<double>(head);
      double weight = count > 0 ? wanted / static_cast<double>(count) : settings.max_weight;
      out[name] = std::clamp(weight, 1.0, settings.max_weight);
    }
  };
  fill(feature_counts, weights.feature, weights.feature_head);
  fill(domain_counts, weights.domain, weights.domain_head);
  return weights;
}

double sample_weight(const ResamplingWeights& weights, const std::vector<std::string>& features,
                     const std::string& domain) {
  double weight = 1.0;
  for (const std::string& tag : features) {
    auto found = weights.feature.find(tag);
    if (found != weights.feature.end()) weight = std::max(weight, found->second);
  }
  auto found = weights.domain.find(domain);
  if (found != weights.domain.end()) weight = std::max(weight, found->second);
  return weight;
}

namespace {

// Writes the row's recorded launch (launch_0/launch.txt, buffers and module variables before and
// after, element_types.json) under `dir`; "" when the sample has none, else the folder's name
// relative to the export.
Result<std::string> write_launch_harness(Database& db, const ExportRow& row, const std::string& dir) {
  Sample sample;
  sample.id = row.sample_id;
  sample.variables = row.variables;
  Result<StoredLaunch> stored = stored_launch_of(db, sample);
  if (!stored) return stored.error();
  if (stored->empty()) return std::string();
  Result<CapturedLaunch> restored = restore_captured_launch(*stored, dir);
  if (!restored) return restored.error();
  if (Status s = write_export_json(dir + "/element_types.json", json(stored->element_types)); !s) return s.error();
  return "harness/" + row.sample_id;
}

// Writes the row's function, driver and recorded IO cases to `path` (a JSON object a harness
// compiles and runs: build driver.c with the assembly, feed each input on stdin, compare stdout).
Status write_io_tests(Database& db, const ExportRow& row, const std::string& path) {
  Sample sample;
  sample.id = row.sample_id;
  sample.text = row.source;
  sample.variables = row.variables;
  Result<CFunction> function = c_function_with_recorded_cases(db, sample);
  if (!function) return function.error();
  std::vector<std::string> build = driver_link_args(*function, driver_file(*function), {"function.s"}, "program");
  build.insert(build.begin(), "gcc");
  json value = {{"sample_id", row.sample_id},
                {"function_name", function->name},
                {"function", function->function},
                {"declarations", function->declarations},
                {"driver", function->driver},
                {"driver_file", driver_file(*function)},
                {"build", command_line(build)},
                {"build_note", "function.s is the assembly with its symbolic literals interpreted"},
                {"cases", io_cases_to_json(function->cases)}};
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  return write_export_json(path, value);
}

}  // namespace

Result<std::string> export_snapshot_hash(Database& db, const ExportOptions& options) {
  const ExportPair* pair = nullptr;
  Result<std::vector<ExportRow>> rows = rows_for(db, options, &pair);
  if (!rows) return rows.error();
  Result<Decontamination> decontaminated =
      decontaminate_rows(*rows, options.decontaminate, options.policy.dedup, options.policy.decontamination);
  if (!decontaminated) return make_error("export: " + decontaminated.message());
  std::vector<std::string> ids;
  for (const ExportRow& row : *rows) ids.push_back(row.sample_id);
  return snapshot_hash_of(std::move(ids));
}

namespace {

// With the pair's drop_near_duplicates: one sample per near-duplicate cluster, its first (the
// cluster's key); `cluster` follows the kept rows. Returns how many were dropped.
int64_t drop_near_duplicates(std::vector<ExportRow>& rows, std::vector<size_t>& cluster) {
  int64_t dropped = 0;
  std::vector<ExportRow> kept;
  std::vector<size_t> kept_cluster;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (cluster[i] != i) {
      ++dropped;
      continue;
    }
    kept_cluster.push_back(kept.size());
    kept.push_back(std::move(rows[i]));
  }
  rows = std::move(kept);
  cluster = std::move(kept_cluster);
  return dropped;
}

// Each row's feature tags, and the rows counted by tracked feature, domain and origin.
struct RowTags {
  std::vector<std::vector<std::string>> tags;
  std::map<std::string, int64_t> feature_counts, domain_counts, origin_counts;
};

RowTags tag_rows(const std::vector<ExportRow>& rows, const std::vector<std::string>& tracked) {
  RowTags out;
  out.tags.resize(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const ExportRow& row = rows[i];
    out.tags[i] = tags_of(row.features);
    for (const std::string& tag : out.tags[i]) {
      if (tracked.empty() || std::find(tracked.begin(), tracked.end(), tag) != tracked.end()) {
        ++out.feature_counts[tag];
      }
    }
    if (!row.domain.empty()) ++out.domain_counts[row.domain];
    ++out.origin_counts[row.origin];
  }
  return out;
}

// The tails a model fails (options.boosted) weigh at least model_failure_weight: a feature's or
// domain's weight is raised in `weights`; rows using a boosted CUDA API family are marked.
struct ModelFailureBoost {
  json tails = json::array();  // "dimension/name" of every boosted tail, for the manifest
  std::vector<bool> in_boosted_family;
};

Result<ModelFailureBoost> boost_model_failures(Database& db, const std::vector<ExportRow>& rows,
                                               const ExportOptions& options, ResamplingWeights& weights) {
  ModelFailureBoost boost;
  for (const BoostedTail& tail : options.boosted) {
    std::map<std::string, double>* map = tail.dimension == "feature" ? &weights.feature
                                          : tail.dimension == "domain" ? &weights.domain
                                                                        : nullptr;
    if (!map) continue;
    double& weight = (*map)[tail.name];
    weight = std::max(weight, options.policy.resampling.model_failure_weight);
    boost.tails.push_back(tail.dimension + "/" + tail.name);
  }
  // Rows using a CUDA API family the model fails weigh at least as much as a failed feature's.
  std::set<std::string> boosted_families;
  for (const BoostedTail& tail : options.boosted) {
    if (tail.dimension == "api_family") boosted_families.insert(tail.name);
  }
  boost.in_boosted_family.assign(rows.size(), false);
  for (size_t i = 0; i < rows.size() && !boosted_families.empty(); ++i) {
    Result<std::set<std::string>> families = sample_api_families(db, rows[i].sample_id);
    if (!families) return make_error("export: " + families.message());
    boost.in_boosted_family[i] = std::any_of(families->begin(), families->end(),
                                             [&](const std::string& f) { return boosted_families.count(f) > 0; });
  }
  for (const std::string& family : boosted_families) boost.tails.push_back("api_family/" + family);
  return boost;
}

// The rows split into training records (replicated by weight) and evaluation records, with the
// manifest's list of samples and the pair's length reductions summed over the rows.
struct ExportSplit {
  std::vector<json> train, eval;
  json sample_list = json::array();
  std::map<std::string, std::pair<double, double>> lengths;  // name -> (before, after) over exported rows
};

// Adds the row's variables named by the pair's length_reductions to `lengths`.
void add_lengths(const ExportRow& row, const ExportPair& pair, std::map<std::string, std::pair<double, double>>& lengths) {
  json variables = json::parse(row.variables, nullptr, false);
  for (const auto& [name, keys] : pair.length_reductions) {
    if (!variables.is_object() || !variables.contains(keys.first) || !variables.contains(keys.second)) continue;
    if (!variables[keys.first].is_number() || !variables[keys.second].is_number()) continue;
    lengths[name].first += variables[keys.first].get<double>();
    lengths[name].second += variables[keys.second].get<double>();
  }
}

// The row's launch harness and IO tests, where the pair asks for them, named in its listing.
Status write_row_files(Database& db, const ExportRow& row, const ExportOptions& options, const ExportPair& pair,
                       json& listed, ExportSummary& summary) {
  if (pair.launch_harness) {
    Result<std::string> written = write_launch_harness(db, row, options.out_dir + "/harness/" + row.sample_id);
    if (!written) return make_error("export: " + written.message());
    if (!written->empty()) {
      listed["harness"] = *written;
      ++summary.harnesses;
    }
  }
  if (pair.io_tests) {
    std::string file = "io_tests/" + row.sample_id + ".json";
    if (Status s = write_io_tests(db, row, options.out_dir + "/" + file); !s) return make_error("export: " + s.message());
    listed["io_tests"] = file;
    ++summary.io_tests;
  }
  return Status();
}

// Splits the rows by cluster (a whole cluster goes to eval or to train), weighs the training ones,
// and fills the summary's ids and file counts.
Result<ExportSplit> split_rows(Database& db, const std::vector<ExportRow>& rows, const std::vector<size_t>& cluster,
                               const RowTags& tags, const ResamplingWeights& weights, const ModelFailureBoost& boost,
                               const ExportOptions& options, const ExportPair& pair, ExportSummary& summary) {
  ExportSplit split;
  std::set<size_t> clusters;
  for (size_t i = 0; i < rows.size(); ++i) {
    const ExportRow& row = rows[i];
    const std::string& cluster_key = rows[cluster[i]].sample_id;
    clusters.insert(cluster[i]);
    bool held_out = cluster_held_out(cluster_key, options.policy.eval_fraction);
    double weight = held_out ? 1.0 : sample_weight(weights, tags.tags[i], row.domain);
    if (!held_out && boost.in_boosted_family[i]) {
      weight = std::max(weight, options.policy.resampling.model_failure_weight);
    }
    int copies = 1;
    if (!held_out && options.policy.resampling.replicate) {
      copies = static_cast<int>(std::floor(weight));
      if (unit_hash("round:" + row.sample_id) < weight - std::floor(weight)) ++copies;
    }
    json record = training_record(options.format, pair.instruction, row.source, row.target);
    if (options.format == "jsonl") record["sample_id"] = row.sample_id;
    if (held_out) {
      split.eval.push_back(record);
      summary.eval_ids.push_back(row.sample_id);
    } else {
      for (int c = 0; c < copies; ++c) split.train.push_back(record);
      summary.train_ids.push_back(row.sample_id);
    }
    json listed = {{"id", row.sample_id}, {"sha256", sha256_hex(row.source + "\n\x1f\n" + row.target)},
                   {"split", held_out ? "eval" : "train"}, {"weight", weight}, {"copies", held_out ? 1 : copies},
                   {"cluster", cluster_key}, {"origin", row.origin}, {"domain", row.domain},
                   {"features", tags.tags[i]}};
    // Provenance, keyed by the row's sample: here, never in the text (synth/training_text.h).
    if (!row.template_id.empty()) listed["template"] = row.template_id;
    if (row.seed) listed["seed"] = *row.seed;
    add_lengths(row, pair, split.lengths);
    if (Status s = write_row_files(db, row, options, pair, listed, summary); !s) return s.error();
    split.sample_list.push_back(std::move(listed));
  }
  summary.samples = static_cast<int64_t>(rows.size());
  summary.train_samples = static_cast<int64_t>(summary.train_ids.size());
  summary.train_rows = static_cast<int64_t>(split.train.size());
  summary.eval_samples = static_cast<int64_t>(summary.eval_ids.size());
  summary.clusters = static_cast<int64_t>(clusters.size());
  std::vector<std::string> all_ids = summary.train_ids;
  all_ids.insert(all_ids.end(), summary.eval_ids.begin(), summary.eval_ids.end());
  summary.snapshot_hash = snapshot_hash_of(all_ids);
  return split;
}

// "train.json" / "eval.jsonl": a split's file, named after the format.
std::string split_file(const ExportOptions& options, const std::string& split) {
  return split + (options.format == "jsonl" ? ".jsonl" : ".json");
}

// The leakage checks of the written train file: against the eval file, and against the track's
// evaluation items (of version item_version).
struct ExportLeakage {
  SplitLeakage split;
  SplitLeakage items;
  int64_t item_version = 0;
};

// Writes the train and eval files and dataset_info.json, then measures their leakage on the
// written files into `summary`.
Result<ExportLeakage> write_split_files(Database& db, const ExportOptions& options, const ExportPair& pair,
                                        const ExportSplit& split, const std::vector<std::string>& item_sources,
                                        ExportSummary& summary) {
  std::string train_file = split_file(options, "train"), eval_file = split_file(options, "eval");
  if (Status s = write_export_records(options.out_dir + "/" + train_file, options.format, split.train); !s) {
    return s.error();
  }
  if (Status s = write_export_records(options.out_dir + "/" + eval_file, options.format, split.eval); !s) {
    return s.error();
  }
  std::string dataset = "tailforge_" + options.track;
  json info = {{dataset + "_train", dataset_info_entry(train_file, options.format)},
               {dataset + "_eval", dataset_info_entry(eval_file, options.format)}};
  if (Status s = write_export_json(options.out_dir + "/dataset_info.json", info); !s) return s.error();
  // The split shares no near-duplicate by construction; the check proves it on the written files.
  Result<SplitLeakage> leakage =
      measure_split_leakage(options.out_dir + "/" + train_file, options.out_dir + "/" + eval_file, options.format,
                            options.format == "sharegpt" ? pair.instruction : "", options.policy.dedup);
  if (!leakage) return make_error("export: " + leakage.message());
  summary.largest_eval_train_similarity = leakage->largest_similarity;
  summary.eval_rows_with_near_duplicate = leakage->eval_rows_with_near_duplicate;
  // No evaluation item may have a near-duplicate among the training rows: measured on the file.
  Result<SplitLeakage> item_leakage =
      measure_item_leakage(options.out_dir + "/" + train_file, options.format,
                           options.format == "sharegpt" ? pair.instruction : "", item_sources, options.policy.dedup);
  if (!item_leakage) return make_error("export: " + item_leakage.message());
  Result<int64_t> item_version = eval_set_version(db, options.track);
  if (!item_version) return make_error("export: " + item_version.message());
  summary.largest_item_train_similarity = item_leakage->largest_similarity;
  summary.items_with_near_duplicate = item_leakage->eval_rows_with_near_duplicate;
  summary.evaluation_items = item_leakage->eval_rows;
  summary.evaluation_set_version = *item_version;
  return ExportLeakage{*leakage, *item_leakage, *item_version};
}

// The manifest's "length_reductions": the pair's reductions summed over the exported rows, also
// filled into the summary.
json length_reductions_json(const ExportPair& pair, const std::map<std::string, std::pair<double, double>>& lengths,
                            ExportSummary& summary) {
  json reductions = json::object();
  for (const auto& [name, keys] : pair.length_reductions) {
    auto found = lengths.find(name);
    auto [before, after] = found == lengths.end() ? std::pair<double, double>() : found->second;
    reductions[name] = {{"before_variable", keys.first}, {"after_variable", keys.second},
                        {"characters_before", before}, {"characters_after", after},
                        {"reduction", before > 0 ? 1.0 - after / before : 0.0}};
    summary.length_reductions[name] = before > 0 ? 1.0 - after / before : 0.0;
  }
  return reductions;
}

// manifest.json: the filters, counts, weights, files and checks of the export, and its samples.
json export_manifest(Database& db, const ExportOptions& options, const ExportPair& pair, ExportSummary& summary,
                     const RowTags& tags, const ResamplingWeights& weights, const ModelFailureBoost& boost,
                     const Decontamination& decontaminated, const ExportLeakage& leakage, const ExportSplit& split) {
  json manifest = {
      {"track", options.track},
      {"format", options.format},
      {"source_database", db.path()},
      {"created_ms", now_ms()},
      {"snapshot_hash", summary.snapshot_hash},
      {"filters", {{"status", "verified"}, {"sample_tracks", pair.sample_tracks}, {"source_kind", pair.source_kind},
                   {"target_kind", pair.target_kind}, {"source_normalization", pair.source_normalization},
                   {"eval_fraction", options.policy.eval_fraction}, {"dedup_threshold", options.policy.dedup.threshold},
                   {"split", "by near-duplicate cluster (MinHash/LSH, and every pair at the threshold found exactly)"},
                   {"evaluation_set", "held back: its items and their near-duplicates"},
                   {"held_back_for_evaluation", summary.held_back_for_evaluation},
                   {"held_out", {{"templates", options.held_out.templates}, {"trees", options.held_out.trees},
                                 {"samples_left_out", summary.held_out_left_out}}}}},
      {"counts", {{"samples", summary.samples}, {"train_samples", summary.train_samples},
                  {"train_rows", summary.train_rows}, {"eval_samples", summary.eval_samples},
                  {"clusters", summary.clusters}, {"by_feature", tags.feature_counts}, {"by_domain", tags.domain_counts},
                  {"by_origin", tags.origin_counts}}},
      {"sampling_weights", {{"feature", weights.feature}, {"domain", weights.domain},
                            {"feature_head", weights.feature_head}, {"domain_head", weights.domain_head},
                            {"target_fraction_of_head", options.policy.resampling.target_fraction_of_head},
                            {"max_weight", options.policy.resampling.max_weight},
                            {"model_failure_tails", boost.tails},
                            {"model_failure_weight", options.policy.resampling.model_failure_weight},
                            {"replicated", options.policy.resampling.replicate}}},
      {"files",
       {{"train", split_file(options, "train")}, {"eval", split_file(options, "eval")}, {"dataset_info", "dataset_info.json"}, {"card", "README.md"}}},
      {"decontamination",
       decontamination_json(decontaminated, options.policy.dedup, options.policy.decontamination)},
      {"leakage", split_leakage_json(leakage.split, options.policy.dedup)},
      {"evaluation_set", item_leakage_json(leakage.items, options.policy.dedup, leakage.item_version)},
      {"samples", split.sample_list}};
  if (!pair.length_reductions.empty()) manifest["length_reductions"] = length_reductions_json(pair, split.lengths, summary);
  manifest["filters"]["near_duplicates"] = pair.drop_near_duplicates ? "dropped: one sample per cluster" : "kept";
  manifest["filters"]["near_duplicates_dropped"] = summary.near_duplicates_dropped;
  if (pair.launch_harness) manifest["counts"]["harnesses"] = summary.harnesses;
  if (pair.io_tests) manifest["counts"]["io_tests"] = summary.io_tests;
  return manifest;
}

// What a training split held never becomes an evaluation item (synth/eval_set.h).
Status record_training_split(Database& db, const ExportSummary& summary) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status().error();
  if (Status s = record_trained_samples(db, summary.snapshot_hash, summary.train_ids); !s) {
    return make_error("export: recording the training split: " + s.message());
  }
  return transaction.commit();
}

}  // namespace

Result<ExportSummary> export_dataset(Database& db, const ExportOptions& options) {
  if (options.format != "alpaca" && options.format != "sharegpt" && options.format != "jsonl") {
    return make_error("export: unknown format '" + options.format + "' (alpaca, sharegpt or jsonl)");
  }
  const ExportPair* pair = nullptr;
  ExportSummary summary;
  summary.out_dir = options.out_dir;
  std::vector<std::string> item_sources;  // the evaluation items as a model reads them
  Result<std::vector<ExportRow>> rows = rows_for(db, options, &pair, &summary.held_back_for_evaluation,
                                                 &item_sources, &summary.held_out_left_out);
  if (!rows) return rows.error();
  // Samples that match a benchmark the user named leave the export (synth/decontaminate.h).
  Result<Decontamination> decontaminated =
      decontaminate_rows(*rows, options.decontaminate, options.policy.dedup, options.policy.decontamination);
  if (!decontaminated) return make_error("export: " + decontaminated.message());
  summary.decontaminated = static_cast<int64_t>(decontaminated->left_out.size());
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return make_error("export: cannot create " + options.out_dir + ": " + ec.message());

  // Split by near-duplicate cluster: a whole cluster goes to eval or to train.
  std::vector<std::string> sources;
  for (const ExportRow& row : *rows) sources.push_back(row.source);
  std::vector<size_t> cluster = near_duplicate_clusters(sources, options.policy.dedup);
  if (pair->drop_near_duplicates) summary.near_duplicates_dropped = drop_near_duplicates(*rows, cluster);

  RowTags tags = tag_rows(*rows, options.policy.tails.features.tracked);
  ResamplingWeights weights = resampling_weights(tags.feature_counts, tags.domain_counts, options.policy.resampling);
  Result<ModelFailureBoost> boost = boost_model_failures(db, *rows, options, weights);
  if (!boost) return boost.error();
  Result<ExportSplit> split = split_rows(db, *rows, cluster, tags, weights, *boost, options, *pair, summary);
  if (!split) return split.error();
  Result<ExportLeakage> leakage = write_split_files(db, options, *pair, *split, item_sources, summary);
  if (!leakage) return leakage.error();

  json manifest =
      export_manifest(db, options, *pair, summary, tags, weights, *boost, *decontaminated, *leakage, *split);
  summary.manifest_path = options.out_dir + "/manifest.json";
  if (Status s = write_export_json(summary.manifest_path, manifest); !s) return s.error();
  summary.card_path = options.out_dir + "/README.md";
  if (Status s = write_dataset_card(db, manifest, summary.card_path); !s) return make_error("export: " + s.message());
  summary.files = {split_file(options, "train"), split_file(options, "eval"), "dataset_info.json", "manifest.json",
                   "README.md"};
  if (Status s = record_training_split(db, summary); !s) return s.error();
  return summary;
}

}  // namespace tailforge
