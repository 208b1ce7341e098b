#include "verifier/compile_cache.h"

#include "store/cache.h"
#include "store/sha256.h"

namespace tailforge {

std::string compile_cache_key(const CompileKey& key) {
  nlohmann::json json = {{"source", key.source_hash}, {"tool", key.tool},
                         {"version", key.tool_version}, {"flags", key.flags}, {"target", key.target}};
  return sha256_hex(json.dump());
}

std::optional<StageResult> compile_cache_get(Database& db, const std::string& key) {
  std::optional<std::string> stored = cache_lookup(db, "compile", key);
  if (!stored) return std::nullopt;
  nlohmann::json json = nlohmann::json::parse(*stored, nullptr, false);
  if (json.is_discarded()) return std::nullopt;
  Result<StageResult> stage = stage_result_from_full_json(json);
  if (!stage) return std::nullopt;
  stage->cached = true;
  return std::move(stage).value();
}

Status compile_cache_put(Database& db, const std::string& key, const StageResult& stage) {
  std::string value;
  try {
    value = stage_result_to_full_json(stage).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception& error) {
    return make_error(std::string("compile cache: cannot encode stage ") + stage.name + ": " + error.what());
  }
  return cache_store(db, "compile", key, value);
}

}  // namespace tailforge
