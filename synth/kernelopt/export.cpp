#include "synth/kernelopt/export.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agents/kernelopt/generated_tasks.h"
#include "base/sha256.h"
#include "store/database.h"
#include "synth/dataset_card.h"
#include "synth/export_files.h"
#include "synth/split_leakage.h"
#include "synth/training_text.h"

namespace tailforge {

const char* const kKerneloptInstruction =
    "Write a faster CUDA implementation of the reference below: same tf_launch(inputs, output, stream) interface, "
    "same results within the task's tolerance. Think it through briefly, then give the kernel unit in one "
    "```cuda block.";

std::string kernelopt_row_input(const KernelTask& task) {
  return training_text("Task: " + task.description + "\n\nReference:\n```" +
                       (task.reference_language == "pytorch" ? "python" : "cuda") + "\n" + task.reference_source +
                       "```\n");
}

namespace {

using nlohmann::json;

std::string row_input(const KernelTask& task) { return kernelopt_row_input(task); }

// What the model writes: its reasoning, then the kernel.
std::string row_output(const KernelCandidate& candidate) {
  return training_text("<think>\n" + candidate.reasoning + "\n</think>\n```cuda\n" + candidate.source + "```\n");
}

std::string origin_of(const KernelCandidate& candidate) {
  return candidate.origin == "model" ? "model " + candidate.model : "builtin";
}

// The row's record; jsonl adds the task, the reference and kernel as trained on (`texts`), and the
// curation's choice.
json row_record(const std::string& format, const KerneloptExportRow& row, const ExportRow& texts,
                const std::string& input, const std::string& output) {
  json record = training_record(format, kKerneloptInstruction, input, output);
  if (format != "jsonl") return record;
  const KernelCandidate& candidate = row.candidate;
  record.update({{"sample_id", row.sample_id},
                 {"candidate_id", row.candidate_id},
                 {"task", row.task.name},
                 {"operator_type", row.task.operator_type},
                 {"domain", row.task.domain},
                 {"description", row.task.description},
                 {"reference", texts.source},
                 {"reasoning", training_text(candidate.reasoning)},
                 {"reasoning_length", reasoning_length(candidate.reasoning)},
                 {"kernel", texts.target},
                 {"strategy", candidate.strategy},
                 {"model", candidate.origin == "model" ? candidate.model : "builtin"},
                 {"speedup", row.speedup},
                 {"device", row.device},
                 {"rule", row.rule},
                 {"why", row.why}});
  return record;
}

// The card, from the manifest alone.
std::string card_markdown(const json& manifest) {
  std::ostringstream out;
  const json& counts = manifest["counts"];
  out << "# tailforge dataset: kernelopt\n\n";
  out << "Curated CUDA kernel optimizations written by `tailforge export --track kernelopt` for LLaMA-Factory ("
      << markdown_cell(manifest["format"].get<std::string>())
      << "): each row asks for a faster kernel than a task's reference and answers with reasoning and the kernel. "
         "The rows are the newest curation's choices (`tailforge curate --track kernelopt`, ConCuR's rules). The "
         "figures below are those of `manifest.json`, which lists every row.\n\n";
  out << "| | |\n| --- | --- |\n";
  out << "| store | " << markdown_cell(manifest["source_database"].get<std::string>()) << " |\n";
  out << "| snapshot | " << manifest["snapshot_hash"].get<std::string>() << " (SHA-256 of the sorted sample ids) |\n";
  out << "| written | " << utc_time(manifest["created_ms"].get<int64_t>()) << " |\n";
  const json& files = manifest["files"];
  out << "| files | " << markdown_cell(files["train"].get<std::string>()) << ", "
      << markdown_cell(files["eval"].get<std::string>())
      << ", dataset\\_info.json (datasets tailforge\\_kernelopt\\_train and tailforge\\_kernelopt\\_eval), "
         "manifest.json, README.md |\n\n";
  out << "## Splits\n\n| split | rows |\n| --- | ---: |\n| train | " << counts["train_samples"].get<int64_t>()
      << " |\n| eval | " << counts["eval_samples"].get<int64_t>() << " |\n\n";
  out << "Rows are clustered by near-duplicate of their input (the task and its reference; Jaccard similarity "
      << fixed_decimals(manifest["filters"]["dedup_threshold"].get<double>(), 2)
      << " of token shingles, every pair checked exactly), and a whole cluster goes to one split: "
      << counts["clusters"].get<int64_t>() << " clusters. The candidates of one task share their input, so they share a split.\n\n";

  std::map<std::string, SplitCounts> by_type, by_domain, by_rule, by_origin, by_task_origin;
  std::map<std::string, std::vector<double>> speedups;  // per device, timed rows
  int64_t untimed = 0;
  for (const json& sample : manifest["samples"]) {
    bool eval = sample["split"] == "eval";
    auto add = [eval](SplitCounts& count) { (eval ? count.eval : count.train) += 1; };
    add(by_type[sample["operator_type"].get<std::string>()]);
    add(by_domain[sample["domain"].get<std::string>()]);
    add(by_rule[sample["rule"].get<std::string>()]);
    add(by_origin[sample["origin"].get<std::string>()]);
    add(by_task_origin[sample["task_origin"].get<std::string>()]);
    if (sample["timed"].get<bool>()) {
      speedups[sample["device"].get<std::string>()].push_back(sample["speedup"].get<double>());
    } else {
      ++untimed;
    }
  }
  out << "## Composition\n\n";
  write_split_table(out, "operator type", by_type);
  write_split_table(out, "domain", by_domain);
  write_split_table(out, "curation rule", by_rule);
  write_split_table(out, "kernel written by", by_origin);
  write_split_table(out, "task from", by_task_origin);
  out << "Tasks from `builtin` are tailforge's own catalog; `imported` tasks came from a task file the user "
         "imported (`tailforge import --track kernelopt`), under that file's terms.\n\n";

  out << "## Verification\n\nEvery row's kernel was built with nvcc and its output matched the reference's within "
         "the task's tolerance on the GPU named below, then both were timed there (speedup: reference time over "
         "kernel time).\n\n";
  if (speedups.empty()) {
    out << "No row was timed.\n\n";
  } else {
    out << "| GPU | rows | speedup min | median | max |\n| --- | ---: | ---: | ---: | ---: |\n";
    for (auto& [device, values] : speedups) {
      std::sort(values.begin(), values.end());
      out << "| " << markdown_cell(device.empty() ? "(unnamed)" : device) << " | " << values.size() << " | "
          << fixed_decimals(values.front(), 2) << " | " << fixed_decimals(values[values.size() / 2], 2) << " | "
          << fixed_decimals(values.back(), 2) << " |\n";
    }
    out << "\n";
  }
  if (untimed > 0) out << untimed << " rows were chosen without a timing (right, not timed).\n\n";
  write_leakage_section(out, manifest);
  write_decontamination_section(out, manifest, "both splits (source: the task's reference; target: the kernel)");
  return out.str();
}

// Each row's reference and kernel as trained on, once: the decontamination reads them, jsonl
// rows carry them. Rows whose reference or kernel matches a benchmark the user named leave the export.
// `texts` gets the kept rows' texts, texts[i] being rows[i]'s.
Result<Decontamination> decontaminate_kernelopt_rows(std::vector<KerneloptExportRow>& rows,
                                                     std::vector<ExportRow>& texts,
                                                     const KerneloptExportOptions& options) {
  for (const KerneloptExportRow& row : rows) {
    ExportRow text;
    text.sample_id = row.sample_id;
    text.source = training_text(row.task.reference_source);
    text.target = training_text(row.candidate.source);
    texts.push_back(std::move(text));
  }
  Result<Decontamination> decontaminated =
      decontaminate_rows(texts, options.decontaminate, options.dedup, options.decontamination);
  if (!decontaminated) return make_error("export: " + decontaminated.message());
  // decontaminate_rows keeps the rest in order: keep the rows whose texts it kept, so texts[i] is rows[i]'s.
  std::vector<KerneloptExportRow> kept;
  for (size_t i = 0; i < rows.size() && kept.size() < texts.size(); ++i) {
    if (rows[i].sample_id == texts[kept.size()].sample_id) kept.push_back(std::move(rows[i]));
  }
  rows = std::move(kept);
  return decontaminated;
}

// The manifest's entry for one exported row.
json sample_entry(const KerneloptExportRow& row, const std::string& input, const std::string& output,
                  const std::string& cluster_key, bool held_out) {
  return {{"id", row.sample_id},
          {"candidate_id", row.candidate_id},
          {"sha256", sha256_hex(input + "\n\x1f\n" + output)},
          {"split", held_out ? "eval" : "train"},
          {"cluster", cluster_key},
          {"task", row.task.name},
          {"task_origin", row.task.origin},
          {"family", row.task.family},
          {"features", kernel_task_features(row.task)},
          {"operator_type", row.task.operator_type},
          {"domain", row.task.domain},
          {"origin", origin_of(row.candidate)},
          {"strategy", row.candidate.strategy},
          {"rule", row.rule},
          {"why", row.why},
          {"timed", row.timed},
          {"speedup", row.speedup},
          {"device", row.device},
          {"reasoning_length", reasoning_length(row.candidate.reasoning)}};
}

}  // namespace

Result<KerneloptExportSummary> write_kernelopt_export(std::vector<KerneloptExportRow> rows,
                                                      const KerneloptExportOptions& options) {
  const std::string& format = options.format;
  if (format != "alpaca" && format != "sharegpt" && format != "jsonl") {
    return make_error("export: unknown format '" + format + "' (alpaca, sharegpt or jsonl)");
  }
  std::vector<ExportRow> texts;
  Result<Decontamination> decontaminated = decontaminate_kernelopt_rows(rows, texts, options);
  if (!decontaminated) return decontaminated.error();

  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return make_error("export: cannot create " + options.out_dir + ": " + ec.message());

  std::vector<std::string> inputs;
  for (const KerneloptExportRow& row : rows) inputs.push_back(row_input(row.task));
  std::vector<size_t> cluster = near_duplicate_clusters(inputs, options.dedup);

  KerneloptExportSummary summary;
  std::vector<json> train, eval;
  std::vector<std::string> ids;
  std::set<size_t> clusters;
  json samples = json::array();
  std::map<std::string, int64_t> by_type, by_domain, by_origin;
  for (size_t i = 0; i < rows.size(); ++i) {
    const KerneloptExportRow& row = rows[i];
    const std::string& cluster_key = rows[cluster[i]].sample_id;
    clusters.insert(cluster[i]);
    bool held_out = cluster_held_out(cluster_key, options.eval_fraction);
    std::string output = row_output(row.candidate);
    (held_out ? eval : train).push_back(row_record(format, row, texts[i], inputs[i], output));
    ids.push_back(row.sample_id);
    ++summary.by_rule[row.rule];
    ++by_type[row.task.operator_type];
    ++by_domain[row.task.domain];
    ++by_origin[origin_of(row.candidate)];
    samples.push_back(sample_entry(row, inputs[i], output, cluster_key, held_out));
  }
  summary.samples = static_cast<int64_t>(rows.size());
  summary.train_samples = static_cast<int64_t>(train.size());
  summary.eval_samples = static_cast<int64_t>(eval.size());
  summary.clusters = static_cast<int64_t>(clusters.size());
  summary.decontaminated = static_cast<int64_t>(decontaminated->left_out.size());

  std::string extension = format == "jsonl" ? ".jsonl" : ".json";
  std::string train_file = "train" + extension, eval_file = "eval" + extension;
  summary.train_path = options.out_dir + "/" + train_file;
  summary.eval_path = options.out_dir + "/" + eval_file;
  if (Status s = write_export_records(summary.train_path, format, train); !s) return s.error();
  if (Status s = write_export_records(summary.eval_path, format, eval); !s) return s.error();
  json info = {{"tailforge_kernelopt_train", dataset_info_entry(train_file, format)},
               {"tailforge_kernelopt_eval", dataset_info_entry(eval_file, format)}};
  if (Status s = write_export_json(options.out_dir + "/dataset_info.json", info); !s) return s.error();
  // The split keeps near-duplicates together by construction; the check proves it on the files.
  Result<SplitLeakage> leakage =
      measure_split_leakage(summary.train_path, summary.eval_path, format,
                            format == "sharegpt" ? kKerneloptInstruction : "", options.dedup);
  if (!leakage) return make_error("export: " + leakage.message());
  summary.largest_eval_train_similarity = leakage->largest_similarity;
  summary.eval_rows_with_near_duplicate = leakage->eval_rows_with_near_duplicate;

  json manifest = {
      {"track", "kernelopt"},
      {"format", format},
      {"source_database", options.source_database},
      {"created_ms", now_ms()},
      {"snapshot_hash", snapshot_hash_of(ids)},
      {"filters", {{"curation", "the newest curation run's choices"},
                   {"split", "by near-duplicate cluster of the input (MinHash/LSH, and every pair at the threshold "
                             "found exactly)"},
                   {"eval_fraction", options.eval_fraction},
                   {"dedup_threshold", options.dedup.threshold}}},
      {"counts", {{"samples", summary.samples}, {"train_samples", summary.train_samples},
                  {"eval_samples", summary.eval_samples}, {"clusters", summary.clusters},
                  {"by_rule", summary.by_rule}, {"by_operator_type", by_type}, {"by_domain", by_domain},
                  {"by_origin", by_origin}}},
      {"files", {{"train", train_file}, {"eval", eval_file}, {"dataset_info", "dataset_info.json"},
                 {"card", "README.md"}}},
      {"decontamination", decontamination_json(*decontaminated, options.dedup, options.decontamination)},
      {"leakage", split_leakage_json(*leakage, options.dedup)},
      {"samples", samples}};
  summary.manifest_path = options.out_dir + "/manifest.json";
  if (Status s = write_export_json(summary.manifest_path, manifest); !s) return s.error();
  summary.card_path = options.out_dir + "/README.md";
  std::ofstream card(summary.card_path, std::ios::binary | std::ios::trunc);
  card << card_markdown(manifest);
  card.close();
  if (!card) return make_error("export: cannot write " + summary.card_path);
  return summary;
}

}  // namespace tailforge
