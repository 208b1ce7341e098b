#include "synth/export_files.h"

#include <algorithm>
#include <fstream>

#include "base/sha256.h"
#include "synth/similarity_join.h"

namespace tailforge {

using nlohmann::json;

json training_record(const std::string& format, const std::string& instruction, const std::string& input,
                     const std::string& output) {
  if (format == "sharegpt") {
    return {{"conversations", json::array({{{"from", "human"}, {"value", instruction + "\n\n" + input}},
                                           {{"from", "gpt"}, {"value", output}}})}};
  }
  return {{"instruction", instruction}, {"input", input}, {"output", output}};
}

Status write_export_records(const std::string& path, const std::string& format, const std::vector<json>& records) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error("export: cannot write " + path);
  if (format == "jsonl") {
    for (const json& record : records) out << record.dump() << "\n";
  } else {
    out << json(records).dump(1) << "\n";
  }
  out.close();
  if (!out) return make_error("export: writing " + path + " failed (disk full?)");
  return {};
}

Status write_export_json(const std::string& path, const json& value) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << value.dump(1) << "\n";
  out.close();
  if (!out) return make_error("export: cannot write " + path);
  return {};
}

json dataset_info_entry(const std::string& file, const std::string& format) {
  if (format == "sharegpt") {
    return {{"file_name", file},
            {"formatting", "sharegpt"},
            {"columns", {{"messages", "conversations"}}},
            {"tags", {{"role_tag", "from"}, {"content_tag", "value"}, {"user_tag", "human"}, {"assistant_tag", "gpt"}}}};
  }
  return {{"file_name", file},
          {"formatting", "alpaca"},
          {"columns", {{"prompt", "instruction"}, {"query", "input"}, {"response", "output"}}}};
}

double unit_hash(const std::string& text) {
  return static_cast<double>(std::stoull(sha256_hex(text).substr(0, 13), nullptr, 16)) / static_cast<double>(1ull << 52);
}

bool cluster_held_out(const std::string& cluster_key, double eval_fraction) {
  return unit_hash("split:" + cluster_key) < eval_fraction;
}

std::vector<size_t> near_duplicate_clusters(const std::vector<std::string>& texts, const MinHashOptions& dedup) {
  std::vector<size_t> cluster = cluster_texts(texts, dedup);
  std::vector<ShingleSet> shingles;
  shingles.reserve(texts.size());
  for (const std::string& text : texts) shingles.push_back(shingle_hashes(text, dedup));
  return merge_similar(shingles, cluster, dedup.threshold);
}

std::string snapshot_hash_of(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  std::string joined;
  for (const std::string& id : ids) joined += id + "\n";
  return sha256_hex(joined);
}

}  // namespace tailforge
