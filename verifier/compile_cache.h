// The compile cache: a tool run's stage result and artifacts, keyed on everything that decides
// them (source hash, tool, tool version, flags, target), kept in the store's "compile" namespace.
// It does not run tools; callers look up before running and store after.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "store/database.h"
#include "verifier/stage.h"

namespace tailforge {

struct CompileKey {
  std::string source_hash;           // sha256 of every input file's content
  std::string tool;                  // tool path
  std::string tool_version;
  std::vector<std::string> flags;    // argv with scratch paths replaced by placeholders
  std::string target;                // "sm_80", "gfx1100", "" ...
};

std::string compile_cache_key(const CompileKey& key);

// The stored result (marked cached) or nullopt; an entry that is malformed or in an older format
// counts as a miss and is replaced by the next store.
std::optional<StageResult> compile_cache_get(Database& db, const std::string& key);
Status compile_cache_put(Database& db, const std::string& key, const StageResult& stage);

}  // namespace tailforge
