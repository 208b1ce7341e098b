#include "daemon/scaleout.h"

#include <unistd.h>

#include <algorithm>

namespace tailforge {

Result<WorkerSettings> worker_settings(const nlohmann::json& config) {
  const nlohmann::json& workers = config["workers"];
  WorkerSettings settings;
  settings.local_verify = workers["local_verify"].get<bool>();
  for (const nlohmann::json& need : workers["verify_needs"]) {
    if (!need.is_string()) return make_error("workers.verify_needs: expected stage family names, got " + need.dump());
    settings.verify_needs.push_back(need.get<std::string>());
  }
  double lease_seconds = workers["lease_seconds"].get<double>();
  if (lease_seconds < 1) return make_error("workers.lease_seconds must be at least 1");
  settings.lease_ms = static_cast<int64_t>(lease_seconds * 1000);
  settings.max_artifact_bytes = workers["max_artifact_bytes"].get<int64_t>();
  if (settings.max_artifact_bytes < 1024) return make_error("workers.max_artifact_bytes must be at least 1024");
  settings.llm_translator = config.value("agents", nlohmann::json::object()).value("translator", "builtin") == "llm";
  if (settings.llm_translator && !settings.local_verify) {
    return make_error("workers.local_verify is false, but with agents.translator \"llm\" verification stays in the daemon: "
                      "no worker could run a verify job");
  }
  // A need no stage family answers can never be met: say so now rather than let jobs wait forever.
  std::vector<std::string> known;
  for (const StageAvailability& stage : stage_availability(Toolchains{})) known.push_back(stage.stage);
  for (const std::string& need : settings.verify_needs) {
    if (std::find(known.begin(), known.end(), need) == known.end()) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      return make_error("workers.verify_needs: unknown stage family '" + need + "' (known: " + list + ")");
    }
  }
  return settings;
}

nlohmann::json host_capabilities(const Toolchains& toolchains, const std::string& sandbox_mode) {
  nlohmann::json stages = nlohmann::json::array();
  nlohmann::json unavailable = nlohmann::json::object();
  for (const StageAvailability& stage : stage_availability(toolchains, sandbox_mode)) {
    if (stage.can_run) {
      stages.push_back(stage.stage);
    } else {
      unavailable[stage.stage] = stage.reason;
    }
  }
  nlohmann::json tools = nlohmann::json::object();
  for (const auto& [role, tool] : toolchains.tools) {
    if (tool.found()) tools[role] = tool.version;
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuInfo& gpu : toolchains.gpus) gpus.push_back({{"vendor", gpu.vendor}, {"name", gpu.name}});
  return {{"stages", stages}, {"unavailable", unavailable}, {"tools", tools}, {"gpus", gpus}};
}

std::vector<std::string> missing_needs(const WorkerSettings& settings, const std::string& kind,
                                       const nlohmann::json& capabilities) {
  if (kind != "verify") return {};
  std::vector<std::string> offered;
  if (capabilities.contains("stages") && capabilities["stages"].is_array()) {
    for (const nlohmann::json& stage : capabilities["stages"])
      if (stage.is_string()) offered.push_back(stage.get<std::string>());
  }
  std::vector<std::string> missing;
  for (const std::string& need : settings.verify_needs) {
    if (std::find(offered.begin(), offered.end(), need) == offered.end()) missing.push_back(need);
  }
  return missing;
}

Result<Toolchains> toolchains_without(const Toolchains& toolchains, const std::vector<std::string>& names) {
  Toolchains masked = toolchains;
  for (const std::string& name : names) {
    if (name == "nvidia-gpu" || name == "amd-gpu") {
      std::string vendor = name.substr(0, name.find('-'));
      std::erase_if(masked.gpus, [&](const GpuInfo& gpu) { return gpu.vendor == vendor; });
      (vendor == "nvidia" ? masked.nvidia_gpu_note : masked.amd_gpu_note) = "hidden by --without " + name;
      continue;
    }
    auto tool = masked.tools.find(name);
    if (tool == masked.tools.end()) {
      std::string known = "nvidia-gpu, amd-gpu";
      for (const auto& [role, t] : masked.tools) known += ", " + role;
      return make_error("--without " + name + ": not a tool role or GPU (known: " + known + ")");
    }
    tool->second.path.clear();
    tool->second.version.clear();
    tool->second.version_line = "hidden by --without " + name;
  }
  return masked;
}

}  // namespace tailforge
