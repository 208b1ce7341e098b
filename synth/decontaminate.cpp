#include "synth/decontaminate.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/files.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t kRollingBase = 0x100000001b3ull * 2 + 1;  // odd: every window weighs each token differently
constexpr size_t kBinaryProbeBytes = 8192;

uint64_t mix(uint64_t x) { return mix64(x); }

uint64_t token_hash(std::string_view token) { return token_hash64(token); }

std::vector<uint64_t> token_hashes(std::string_view text, const MinHashOptions& options) {
  std::vector<std::string> tokens = normalized_tokens(text, options);
  std::vector<uint64_t> hashes;
  hashes.reserve(tokens.size());
  for (const std::string& token : tokens) hashes.push_back(token_hash(token));
  return hashes;
}

// Calls visit(position, hash) for every window of n tokens, by a polynomial rolling hash.
template <typename Visit>
void for_each_window(const std::vector<uint64_t>& tokens, size_t n, Visit visit) {
  if (n == 0 || tokens.size() < n) return;
  uint64_t top = 1;  // base^(n-1)
  for (size_t i = 1; i < n; ++i) top *= kRollingBase;
  uint64_t hash = 0;
  for (size_t i = 0; i < n; ++i) hash = hash * kRollingBase + tokens[i];
  for (size_t start = 0;; ++start) {
    if (!visit(start, hash)) return;
    if (start + n >= tokens.size()) return;
    hash = (hash - tokens[start] * top) * kRollingBase + tokens[start + n];
  }
}

std::string lower_extension(const fs::path& path) {
  std::string extension = path.extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return extension;
}

// A file's text, or why it is skipped.
struct FileText {
  std::string text;
  std::string skipped;
};

FileText read_text_file(const fs::path& path, int64_t max_bytes) {
  std::error_code ec;
  uintmax_t size = fs::file_size(path, ec);
  if (ec) return {"", "unreadable (" + ec.message() + ")"};
  if (size > static_cast<uintmax_t>(max_bytes)) {
    return {"", "too large (" + std::to_string(size) + " bytes, decontamination.max_file_bytes " +
                    std::to_string(max_bytes) + ")"};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return {"", "unreadable"};
  std::stringstream content;
  content << in.rdbuf();
  FileText read{content.str(), ""};
  if (read.text.find('\0') < std::min(read.text.size(), kBinaryProbeBytes)) return {"", "binary (a NUL byte)"};
  return read;
}

// One text per string of a JSONL file's records, walked without recursion.
void read_jsonl(const std::string& name, const std::string& content, BenchmarkSet& set) {
  std::istringstream lines(content);
  std::string line;
  int64_t number = 0, not_json = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    json record = json::parse(line, nullptr, false);
    if (record.is_discarded()) {
      ++not_json;
      continue;
    }
    std::string where = name + ":" + std::to_string(number);
    std::vector<std::pair<const json*, std::string>> pending = {{&record, ""}};
    while (!pending.empty()) {
      auto [value, key] = pending.back();
      pending.pop_back();
      if (value->is_string()) {
        set.texts.push_back({key.empty() ? where : where + ":" + key, value->get<std::string>()});
      } else if (value->is_object()) {
        for (auto it = value->begin(); it != value->end(); ++it) {
          pending.emplace_back(&it.value(), key.empty() ? it.key() : key + "." + it.key());
        }
      } else if (value->is_array()) {
        for (size_t i = 0; i < value->size(); ++i) {
          pending.emplace_back(&(*value)[i], (key.empty() ? "" : key + ".") + std::to_string(i));
        }
      }
    }
  }
  if (not_json > 0) set.skipped.push_back(name + ": " + std::to_string(not_json) + " line(s) not JSON");
}

void read_file(const fs::path& path, bool jsonl, const DecontaminationSettings& settings, BenchmarkSet& set) {
  FileText read = read_text_file(path, settings.max_file_bytes);
  if (!read.skipped.empty()) {
    set.skipped.push_back(path.string() + ": " + read.skipped);
    return;
  }
  ++set.files;
  if (jsonl) {
    read_jsonl(path.string(), read.text, set);
  } else {
    set.texts.push_back({path.string(), std::move(read.text)});
  }
}

}  // namespace

Result<BenchmarkSet> read_benchmarks(const std::vector<std::string>& paths, const DecontaminationSettings& settings) {
  BenchmarkSet set;
  set.paths = paths;
  for (const std::string& given : paths) {
    fs::path path(given);
    std::error_code ec;
    fs::file_status status = fs::status(path, ec);
    if (!fs::exists(status)) return make_error("decontaminate: no file or folder " + given);
    if (!fs::is_directory(status)) {
      read_file(path, lower_extension(path) == ".jsonl", settings, set);
      continue;
    }
    std::vector<fs::path> files;
    fs::recursive_directory_iterator walk(path, fs::directory_options::skip_permission_denied, ec);
    if (ec) return make_error("decontaminate: cannot read folder " + given + ": " + ec.message());
    for (auto it = walk; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) break;
      if (!it->is_regular_file(ec)) continue;
      std::string extension = lower_extension(it->path());
      bool wanted = extension == ".jsonl" || std::find(settings.extensions.begin(), settings.extensions.end(),
                                                       extension) != settings.extensions.end();
      if (wanted) files.push_back(it->path());
    }
    if (ec) set.skipped.push_back(given + ": walk stopped (" + ec.message() + ")");
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) read_file(file, lower_extension(file) == ".jsonl", settings, set);
  }
  if (set.texts.empty()) {
    std::string listed;
    for (const std::string& path : paths) listed += (listed.empty() ? "" : ", ") + path;
    std::string extensions;
    for (const std::string& extension : settings.extensions) extensions += " " + extension;
    return make_error("decontaminate: " + listed + " hold(s) no benchmark text (files ending in" + extensions +
                      " or .jsonl" + (set.skipped.empty() ? "" : "; skipped: " + set.skipped.front()) + ")");
  }
  return set;
}

bool is_c_family(std::string_view text) {
  bool open = false, close = false, function = false;
  for (const std::string& token : normalized_tokens(text, MinHashOptions())) {
    open = open || token == "{";
    close = close || token == "}";
    function = function || token == "void" || token == "return";
    if (open && close && function) return true;
  }
  return false;
}

void BenchmarkIndex::Measure::add(std::string_view content, uint32_t text_index) {
  index.add_shingles(shingle_hashes(content, index.hasher().options()));
  text.push_back(text_index);
}

std::optional<BenchmarkMatch> BenchmarkIndex::Measure::most_similar(std::string_view content,
                                                                    const std::vector<std::string>& names) const {
  if (index.size() == 0) return std::nullopt;
  std::vector<uint64_t> set = shingle_hashes(content, index.hasher().options());
  std::optional<BenchmarkMatch> best;
  for (size_t candidate : index.near_duplicates(set)) {
    double similarity = shingle_set_jaccard(set, index.shingles_at(candidate));
    if (!best || similarity > best->value) best = BenchmarkMatch{names[text[candidate]], name, similarity};
  }
  return best;
}

BenchmarkIndex::BenchmarkIndex(const std::vector<BenchmarkText>& texts, const MinHashOptions& dedup,
                               const DecontaminationSettings& settings)
    : run_options_(dedup),
      run_tokens_(static_cast<size_t>(std::max(1, settings.run_tokens))),
      masked_measure_(settings.mask_identifiers || settings.mask_numbers),
      plain_{"near_duplicate", NearDuplicateIndex(dedup), {}},
      masked_{"near_duplicate_masked",
              NearDuplicateIndex([&] {
                MinHashOptions masked = dedup;
                masked.mask_identifiers = masked.mask_identifiers || settings.mask_identifiers;
                masked.mask_numbers = masked.mask_numbers || settings.mask_numbers;
                return masked;
              }()),
              {}} {
  for (const BenchmarkText& text : texts) {
    uint32_t index = static_cast<uint32_t>(names_.size());
    names_.push_back(text.name);
    plain_.add(text.text, index);
    if (masked_measure_ && is_c_family(text.text)) masked_.add(text.text, index);
    token_hashes_.push_back(token_hashes(text.text, run_options_));
    for_each_window(token_hashes_.back(), run_tokens_, [&](size_t position, uint64_t hash) {
      grams_.push_back({hash, index, static_cast<uint32_t>(position)});
      return true;
    });
  }
  std::sort(grams_.begin(), grams_.end(), [](const Gram& a, const Gram& b) {
    return a.hash != b.hash ? a.hash < b.hash : (a.text != b.text ? a.text < b.text : a.position < b.position);
  });
  size_t bits = 64;
  while (bits < grams_.size() * 16) bits *= 2;
  filter_.assign(bits / 64, 0);
  for (const Gram& gram : grams_) {
    uint64_t bit = mix(gram.hash) & (bits - 1);
    filter_[bit / 64] |= 1ull << (bit % 64);
  }
}

bool BenchmarkIndex::may_hold(uint64_t hash) const {
  uint64_t bit = mix(hash) & (filter_.size() * 64 - 1);
  return (filter_[bit / 64] >> (bit % 64)) & 1;
}

std::optional<BenchmarkMatch> BenchmarkIndex::shared_run(std::string_view text) const {
  if (grams_.empty()) return std::nullopt;
  std::vector<uint64_t> tokens = token_hashes(text, run_options_);
  std::optional<BenchmarkMatch> found;
  for_each_window(tokens, run_tokens_, [&](size_t start, uint64_t hash) {
    if (!may_hold(hash)) return true;
    auto first = std::lower_bound(grams_.begin(), grams_.end(), hash,
                                  [](const Gram& gram, uint64_t wanted) { return gram.hash < wanted; });
    for (auto gram = first; gram != grams_.end() && gram->hash == hash; ++gram) {
      const std::vector<uint64_t>& bench = token_hashes_[gram->text];
      if (!std::equal(tokens.begin() + static_cast<long>(start),
                      tokens.begin() + static_cast<long>(start + run_tokens_), bench.begin() + gram->position)) {
        continue;  // a hash collision, not a shared run
      }
      size_t length = run_tokens_;
      while (start + length < tokens.size() && gram->position + length < bench.size() &&
             tokens[start + length] == bench[gram->position + length]) {
        ++length;
      }
      found = BenchmarkMatch{names_[gram->text], "shared_run", static_cast<double>(length)};
      return false;
    }
    return true;
  });
  return found;
}

std::optional<BenchmarkMatch> BenchmarkIndex::match(std::string_view text) const {
  if (std::optional<BenchmarkMatch> near = plain_.most_similar(text, names_)) return near;
  if (masked_measure_ && masked_.index.size() > 0 && is_c_family(text)) {
    if (std::optional<BenchmarkMatch> near = masked_.most_similar(text, names_)) return near;
  }
  return shared_run(text);
}

Result<Decontamination> decontaminate_rows(std::vector<ExportRow>& rows, const std::vector<std::string>& paths,
                                           const MinHashOptions& dedup, const DecontaminationSettings& settings) {
  Decontamination decontamination;
  if (paths.empty()) return decontamination;
  Result<BenchmarkSet> benchmarks = read_benchmarks(paths, settings);
  if (!benchmarks) return benchmarks.error();
  decontamination.benchmarks = std::move(*benchmarks);
  BenchmarkIndex index(decontamination.benchmarks.texts, dedup, settings);
  std::vector<ExportRow> kept;
  kept.reserve(rows.size());
  for (ExportRow& row : rows) {
    std::optional<BenchmarkMatch> match = index.match(row.source);
    std::string side = "source";
    if (!match && row.target != row.source) {
      match = index.match(row.target);
      side = "target";
    }
    if (match) {
      decontamination.left_out.push_back({row.sample_id, side, std::move(*match)});
    } else {
      kept.push_back(std::move(row));
    }
  }
  rows = std::move(kept);
  return decontamination;
}

json decontamination_json(const Decontamination& decontamination, const MinHashOptions& dedup,
                          const DecontaminationSettings& settings) {
  json left_out = json::array();
  for (const LeftOutRow& row : decontamination.left_out) {
    left_out.push_back({{"id", row.sample_id},
                        {"side", row.side},
                        {"benchmark", row.match.benchmark},
                        {"measure", row.match.measure},
                        {"value", row.match.value}});
  }
  return {{"benchmarks", decontamination.benchmarks.paths},
          {"files_read", decontamination.benchmarks.files},
          {"texts", decontamination.benchmarks.texts.size()},
          {"skipped", decontamination.benchmarks.skipped},
          {"measures",
           {{"near_duplicate",
             {{"threshold", dedup.threshold},
              {"shingle_tokens", dedup.shingle_tokens},
              {"value", "exact Jaccard similarity of the shingle sets"}}},
            {"near_duplicate_masked",
             {{"threshold", dedup.threshold},
              {"shingle_tokens", dedup.shingle_tokens},
              {"mask_identifiers", settings.mask_identifiers},
              {"mask_numbers", settings.mask_numbers},
              {"applies_to", "two C-family texts (C, C++, CUDA, HIP), never assembly listings"},
              {"value", "exact Jaccard similarity of the masked shingle sets"}}},
            {"shared_run", {{"run_tokens", settings.run_tokens}, {"value", "the shared run's length in tokens"}}}}},
          {"left_out_count", decontamination.left_out.size()},
          {"left_out", left_out}};
}

}  // namespace tailforge
