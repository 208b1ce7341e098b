// The CUDA API as tailforge measures it: every CUDA name of the translation table
// (policies/hipify_rules.json and the generated table it names) plus the extra names of
// policies/api_families.json, each in one family; and the one way such names are counted in code.
// It reads the two files and text; it stores nothing and judges no coverage (synth/api_coverage.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.h"

namespace tailforge {

struct ApiFamily {
  std::string name;         // memcpy, texture_surface_array, driver_module_launch, ...
  std::string description;  // what it holds, for reports
};

struct ApiIdentifier {
  std::string name;
  std::string kind;       // the table's kind (runtime_api, driver_api, ...); "extra" for a family's extra name
  size_t family = 0;      // index into ApiTable::families
  bool in_table = true;   // false: a family's extra name, which the translator keeps as it is
};

class ApiTable {
 public:
  const std::vector<ApiFamily>& families() const { return families_; }
  const std::vector<ApiIdentifier>& identifiers() const { return identifiers_; }  // sorted by name
  const ApiIdentifier* find(std::string_view name) const;
  // The family's index, or families().size() when there is no such family.
  size_t family_index(std::string_view family) const;
  const std::string& family_name(const ApiIdentifier& identifier) const { return families_[identifier.family].name; }
  // Identifiers of one family, sorted by name.
  std::vector<const ApiIdentifier*> members(size_t family) const;
  // A digest of every name and its family: rows counted under another table are counted again.
  const std::string& key() const { return key_; }

 private:
  friend Result<ApiTable> build_api_table(std::vector<std::pair<std::string, std::string>> table_names,
                                          const std::string& families_json, const std::string& families_source);
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  std::vector<ApiFamily> families_;
  std::vector<ApiIdentifier> identifiers_;
  std::unordered_map<std::string, size_t, Hash, std::equal_to<>> index_;
  std::string key_;
};

// Groups `table_names` (name, kind) by the family rules of `families_json`, adds the families'
// extra names, and checks the file: unknown keys, a rule naming no family, an extra name that the
// table already has are errors naming `families_source` and the JSON path.
Result<ApiTable> build_api_table(std::vector<std::pair<std::string, std::string>> table_names,
                                 const std::string& families_json, const std::string& families_source);

// The translation table's CUDA names at `rules_path` (identifiers, symbol calls, warp intrinsics,
// call rewrites) grouped by the families at `families_path`. Loaded once per pair of paths for
// the process; later calls share it.
Result<const ApiTable*> load_api_table(const std::string& rules_path, const std::string& families_path);
// The shipped table: policies/hipify_rules.json with policies/api_families.json.
Result<const ApiTable*> load_default_api_table();

// Uses of each API name in the code of `text`: identifiers outside comments, string and char
// literals and #include lines. One pass of the C++ lexer; any text is fine.
using ApiUses = std::map<std::string, int64_t>;
ApiUses count_api_uses(std::string_view text, const ApiTable& table);

// How a tree's files are read for their API names (import, `api-prior`, bench/coverage).
struct TreeScanOptions {
  std::vector<std::string> extensions = {".cu", ".cuh", ".h", ".hpp", ".hh", ".hxx", ".cpp", ".cc", ".cxx", ".c", ".inl"};
  std::vector<std::string> skip_dir_names = {".git"};
  int64_t max_file_bytes = 1024 * 1024;  // larger files are not read
};

struct ApiNameCount {
  int64_t files = 0;  // files using the name
  int64_t uses = 0;
};

struct TreeApiCount {
  int64_t files = 0;      // source files read
  int64_t api_files = 0;  // of them, using at least one API name
  std::map<std::string, ApiNameCount> names;
};

// Counts the API names of every source file under `root` (symbolic links are not followed, files
// holding a NUL byte are skipped as binary). An error only when `root` is no readable folder.
Result<TreeApiCount> count_tree_api_uses(const std::string& root, const ApiTable& table,
                                         const TreeScanOptions& options = {});

}  // namespace tailforge
