#include "verifier/stage.h"

namespace tailforge {
namespace {

std::string to_hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char byte : bytes) {
    hex.push_back(digits[byte >> 4]);
    hex.push_back(digits[byte & 15]);
  }
  return hex;
}

std::string from_hex(const std::string& hex) {
  auto value = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  std::string bytes;
  bytes.reserve(hex.size() / 2);
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(value(hex[i]) * 16 + value(hex[i + 1])));
  }
  return bytes;
}

}  // namespace

const Artifact* StageResult::artifact(const std::string& kind) const {
  for (const auto& item : artifacts) {
    if (item.kind == kind) return &item;
  }
  return nullptr;
}

StageResult skipped_stage(const std::string& name, const std::string& reason) {
  StageResult stage;
  stage.name = name;
  stage.status = "skipped";
  stage.reason = reason;
  return stage;
}

nlohmann::json stage_result_to_full_json(const StageResult& stage) {
  nlohmann::json artifacts = nlohmann::json::array();
  for (const auto& item : stage.artifacts) {
    artifacts.push_back({{"kind", item.kind}, {"name", item.name}, {"binary", item.binary},
                         {"content", item.binary ? to_hex(item.content) : item.content},
                         {"command", item.command}, {"toolchain_version", item.toolchain_version}});
  }
  nlohmann::json json = {{"name", stage.name}, {"status", stage.status}, {"seconds", stage.seconds},
                         {"reason", stage.reason}, {"diagnostics", stage.diagnostics},
                         {"signal", stage.signal}, {"peak_rss_kb", stage.peak_rss_kb},
                         {"toolchain_version", stage.toolchain_version}, {"command", stage.command},
                         {"child_seconds", stage.child_seconds}, {"artifacts", artifacts}};
  json["exit_code"] = stage.exit_code ? nlohmann::json(*stage.exit_code) : nlohmann::json();
  return json;
}

Result<StageResult> stage_result_from_full_json(const nlohmann::json& json) {
  try {
    StageResult stage;
    stage.name = json.at("name").get<std::string>();
    stage.status = json.at("status").get<std::string>();
    stage.seconds = json.at("seconds").get<double>();
    stage.reason = json.at("reason").get<std::string>();
    stage.diagnostics = json.at("diagnostics").get<std::string>();
    stage.signal = json.at("signal").get<int>();
    stage.peak_rss_kb = json.at("peak_rss_kb").get<int64_t>();
    stage.toolchain_version = json.at("toolchain_version").get<std::string>();
    stage.command = json.at("command").get<std::string>();
    stage.child_seconds = json.value("child_seconds", 0.0);
    if (!json.at("exit_code").is_null()) stage.exit_code = json.at("exit_code").get<int>();
    for (const auto& item : json.at("artifacts")) {
      Artifact artifact{item.at("kind"), item.at("name"), item.at("content"), item.at("command"),
                        item.at("toolchain_version"), item.at("binary")};
      if (artifact.binary) artifact.content = from_hex(artifact.content);
      stage.artifacts.push_back(std::move(artifact));
    }
    return stage;
  } catch (const std::exception& error) {
    return make_error(std::string("stored stage result is malformed: ") + error.what());
  }
}

}  // namespace tailforge
