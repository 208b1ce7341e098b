// Scale-out policy shared by the daemon and `tailforge worker`: what a host can run (its
// capabilities: the verifier's stage families it can run, tool versions, GPUs), which job kinds a
// worker with given capabilities may lease (config "workers"), and hiding tools from a worker
// (--without) so that it offers, and runs, less than its host has.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "verifier/toolchains.h"

namespace tailforge {

// Job kinds a remote worker can run: the work that needs the host's toolchains and GPUs.
inline const std::set<std::string>& remote_job_kinds() {
  static const std::set<std::string> kinds = {"verify"};
  return kinds;
}

// Lease owners of remote workers start with this.
inline constexpr const char* kRemoteOwnerPrefix = "remote:";

struct WorkerSettings {
  bool local_verify = true;              // the daemon's own workers lease verify jobs
  std::vector<std::string> verify_needs;  // stage families a worker must run to lease a verify job
  int64_t lease_ms = 60000;              // a remote lease; the worker heartbeats every third of it
  int64_t max_artifact_bytes = 64 << 20;
  bool llm_translator = false;           // agents.translator "llm": verify jobs stay in the daemon
};

// Reads config "workers"; errors name the key.
Result<WorkerSettings> worker_settings(const nlohmann::json& config);

// {"stages": [families that can run], "unavailable": {family: why}, "tools": {role: version},
//  "gpus": [{"vendor","name"}]}
nlohmann::json host_capabilities(const Toolchains& toolchains, const std::string& sandbox_mode);

// What `capabilities` lacks of what a kind needs (empty: it may lease the kind).
std::vector<std::string> missing_needs(const WorkerSettings& settings, const std::string& kind,
                                       const nlohmann::json& capabilities);

// A copy of `toolchains` without the named tool roles (nvcc, hipcc, llvm_mc, ...) or GPUs
// ("nvidia-gpu", "amd-gpu"). Unknown names are an error listing the known ones.
Result<Toolchains> toolchains_without(const Toolchains& toolchains, const std::vector<std::string>& names);

}  // namespace tailforge
