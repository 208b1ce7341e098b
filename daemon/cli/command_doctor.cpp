// `tailforge doctor`: before a weekend run, checks what the daemon will need (the configuration,
// the toolchains of the configured track, the sandbox and the GPU device nodes inside it, disk
// space, the database's integrity and WAL size, the projected disk use per day), says what the
// next retrain trigger will run for which model, and says what is wrong and how to fix it. The exit
// status is 0 when the daemon can do its track's work here, 1 when it cannot.

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "base/files.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "store/corpus.h"
#include "store/database.h"
#include "store/growth.h"
#include "store/maintenance.h"
#include "synth/policy.h"
#include "synth/retrain.h"
#include "synth/snapshot_retention.h"
#include "synth/tracks.h"
#include "verifier/memory_cgroup.h"
#include "verifier/nvidia.h"
#include "verifier/options.h"
#include "verifier/sandbox.h"
#include "verifier/stage_runner.h"
#include "verifier/toolchains.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Check {
  std::string name;
  std::string level;  // ok, warn (some stages are skipped), fail (the track's work cannot be done)
  std::string detail;
  std::string fix;
};

void check_tool(std::vector<Check>& checks, const Toolchains& toolchains, const std::string& role, bool required,
                const std::string& needed_for, const std::string& fix) {
  const Tool& tool = toolchains.tool(role);
  if (tool.found()) {
    checks.push_back({role, "ok", tool.path + (tool.version.empty() ? "" : " (" + tool.version + ")"), ""});
  } else {
    checks.push_back({role, required ? "fail" : "warn", "not found: " + needed_for, fix});
  }
}

// Which architectures the programs that run are built for (the configured targets, this machine's
// GPU, the embedded PTX), which GPU was found, and whether what is built here can run on it.
void check_gpu_targets(std::vector<Check>& checks, const VerifierOptions& verifier, const Toolchains& toolchains) {
  if (!toolchains.tool("nvcc").found()) return;
  std::vector<std::string> targets = executable_sm_targets(verifier.sm_targets, toolchains);
  std::string built;
  for (const std::string& target : targets) built += (built.empty() ? "" : ", ") + target;
  std::vector<std::string> flags = executable_gencode_flags(verifier.sm_targets, toolchains);
  const std::string& ptx = flags.empty() ? std::string() : flags.back();
  if (size_t code = ptx.find("code=compute_"); code != std::string::npos) built += " + PTX " + ptx.substr(code + 5);
  std::string found;
  for (const GpuInfo& gpu : toolchains.gpus) {
    if (gpu.vendor != "nvidia") continue;
    found += (found.empty() ? "" : ", ") + (gpu.arch.empty() ? "architecture unknown" : gpu.arch);
    if (std::string why = unbuildable_gpu_reason(gpu, toolchains); !why.empty()) {
      checks.push_back({"gpu targets", "warn", "programs are built for " + built + ", but " + why +
                                                   ": its run stages are skipped",
                        "install a CUDA toolkit whose nvcc lists " + gpu.arch + " in `nvcc --list-gpu-code`"});
      return;
    }
  }
  checks.push_back({"gpu targets", "ok", "programs are built for " + built + " (verifier.sm_targets" +
                                             (targets.size() > verifier.sm_targets.size() ? " and this GPU" : "") +
                                             "); GPU found: " + (found.empty() ? "none" : found), ""});
}

// Runs `script` with /bin/sh in the sandbox; "" when it exited 0, else what happened.
std::string sandboxed_shell(const VerifierOptions& verifier, const std::string& script, bool gpu) {
  Result<std::string> private_dir = make_scratch_directory(verifier, "tailforge-doctor");
  if (!private_dir) return private_dir.message();
  SandboxRun run;
  run.argv = {"/bin/sh", "-c", script};
  run.private_dir = *private_dir;
  run.gpu = gpu;
  run.timeout_seconds = 20;
  SandboxOutcome outcome = run_sandboxed(verifier.sandbox, run);
  std::error_code ignored;
  fs::remove_all(*private_dir, ignored);
  if (!outcome.executed) return outcome.skip_reason;
  if (outcome.process.exit_code != 0) {
    return "exit code " + std::to_string(outcome.process.exit_code) + ": " + outcome.process.stderr_text;
  }
  return "";
}

void check_sandbox(std::vector<Check>& checks, const VerifierOptions& verifier, const Toolchains& toolchains) {
  const SandboxOptions& sandbox = verifier.sandbox;
  if (sandbox.mode != "bwrap") {
    checks.push_back({"sandbox", "warn", "mode " + sandbox.mode + ": untrusted programs run without namespaces",
                      "install bubblewrap and set sandbox.mode to \"bwrap\""});
  } else if (Status usable = sandbox_self_test(sandbox); !usable) {
    checks.push_back({"sandbox", "fail", usable.message(),
                      "install bubblewrap (apt install bubblewrap) or set sandbox.bwrap to its path; in a container, "
                      "allow user namespaces or run as root"});
    return;
  } else if (std::string problem = sandboxed_shell(verifier, "echo ok > probe && test -s probe", false);
             !problem.empty()) {
    checks.push_back({"sandbox", "fail", "a program cannot run in its private directory: " + problem,
                      "check sandbox.run_as_uid/run_as_gid and that the temporary folder is not mounted noexec"});
    return;
  } else {
    checks.push_back({"sandbox", "ok", sandbox.bwrap_path + ": a program ran as uid " + std::to_string(sandbox.run_as_uid) +
                                           " in its private directory", ""});
  }
  if (!toolchains.has_gpu("nvidia")) {
    checks.push_back({"gpu", "warn", "no NVIDIA GPU: " + toolchains.nvidia_gpu_note + "; run and compare stages are skipped",
                      "run on a host with an NVIDIA GPU and its driver for execution checks"});
    return;
  }
  std::string names;
  for (const GpuInfo& gpu : toolchains.gpus) {
    names += (names.empty() ? "" : ", ") + gpu.vendor + " " + gpu.name + (gpu.arch.empty() ? "" : " [" + gpu.arch + "]");
  }
  std::string inside = sandboxed_shell(verifier, "test -c /dev/nvidiactl && ls /dev/nvidia[0-9]* > /dev/null", true);
  if (inside.empty()) {
    checks.push_back({"gpu", "ok", names + "; /dev/nvidia* reachable inside the sandbox", ""});
  } else {
    checks.push_back({"gpu", "fail", names + ", but /dev/nvidia* is not reachable inside the sandbox: " + inside,
                      "check that /dev/nvidiactl and /dev/nvidia0 exist and are readable by sandbox.run_as_uid"});
  }
  const int64_t cap_mb = sandbox.gpu_memory_cap_bytes >> 20;
  if (cap_mb <= 0) {
    checks.push_back({"memory cap", "warn", "sandbox.gpu_memory_cap_bytes is 0: GPU programs may use all host memory",
                      "set sandbox.gpu_memory_cap_bytes"});
  } else if (const std::string& why = memory_cgroups_unavailable(); !why.empty()) {
    checks.push_back({"memory cap", "warn", "GPU programs' host memory is not capped: " + why,
                      "run the daemon as the service install-service writes (Delegate=yes), or as root where cgroup v1's "
                      "memory hierarchy is mounted"});
  } else {
    checks.push_back({"memory cap", "ok", "each GPU program runs in a memory cgroup capped at " + std::to_string(cap_mb) +
                                              " MB", ""});
  }
}

std::string one_decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// The disk use per day at the current rate: what the store recorded over the last 24 h (or since
// its first row, when younger) plus the snapshots of that time's retrain events, scaled to a day.
void check_growth(std::vector<Check>& checks, Database& db, int64_t free_mb, int64_t min_free_mb) {
  const int64_t day_ms = 24 * 3600 * 1000, now = now_ms();
  Result<StoreGrowth> growth = store_growth_since(db, now - day_ms);
  Result<std::vector<RetrainEventRecord>> events = list_retrain_events(db, 1000);
  if (!growth || !events) {
    checks.push_back({"disk growth", "warn", !growth ? growth.message() : events.message(), ""});
    return;
  }
  int64_t snapshots = 0, snapshot_bytes = 0, first_ms = growth->first_ms;
  for (const RetrainEventRecord& event : *events) {
    if (event.created_ms < now - day_ms || !event.snapshot_dir) continue;
    ++snapshots;
    snapshot_bytes += folder_bytes(*event.snapshot_dir);
    if (first_ms == 0 || event.created_ms < first_ms) first_ms = event.created_ms;
  }
  const int64_t span_ms = first_ms == 0 ? day_ms : std::clamp<int64_t>(now - first_ms, 60 * 1000, day_ms);
  const double bytes = static_cast<double>(growth->bytes() + snapshot_bytes);
  const double per_day_mb = bytes / 1048576.0 * static_cast<double>(day_ms) / static_cast<double>(span_ms);
  std::string detail = "projected disk use: " + one_decimal(per_day_mb) + " MB/day at the current rate (" +
                       one_decimal(bytes / 1048576.0) + " MB recorded in the last " +
                       one_decimal(static_cast<double>(span_ms) / 3600000.0) + " h, scaled to 24 h: " +
                       std::to_string(growth->samples) + " samples, " + std::to_string(growth->artifacts) +
                       " artifacts and " + std::to_string(growth->cache_entries) +
                       " cache entries by their created_ms, plus " + std::to_string(snapshots) +
                       " retrain snapshots on disk; before caps and retention, which tailforge gc lists)";
  if (per_day_mb > 0 && free_mb > min_free_mb) {
    detail += "; the " + std::to_string(free_mb - min_free_mb) + " MB free above daemon.min_free_disk_mb last " +
              one_decimal(static_cast<double>(free_mb - min_free_mb) / per_day_mb) + " days at this rate";
  }
  checks.push_back({"disk growth", "ok", detail, ""});
}

void check_store(std::vector<Check>& checks, const std::string& db_path, int64_t min_free_mb) {
  fs::path folder = fs::absolute(db_path).parent_path();
  std::error_code ec;
  fs::space_info space = fs::space(folder, ec);
  int64_t free_mb = ec ? 0 : static_cast<int64_t>(space.available / (1024 * 1024));
  if (ec) {
    checks.push_back({"disk", "fail", "cannot read the free space of " + folder.string() + ": " + ec.message(), ""});
  } else {
    bool low = free_mb < min_free_mb;
    checks.push_back({"disk", low ? "fail" : "ok",
                      std::to_string(free_mb) + " MB free in " + folder.string() + " (generation pauses below " +
                          std::to_string(min_free_mb) + " MB)",
                      low ? "free space there, or lower daemon.min_free_disk_mb" : ""});
  }
  if (!fs::exists(db_path)) {
    checks.push_back({"database", "ok", db_path + " does not exist yet: the daemon creates it", ""});
    return;
  }
  Result<Database> db = Database::open(db_path);
  if (!db) {
    checks.push_back({"database", "fail", db.message(), "restore it from a backup (tailforge backup makes one)"});
    return;
  }
  Result<std::vector<std::string>> problems = integrity_problems(*db);
  std::string verdict = !problems ? problems.message() : problems->empty() ? "ok" : problems->front();
  int64_t wal_mb = static_cast<int64_t>(fs::file_size(db_path + "-wal", ec) / (1024 * 1024));
  if (ec) wal_mb = 0;
  if (verdict != "ok") {
    checks.push_back({"database", "fail", db_path + ": integrity check: " + verdict,
                      "restore it from a backup (tailforge backup makes one)"});
  } else {
    checks.push_back({"database", wal_mb > 1024 ? "warn" : "ok",
                      db_path + ": integrity ok, schema v" + std::to_string(db->schema_version()) + ", WAL " +
                          std::to_string(wal_mb) + " MB",
                      wal_mb > 1024 ? "a long-running reader keeps the WAL from being checkpointed: stop it" : ""});
    check_growth(checks, *db, free_mb, min_free_mb);
  }
}

// What the next retrain trigger will do: which command (or none, and why) or webhook, for which
// model. A trigger that would train nothing is a warning.
void check_retrain(std::vector<Check>& checks, const json& config, const SynthPolicy& synth,
                   const std::string& db_path) {
  Result<RetrainPolicy> policy = retrain_policy_from_json(config["retrain"], synth);
  if (!policy) {
    checks.push_back({"retrain", "fail", policy.message(), "fix the key named"});
    return;
  }
  std::optional<Database> db;
  if (fs::exists(db_path)) {
    Result<Database> opened = Database::open(db_path);
    if (!opened) return;  // check_store reported it
    db.emplace(std::move(*opened));
  }
  Result<RetrainPlan> plan = next_retrain_plan(db ? &*db : nullptr, *policy);
  if (!plan) {
    checks.push_back({"retrain", "warn", plan.message(), ""});
    return;
  }
  std::string detail = describe_retrain_plan(*plan);
  if (plan->enabled && plan->expanded_argv.empty() && plan->webhook.empty()) {
    checks.push_back({"retrain", "warn", detail,
                      "set retrain.command to your trainer (it gets the snapshot in $TAILFORGE_SNAPSHOT_DIR and "
                      "registers its version with tailforge model add --parent \"$TAILFORGE_PARENT_MODEL\" "
                      "--retrain-event \"$TAILFORGE_RETRAIN_EVENT\"), or retrain.webhook"});
    return;
  }
  bool unregistered = synth.model_under_test && !plan->under_test.model;
  checks.push_back({"retrain", unregistered ? "warn" : "ok", detail,
                    unregistered ? "register the model synth.model_under_test names, or change the name" : ""});
}

}  // namespace

int command_doctor(const CommandLine& args) {
  std::vector<Check> checks;
  Result<CommandContext> context = make_context(args);
  if (!context) {
    checks.push_back({"config", "fail", context.message(), "fix the file and key named"});
  } else {
    checks.push_back({"config", "ok", args.get("--config", "defaults (config/default.json)"), ""});
  }
  json config = context ? context->config : json::object();
  Result<VerifierOptions> verifier = verifier_options_from_json(config);
  Result<SynthPolicy> policy = context ? synth_policy_from_config(config["synth"], data_dir())
                                       : Result<SynthPolicy>(make_error("no configuration"));
  std::string track = policy ? policy->track : "cuda2hip";
  const Toolchains& toolchains = detected_toolchains();
  if (context && verifier) {
    if (const Track* grown = find_track(track)) {
      for (const ToolNeed& need : grown->tools) {
        check_tool(checks, toolchains, std::string(need.tool), need.required, std::string(need.needed_for),
                   std::string(need.fix));
      }
      if (grown->checks_gpu_targets) check_gpu_targets(checks, *verifier, toolchains);
    }
    check_sandbox(checks, *verifier, toolchains);
    check_store(checks, context->db_path, config["daemon"]["min_free_disk_mb"].get<int64_t>());
    if (policy) check_retrain(checks, config, *policy, context->db_path);
  }
  bool ready = std::none_of(checks.begin(), checks.end(), [](const Check& c) { return c.level == "fail"; });
  if (args.has("--json")) {
    json out = {{"track", track}, {"ready", ready}, {"checks", json::array()}};
    for (const Check& c : checks) {
      out["checks"].push_back({{"name", c.name}, {"level", c.level}, {"detail", c.detail}, {"fix", c.fix}});
    }
    std::cout << out.dump(2) << "\n";
  } else {
    for (const Check& c : checks) {
      std::cout << (c.level == "ok" ? "ok    " : c.level == "warn" ? "warn  " : "FAIL  ") << c.name << ": " << c.detail
                << "\n";
      if (!c.fix.empty()) std::cout << "      fix: " << c.fix << "\n";
    }
    std::cout << (ready ? "the daemon can run the " + track + " track here"
                        : "the daemon cannot run the " + track + " track here: fix the FAIL lines")
              << "\n";
  }
  return ready ? 0 : 1;
}

}  // namespace tailforge
