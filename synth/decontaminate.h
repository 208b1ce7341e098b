// Benchmark decontamination: reads the user's benchmark folders (.cu, .hip, .ptx, .s, .c ...
// files) and JSONL files, and says whether a text is a near-duplicate of a benchmark text (the
// store's MinHash machinery, confirmed by the exact Jaccard similarity; between two C-family texts
// also with identifiers and numbers masked) or shares a run of at least N tokens with one (a
// rolling hash of token n-grams, confirmed token by token); and leaves the export rows that match
// one out of an export.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "store/corpus.h"
#include "synth/minhash.h"

namespace tailforge {

// The synth policy's "decontamination" section.
struct DecontaminationSettings {
  int run_tokens = 50;  // a shared run of this many tokens (the store's tokens) is a match
  // The masked near-duplicate measure (between C-family texts) sees renamed identifiers and
  // changed numeric literals as equal; both false: no masked measure.
  bool mask_identifiers = true;
  bool mask_numbers = true;
  // Files read from a benchmark folder (case-insensitive); .jsonl files are read as JSONL.
  std::vector<std::string> extensions = {".cu", ".cuh", ".hip", ".ptx", ".s", ".c", ".h", ".cpp", ".cc"};
  int64_t max_file_bytes = 8 * 1024 * 1024;  // a larger file is skipped (named in the manifest)
};

// One benchmark text: a file, or one string of a JSONL record.
struct BenchmarkText {
  std::string name;  // the file's path; for JSONL "path:LINE" or "path:LINE:key.path"
  std::string text;
};

struct BenchmarkSet {
  std::vector<std::string> paths;  // as given
  std::vector<BenchmarkText> texts;
  int64_t files = 0;                 // files read
  std::vector<std::string> skipped;  // "path: why" (too large, unreadable, binary, a JSONL line not JSON)
};

// Reads every benchmark text under `paths`: a folder is walked (directory symlinks not followed)
// for files with the settings' extensions and .jsonl files; a file is read as JSONL when it ends
// in .jsonl, else as one text. A JSONL line gives one text per string it holds (a JSON string
// line: itself). Errors: a path that does not exist, or paths that hold no benchmark text at all.
Result<BenchmarkSet> read_benchmarks(const std::vector<std::string>& paths, const DecontaminationSettings& settings);

struct BenchmarkMatch {
  std::string benchmark;  // BenchmarkText::name
  std::string measure;    // "near_duplicate", "near_duplicate_masked" or "shared_run"
  // near_duplicate(_masked): the exact Jaccard similarity of the (masked) shingle sets (LSH found
  // it: its MinHash estimate is at or above the threshold); shared_run: the run's length in tokens.
  double value = 0;
};

// Whether a text is C-family code (C, C++, CUDA, HIP) rather than an assembly listing (PTX, SASS,
// RDNA3, x86): its tokens hold '{', '}' and `void` or `return`. Masking identifiers would make any
// two listings alike (mnemonics and registers are identifiers), so only C-family texts are
// compared masked.
bool is_c_family(std::string_view text);

// The benchmark texts indexed once; match() asks about one text. Not thread-safe to build;
// match() is const and may be called from several threads.
class BenchmarkIndex {
 public:
  // `dedup` is the store's near-duplicate setting (shingles, permutations, threshold, seed, masking
  // as the store masks); the settings decide the masked measure and the run length.
  BenchmarkIndex(const std::vector<BenchmarkText>& texts, const MinHashOptions& dedup,
                 const DecontaminationSettings& settings);

  // The most similar near-duplicate benchmark text (by the store's measure, then, for a C-family
  // text, the masked one), else the first benchmark text sharing a run of run_tokens tokens
  // (reported with the whole run's length); nothing when none.
  std::optional<BenchmarkMatch> match(std::string_view text) const;

  size_t size() const { return names_.size(); }

 private:
  struct Gram {
    uint64_t hash;
    uint32_t text;
    uint32_t position;
  };
  // Texts of one near-duplicate measure: the index (which keeps each text's shingles) and, per
  // indexed text, its benchmark text.
  struct Measure {
    std::string name;
    NearDuplicateIndex index;
    std::vector<uint32_t> text;
    void add(std::string_view content, uint32_t text_index);
    std::optional<BenchmarkMatch> most_similar(std::string_view content, const std::vector<std::string>& names) const;
  };
  std::optional<BenchmarkMatch> shared_run(std::string_view text) const;
  bool may_hold(uint64_t hash) const;

  MinHashOptions run_options_;
  size_t run_tokens_;
  bool masked_measure_;
  std::vector<std::string> names_;
  Measure plain_;                                    // the store's own options
  Measure masked_;                                   // identifiers and numbers masked, C-family texts only
  std::vector<std::vector<uint64_t>> token_hashes_;  // per text, to confirm a run token by token
  std::vector<Gram> grams_;                          // every run_tokens window, by hash
  std::vector<uint64_t> filter_;                     // a bit per hash bucket: a window may be in grams_
};

// A row left out of an export, and why.
struct LeftOutRow {
  std::string sample_id;
  std::string side;  // source or target: the text that matched
  BenchmarkMatch match;
};

struct Decontamination {
  BenchmarkSet benchmarks;  // empty paths: no check was asked for
  std::vector<LeftOutRow> left_out;
};

// Reads the benchmarks at `paths` and removes from `rows` every row whose source or target matches
// one, keeping the order of the rest. No paths: nothing is read or removed. Errors: those of
// read_benchmarks.
Result<Decontamination> decontaminate_rows(std::vector<ExportRow>& rows, const std::vector<std::string>& paths,
                                           const MinHashOptions& dedup, const DecontaminationSettings& settings);

// The manifest's "decontamination" object: benchmarks, measures and thresholds, left_out rows.
nlohmann::json decontamination_json(const Decontamination& decontamination, const MinHashOptions& dedup,
                                    const DecontaminationSettings& settings);

}  // namespace tailforge
