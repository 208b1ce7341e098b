#include "verifier/compile_cache.h"

#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "store/cache.h"

namespace tailforge {
namespace {

// A stored value is a first line naming the format, a second line of JSON with the stage's
// fields and each artifact's size, then the artifacts' contents back to back, raw. Executables
// stay raw bytes, so a lookup holds each one about once instead of as hex inside a JSON string.
constexpr std::string_view kFormatLine = "tailforge-compile-cache 2\n";

std::string encode_stage(const StageResult& stage) {
  nlohmann::json artifacts = nlohmann::json::array();
  size_t content_bytes = 0;
  for (const auto& item : stage.artifacts) {
    artifacts.push_back({{"kind", item.kind}, {"name", item.name}, {"binary", item.binary},
                         {"size", item.content.size()}, {"command", item.command},
                         {"toolchain_version", item.toolchain_version}});
    content_bytes += item.content.size();
  }
  nlohmann::json header = {{"name", stage.name}, {"status", stage.status}, {"seconds", stage.seconds},
                           {"reason", stage.reason}, {"diagnostics", stage.diagnostics},
                           {"signal", stage.signal}, {"peak_rss_kb", stage.peak_rss_kb},
                           {"toolchain_version", stage.toolchain_version}, {"command", stage.command},
                           {"child_seconds", stage.child_seconds}, {"artifacts", artifacts}};
  header["exit_code"] = stage.exit_code ? nlohmann::json(*stage.exit_code) : nlohmann::json();
  // Compact JSON escapes every newline inside strings, so the header is one line.
  std::string header_line = header.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string value;
  value.reserve(kFormatLine.size() + header_line.size() + 1 + content_bytes);
  value.append(kFormatLine).append(header_line).push_back('\n');
  for (const auto& item : stage.artifacts) value.append(item.content);
  return value;
}

Result<StageResult> decode_stage(std::string_view value) {
  if (!value.starts_with(kFormatLine)) return make_error("stored stage result has an unknown format");
  value.remove_prefix(kFormatLine.size());
  size_t header_end = value.find('\n');
  if (header_end == std::string_view::npos) return make_error("stored stage result has no header line");
  nlohmann::json header = nlohmann::json::parse(value.substr(0, header_end), nullptr, false);
  if (header.is_discarded()) return make_error("stored stage result has a malformed header");
  std::string_view contents = value.substr(header_end + 1);
  try {
    StageResult stage;
    stage.name = header.at("name").get<std::string>();
    stage.status = header.at("status").get<std::string>();
    stage.seconds = header.at("seconds").get<double>();
    stage.reason = header.at("reason").get<std::string>();
    stage.diagnostics = header.at("diagnostics").get<std::string>();
    stage.signal = header.at("signal").get<int>();
    stage.peak_rss_kb = header.at("peak_rss_kb").get<int64_t>();
    stage.toolchain_version = header.at("toolchain_version").get<std::string>();
    stage.command = header.at("command").get<std::string>();
    stage.child_seconds = header.at("child_seconds").get<double>();
    if (!header.at("exit_code").is_null()) stage.exit_code = header.at("exit_code").get<int>();
    for (const auto& item : header.at("artifacts")) {
      size_t size = item.at("size").get<size_t>();
      if (size > contents.size()) return make_error("stored stage result is truncated");
      stage.artifacts.push_back({item.at("kind"), item.at("name"), std::string(contents.substr(0, size)),
                                 item.at("command"), item.at("toolchain_version"), item.at("binary")});
      contents.remove_prefix(size);
    }
    if (!contents.empty()) return make_error("stored stage result has bytes after its artifacts");
    return stage;
  } catch (const std::exception& error) {
    return make_error(std::string("stored stage result is malformed: ") + error.what());
  }
}

}  // namespace

std::string compile_cache_key(const CompileKey& key) {
  nlohmann::json json = {{"source", key.source_hash}, {"tool", key.tool},
                         {"version", key.tool_version}, {"flags", key.flags}, {"target", key.target}};
  return sha256_hex(json.dump());
}

std::optional<StageResult> compile_cache_get(Database& db, const std::string& key) {
  std::optional<std::string> stored = cache_lookup(db, "compile", key);
  if (!stored) return std::nullopt;
  Result<StageResult> stage = decode_stage(*stored);
  stored.reset();
  if (!stage) return std::nullopt;
  stage->cached = true;
  return std::move(stage).value();
}

Status compile_cache_put(Database& db, const std::string& key, const StageResult& stage) {
  std::string value;
  try {
    value = encode_stage(stage);
  } catch (const std::exception& error) {
    return make_error(std::string("compile cache: cannot encode stage ") + stage.name + ": " + error.what());
  }
  return cache_store(db, "compile", key, value);
}

}  // namespace tailforge
