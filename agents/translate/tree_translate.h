// Repository-level CUDA->HIP translation: a whole source tree (programs and the headers they
// share) translated once, so each file is translated knowing which headers the tree carries and
// which names it defines. Writes the translated tree, the compatibility headers it includes, and a
// report naming, per file, every untranslatable construct and every CUDA identifier left.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/translate/hipify.h"
#include "base/result.h"

namespace tailforge {

struct TreeFileReport {
  std::string path;                       // relative to the tree's root
  std::string action;                     // "translated", "copied" (not source), "skipped" (with reason)
  std::string reason;                     // why skipped: "symlink", "too_large", "unreadable", "special"
  bool ok = true;                         // translated without issues
  std::vector<TranslationIssue> issues;
  std::vector<std::string> untranslated;  // "line N: cudaFoo"
  std::vector<std::string> warnings;
};

struct TreeTranslation {
  std::vector<TreeFileReport> files;
  std::vector<std::string> compat_headers;  // copied into <out>/tailforge_compat
  int translated = 0, with_issues = 0, copied = 0, skipped = 0;
};

struct TreeTranslateOptions {
  std::string compat_dir;  // where the compatibility headers live (verifier/hip_compat)
  uint64_t max_file_bytes = 16u << 20;  // larger files are skipped, not read
};

// Source files are translated by extension (.cu .cuh .h .hpp .cpp .cc .cxx .c .inl); other
// regular files are copied; symlinks and special files are skipped and named. `out` must not be
// inside `source`. Writes <out>/tailforge_translate.json (tree_translation_to_json).
Result<TreeTranslation> translate_tree(const HipifyRules& rules, const std::string& source, const std::string& out,
                                       const TreeTranslateOptions& options);

nlohmann::ordered_json tree_translation_to_json(const TreeTranslation& translation);

// The subdirectory of the output holding the compatibility headers, which the translated files
// include by relative path ("../tailforge_compat/tailforge_bf16.h"): the output needs no -I.
inline constexpr const char* kCompatSubdir = "tailforge_compat";

}  // namespace tailforge
