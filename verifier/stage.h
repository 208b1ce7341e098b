// The result of one verifier stage (a compile, an assemble, a run, a comparison) and the
// artifacts it produced, plus the resource gate a scheduler uses to bound concurrent stages.
// It runs nothing itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"

namespace tailforge {

struct Artifact {
  std::string kind;        // "ptx", "ptx_kernel", "cubin", "sass", "sass_kernel", "host_asm",
                           // "rdna3_asm", "code_object", "x86_asm", "stdout", "hip", ...
  std::string name;        // a file name or kernel name
  std::string content;     // text, or raw bytes when binary
  std::string command;
  std::string toolchain_version;
  bool binary = false;
};

struct StageResult {
  std::string name;                    // dotted and stable: "nvidia.cubin.sm_80"
  std::string status = "skipped";      // ok / fail / timeout / skipped / error
  double seconds = 0;                  // the stage's own time, not the time it waited for a slot
  std::string reason;                  // why skipped / failed, one line
  std::string diagnostics;             // the tool's messages, verbatim
  std::optional<std::string> category; // filled by the failure taxonomy, not here
  std::optional<int> exit_code;
  int signal = 0;
  int64_t peak_rss_kb = 0;
  bool cached = false;
  std::string toolchain_version;
  std::string command;
  std::vector<Artifact> artifacts;
  double child_seconds = 0;            // wall time spent in child processes
  double cpu_seconds = 0;              // user + system CPU of those processes (0 from the compile cache)

  bool ok() const { return status == "ok"; }
  const Artifact* artifact(const std::string& kind) const;
};

StageResult skipped_stage(const std::string& name, const std::string& reason);
// A stage that could not be carried out for a reason of the verifier's own (a file it could not
// write): status "error", not the program's failure.
StageResult error_stage(const std::string& name, const std::string& reason);

enum class ResourceKind { cpu, gpu, llm };

// Bounds concurrent child processes. The daemon implements it; the default admits everything.
// acquire() blocks until a slot of that kind is free; release() returns it.
class ResourceGate {
 public:
  virtual ~ResourceGate() = default;
  virtual void acquire(ResourceKind) {}
  virtual void release(ResourceKind) {}
};

// Holds one slot for a scope, and says how long it waited for it.
class ResourceSlot {
 public:
  ResourceSlot(ResourceGate* gate, ResourceKind kind) : gate_(gate), kind_(kind) {
    if (!gate_) return;
    auto start = std::chrono::steady_clock::now();
    gate_->acquire(kind_);
    waited_seconds_ = seconds_since(start);
  }
  ~ResourceSlot() { if (gate_) gate_->release(kind_); }
  ResourceSlot(const ResourceSlot&) = delete;
  ResourceSlot& operator=(const ResourceSlot&) = delete;

  double waited_seconds() const { return waited_seconds_; }

 private:
  ResourceGate* gate_;
  ResourceKind kind_;
  double waited_seconds_ = 0;
};

}  // namespace tailforge
