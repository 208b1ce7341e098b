#include "synth/split_leakage.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "synth/similarity_join.h"

namespace tailforge {
namespace {

using nlohmann::json;

Result<std::string> input_of(const json& record, const std::string& format, const std::string& instruction,
                             const std::string& where) {
  if (!record.is_object()) return make_error(where + ": not a JSON object");
  if (format == "sharegpt") {
    auto conversations = record.find("conversations");
    if (conversations == record.end() || !conversations->is_array() || conversations->empty() ||
        !(*conversations)[0].is_object() || !(*conversations)[0].contains("value") ||
        !(*conversations)[0]["value"].is_string()) {
      return make_error(where + ": no first turn with a string \"value\" in \"conversations\"");
    }
    std::string text = (*conversations)[0]["value"].get<std::string>();
    std::string prefix = instruction + "\n\n";
    if (!instruction.empty() && text.compare(0, prefix.size(), prefix) == 0) text.erase(0, prefix.size());
    return text;
  }
  auto input = record.find("input");
  if (input == record.end() || !input->is_string()) return make_error(where + ": no string \"input\"");
  return input->get<std::string>();
}

}  // namespace

Result<std::vector<std::string>> written_inputs(const std::string& path, const std::string& format,
                                                const std::string& instruction) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("leakage check: cannot read " + path);
  std::vector<std::string> inputs;
  if (format == "jsonl") {
    std::string line;
    int64_t number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.empty()) continue;
      std::string where = path + ":" + std::to_string(number);
      json record = json::parse(line, nullptr, false);
      if (record.is_discarded()) return make_error("leakage check: " + where + ": not JSON");
      Result<std::string> input = input_of(record, format, instruction, where);
      if (!input) return make_error("leakage check: " + input.message());
      inputs.push_back(std::move(*input));
    }
    return inputs;
  }
  std::stringstream text;
  text << in.rdbuf();
  json records = json::parse(text.str(), nullptr, false);
  if (!records.is_array()) return make_error("leakage check: " + path + " is not a JSON array");
  for (size_t i = 0; i < records.size(); ++i) {
    Result<std::string> input = input_of(records[i], format, instruction, path + " row " + std::to_string(i));
    if (!input) return make_error("leakage check: " + input.message());
    inputs.push_back(std::move(*input));
  }
  return inputs;
}

namespace {

// The largest similarity of any of `queries` to any train input, and how many queries reach the
// threshold.
SplitLeakage leakage_between(const std::vector<std::string>& train, const std::vector<std::string>& queries,
                             const MinHashOptions& options) {
  SplitLeakage leakage;
  leakage.train_rows = static_cast<int64_t>(train.size());
  leakage.eval_rows = static_cast<int64_t>(queries.size());
  leakage.threshold = options.threshold;
  leakage.compared_from = std::min(0.5, options.threshold);

  // Replicated train rows are one text: compare each distinct text once.
  std::set<std::string> distinct(train.begin(), train.end());
  std::vector<ShingleSet> train_sets, query_sets;
  train_sets.reserve(distinct.size());
  for (const std::string& text : distinct) train_sets.push_back(shingle_hashes(text, options));
  query_sets.reserve(queries.size());
  for (const std::string& text : queries) query_sets.push_back(shingle_hashes(text, options));

  CrossSimilarity similarity = cross_similarity(query_sets, train_sets, leakage.compared_from, options.threshold);
  leakage.largest_similarity = similarity.largest;
  leakage.eval_rows_with_near_duplicate = similarity.queries_at_or_above;
  return leakage;
}

}  // namespace

Result<SplitLeakage> measure_split_leakage(const std::string& train_path, const std::string& eval_path,
                                           const std::string& format, const std::string& instruction,
                                           const MinHashOptions& options) {
  Result<std::vector<std::string>> train = written_inputs(train_path, format, instruction);
  if (!train) return train.error();
  Result<std::vector<std::string>> eval = written_inputs(eval_path, format, instruction);
  if (!eval) return eval.error();
  return leakage_between(*train, *eval, options);
}

Result<SplitLeakage> measure_item_leakage(const std::string& train_path, const std::string& format,
                                          const std::string& instruction, const std::vector<std::string>& items,
                                          const MinHashOptions& options) {
  Result<std::vector<std::string>> train = written_inputs(train_path, format, instruction);
  if (!train) return train.error();
  return leakage_between(*train, items, options);
}

namespace {

// What both leakage figures hold: how similarity is measured and what was found.
json leakage_figures(const SplitLeakage& leakage, const MinHashOptions& options) {
  return {{"similarity", "exact Jaccard similarity of token shingles (the store's near-duplicate measure)"},
          {"shingle_tokens", options.shingle_tokens},
          {"train_rows", leakage.train_rows},
          {"threshold", leakage.threshold},
          {"compared_from", leakage.compared_from},
          {"largest_similarity", leakage.largest_similarity ? json(*leakage.largest_similarity) : json()}};
}

}  // namespace

json split_leakage_json(const SplitLeakage& leakage, const MinHashOptions& options) {
  json figures = leakage_figures(leakage, options);
  figures["measured_on"] = "the written train and eval files: each row's input, without the instruction";
  figures["eval_rows"] = leakage.eval_rows;
  figures["eval_rows_with_near_duplicate"] = leakage.eval_rows_with_near_duplicate;
  return figures;
}

json item_leakage_json(const SplitLeakage& leakage, const MinHashOptions& options, int64_t version) {
  json figures = leakage_figures(leakage, options);
  figures["measured_on"] =
      "the written train file (each row's input, without the instruction) against every evaluation item of the "
      "track as a model reads it";
  figures["evaluation_set_version"] = version;
  figures["items"] = leakage.eval_rows;
  figures["items_with_near_duplicate"] = leakage.eval_rows_with_near_duplicate;
  return figures;
}

}  // namespace tailforge
