// Importing a source tree: finds the CUDA program files in it, gathers the headers each includes
// from the tree, applies the import filters of policies/import_filters.json and stores every kept
// program as a pending bundle sample (store/bundles.h) with the nearest licence file of the tree
// above it (path, first line, hash). It compiles and runs nothing; the verifier
// chain picks pending samples up later. Near-duplicate detection is the caller's (a screen is passed
// in), so this module needs nothing from synth/.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policies/feature_tags.h"
#include "store/bundles.h"

namespace tailforge {

// Which files are programs and which programs are kept. Loaded from policies/import_filters.json.
struct ImportFilters {
  std::string track = "cuda2hip";
  std::string language = "cuda";
  int64_t min_lines = 10;    // a program with fewer lines is skipped (too_short)
  int64_t max_lines = 7000;  // a program with more lines is skipped (too_long)
  // Files (programs and headers) larger than this are skipped (too_large) without being read.
  int64_t max_file_bytes = 1024 * 1024;
  int64_t binary_probe_bytes = 8192;                      // a NUL byte in this many first bytes: binary
  std::vector<std::string> program_extensions = {".cu"};  // always programs
  // Programs only when they define a __global__ kernel or hold a <<< >>> launch.
  std::vector<std::string> kernel_source_extensions = {".cpp", ".cc", ".cxx", ".c"};
  std::vector<std::string> skip_dir_names = {".git"};  // folders not walked (not counted either)
  // Folders, by name at any depth, searched for includes after the including file's own folder
  // and the tree root.
  std::vector<std::string> include_dir_names = {"include", "inc"};
  int64_t max_headers = 256;  // per program; more is skipped (too_many_headers)
  // The hello-world rule: a program is a hello world when it defines kernels and every one of them
  // takes no pointer or reference parameter (it cannot hand a result back) and calls one of these.
  bool skip_hello_world = true;
  std::vector<std::string> print_functions = {"printf"};
  // Near-duplicates (MinHash over the program text) against the track's corpus and the import.
  bool near_duplicate_enabled = true;
  double near_duplicate_threshold = 0.8;
  int near_duplicate_shingle_tokens = 5;
  int near_duplicate_permutations = 128;
};

// Parses and validates the filters; errors name `file`, the key path and what was expected.
Result<ImportFilters> import_filters_from_json(const std::string& json_text, const std::string& file);
Result<ImportFilters> load_import_filters(const std::string& path);

// The near-duplicate screen: `remember` learns a text, `seen_similar` says whether a text is a
// near-duplicate of one learned before. Both empty: no near-duplicate screening.
struct NearDuplicateScreen {
  std::function<void(const std::string& text)> remember;
  std::function<bool(const std::string& text)> seen_similar;
};

struct ImportProgress {
  int64_t files_seen = 0;
  int64_t programs_kept = 0;
  std::string current;  // relative path being looked at
};

struct ImportRequest {
  std::string root;  // the tree to import
  std::string name;  // empty: the root's base name
  ImportFilters filters;
  NearDuplicateScreen near_duplicates;
  double git_timeout_seconds = 10;
  // When set, samples get feature tags and variables {"cass_domain"} like generated ones.
  const FeatureRules* feature_rules = nullptr;
  const DomainRules* domain_rules = nullptr;
  std::function<void(const ImportProgress&)> on_progress;  // called per file; may be empty
};

struct ImportSkip {
  std::string path;    // relative to the root
  std::string reason;  // too_long, too_short, hello_world, no_kernel, duplicate, near_duplicate, ...
  std::string detail;  // e.g. the line count, the header that could not be read
};

struct ImportSummary {
  std::string tree_name;
  std::string root;  // absolute
  std::optional<std::string> commit;
  int64_t files_seen = 0;  // every entry below the root that is not a folder
  int64_t programs_kept = 0;
  std::map<std::string, int64_t> skipped;  // reason -> count
  std::vector<ImportSkip> skips;           // in walking order
  std::vector<std::string> sample_ids;     // the new samples, in walking order
  std::vector<std::string> present_ids;  // programs imported before (their ids), so no work is lost
};

// Walks the tree (never following a symlink, never leaving the tree) and stores each kept program
// as a pending bundle sample of filters.track with origin 'imported'. Every file that is not kept
// is in the summary's skips with a reason. Errors: the root is not a readable folder, or the store
// failed.
Result<ImportSummary> import_tree(Database& db, const ImportRequest& request);

// The tree's git commit (`git -C root rev-parse HEAD`), empty when it is not a checkout, when git
// tracks none of its files (an ignored folder inside another checkout), or git is missing or slow.
std::optional<std::string> git_commit_of(const std::string& root, double timeout_seconds);

// Program-text rules, exposed for tests: comments removed (and string literals blanked when
// asked), whether the text defines a kernel or launches one, and the hello-world rule above.
std::string code_without_comments(const std::string& text, bool blank_strings);
bool has_kernel_or_launch(const std::string& code);
bool is_hello_world(const std::string& code, const std::vector<std::string>& print_functions);

}  // namespace tailforge
