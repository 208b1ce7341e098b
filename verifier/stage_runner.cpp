#include "verifier/stage_runner.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <set>
#include <optional>
#include <sstream>
#include <thread>

#include "base/clock.h"
#include "base/files.h"
#include "base/process.h"
#include "base/sha256.h"
#include "verifier/compile_cache.h"
#include "verifier/sandbox.h"
#include "verifier/thread_stack.h"
#include "verifier/work_label.h"

namespace tailforge {
namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// Fills status/diagnostics from a finished child.
void describe_outcome(const ProcessResult& process, StageResult& stage) {
  stage.child_seconds = process.wall_seconds;
  stage.cpu_seconds = process.cpu_seconds;
  stage.peak_rss_kb = process.peak_rss_kb;
  stage.signal = process.signal;
  if (!process.spawned) {
    stage.status = "error";
    stage.reason = "could not start: " + process.spawn_error;
    return;
  }
  stage.exit_code = process.exit_code;
  stage.diagnostics = process.stderr_text;
  if (process.stderr_truncated) stage.diagnostics += "\n[stderr truncated]";
  if (process.timed_out) {
    stage.status = "timeout";
    stage.reason = "killed after the timeout";
  } else if (process.signal != 0) {
    stage.status = "fail";
    stage.reason = "killed by signal " + std::to_string(process.signal);
  } else if (process.exit_code != 0) {
    stage.status = "fail";
    stage.reason = "exit code " + std::to_string(process.exit_code);
  } else {
    stage.status = "ok";
  }
}

}  // namespace

const StageResult* StageContext::find(const std::string& name) const {
  for (const auto& stage : stages) {
    if (stage.name == name) return &stage;
  }
  return nullptr;
}

bool StageContext::ok(const std::string& name) const {
  const StageResult* stage = find(name);
  return stage && stage->ok();
}

std::vector<std::string> included_header_files(const std::vector<std::string>& args) {
  static const std::set<std::string> header_extensions = {".h", ".hh", ".hpp", ".hxx", ".cuh", ".inl", ".inc"};
  constexpr size_t kMaxHeaders = 4096;
  std::vector<std::string> dirs;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "-I" || args[i] == "-idirafter") && i + 1 < args.size()) dirs.push_back(args[++i]);
    else if (args[i].size() > 2 && args[i].compare(0, 2, "-I") == 0) dirs.push_back(args[i].substr(2));
  }
  std::set<std::string> headers;
  for (const std::string& dir : dirs) {
    std::error_code error;
    std::filesystem::recursive_directory_iterator it(dir, std::filesystem::directory_options::none, error), end;
    for (; !error && it != end && headers.size() < kMaxHeaders; it.increment(error)) {
      std::error_code ignored;
      if (!it->is_regular_file(ignored) || !header_extensions.count(it->path().extension().string())) continue;
      headers.insert(it->path().string());
    }
  }
  return {headers.begin(), headers.end()};
}

std::vector<std::string> include_flags(const std::vector<std::string>& dirs) {
  std::vector<std::string> flags;
  for (const std::string& dir : dirs) {
    flags.push_back("-I");
    flags.push_back(dir);
  }
  return flags;
}

Result<std::string> make_scratch_directory(const VerifierOptions& options, const std::string& prefix) {
  std::string root = options.scratch_root;
  if (root.empty()) root = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
  std::string pattern = root + "/" + prefix + "-XXXXXX";
  if (!mkdtemp(pattern.data())) return make_error("cannot create a scratch directory under " + root);
  chmod(pattern.c_str(), 0755);  // the sandbox user must reach its private directories
  return pattern;
}

void remove_scratch_directory(const VerifierOptions& options, const std::string& path) {
  if (options.keep_scratch) return;
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

std::string make_subdirectory(const StageContext& context, const std::string& name) {
  std::string path = context.scratch_dir + "/" + name;
  std::error_code ignored;
  std::filesystem::create_directories(path, ignored);
  chmod(path.c_str(), 0755);
  return path;
}

Result<std::string> place_program(const StageContext& context, const std::string& name, const std::string& executable) {
  std::string private_dir = make_subdirectory(context, name);
  std::string program = private_dir + "/program";
  std::error_code error;
  std::filesystem::copy_file(executable, program, std::filesystem::copy_options::overwrite_existing, error);
  if (error) return make_error("cannot copy " + executable + " into " + private_dir + ": " + error.message());
  chmod(program.c_str(), 0755);
  return program;
}

namespace {

// Runs one branch, turning an escaping exception into an error stage.
void run_branch(const Branch& branch, StageContext& context) {
  try {
    branch(context);
  } catch (const std::exception& error) {
    context.add(error_stage("chain", std::string("internal error: ") + error.what()));
  }
}

}  // namespace

void run_branches(StageContext& context, const std::vector<Branch>& branches) {
  if (branches.empty()) return;
  if (branches.size() == 1) return run_branch(branches.front(), context);
  std::vector<StageContext> copies(branches.size(), context);
  std::vector<std::thread> threads;
  for (size_t i = 0; i + 1 < branches.size(); ++i) {
    int64_t job_id = current_job_id();
    auto on_own_thread = [&, i, job_id] {
      // A crash on this thread is the job's crash: label it, and give it a stack to report from.
      JobLabel label(job_id);
      ensure_alternate_signal_stack();
      // SQLite connections are not shared between threads: a branch opens its own (":memory:"
      // would be another, empty cache, so such a branch runs uncached).
      std::optional<Database> cache;
      copies[i].cache_db = nullptr;
      if (context.cache_db && context.cache_db->path() != ":memory:" && !context.cache_db->path().empty()) {
        if (Result<Database> opened = Database::open(context.cache_db->path())) {
          cache.emplace(std::move(*opened));
          copies[i].cache_db = &*cache;
        }
      }
      run_branch(branches[i], copies[i]);
      cache.reset();
      release_unused_stack();  // glibc keeps this stack for the next thread, pages and all
    };
    try {
      threads.emplace_back(on_own_thread);
    } catch (const std::system_error&) {  // no thread to be had: run it here, in turn
      run_branch(branches[i], copies[i]);
    }
  }
  run_branch(branches.back(), copies.back());
  for (std::thread& thread : threads) thread.join();
  size_t before = context.stages.size();
  for (StageContext& copy : copies) {
    for (size_t i = before; i < copy.stages.size(); ++i) context.stages.push_back(std::move(copy.stages[i]));
  }
}

bool dependencies_ok(StageContext& context, const std::string& name,
                     const std::vector<std::string>& dependencies) {
  for (const auto& dependency : dependencies) {
    if (!context.ok(dependency)) {
      context.add(skipped_stage(name, "upstream: " + dependency));
      return false;
    }
  }
  return true;
}

bool stage_enabled_here(StageContext& context, const std::string& name) {
  if (stage_enabled(context.options, name)) return true;
  context.add(skipped_stage(name, kDisabledByStages));
  return false;
}

StageResult run_tool_stage(StageContext& context, const ToolStep& step) {
  if (!stage_enabled(context.options, step.stage_name)) {
    return skipped_stage(step.stage_name, kDisabledByStages);
  }
  set_current_stage_name(step.stage_name);
  auto start = std::chrono::steady_clock::now();
  const Tool& tool = context.toolchains.tool(step.tool_role);
  if (!tool.found()) return skipped_stage(step.stage_name, step.tool_role + " not found");

  std::vector<std::string> argv = {tool.path};
  argv.insert(argv.end(), step.args.begin(), step.args.end());
  std::string key;
  if (context.cache_db) {
    std::string inputs_hash;
    for (const auto& input : step.inputs) inputs_hash += sha256_hex(read_text_file_or_empty(input));
    for (const auto& header : included_header_files(step.args))
      inputs_hash += replace_all(header, context.scratch_dir, "<scratch>") + sha256_hex(read_text_file_or_empty(header));
    CompileKey compile_key{sha256_hex(inputs_hash), tool.path, tool.version_line, {}, step.target};
    for (const auto& arg : step.args) compile_key.flags.push_back(replace_all(arg, context.scratch_dir, "<scratch>"));
    compile_key.flags.insert(compile_key.flags.end(), step.key_extra.begin(), step.key_extra.end());
    key = compile_cache_key(compile_key);
    if (auto hit = compile_cache_get(*context.cache_db, key)) {
      for (size_t i = 0; i < step.outputs.size() && i < hit->artifacts.size(); ++i) {
        // A failed write shows as the next stage's missing input.
        (void)write_text_file(step.outputs[i].path, hit->artifacts[i].content);
      }
      hit->name = step.stage_name;
      hit->seconds = seconds_since(start);
      hit->child_seconds = 0;
      hit->cpu_seconds = 0;
      return std::move(*hit);
    }
  }

  StageResult stage;
  stage.name = step.stage_name;
  stage.toolchain_version = tool.name + " " + tool.version;
  stage.command = command_line(argv);
  ProcessSpec spec;
  spec.argv = argv;
  spec.cwd = context.scratch_dir;
  spec.timeout_seconds = context.options.compile_timeout_seconds;
  ProcessResult process;
  double waited = 0;
  {
    ResourceSlot slot(context.gate, ResourceKind::cpu);
    waited = slot.waited_seconds();
    process = run_process(spec);
  }
  describe_outcome(process, stage);
  if (stage.ok() && step.outputs_required) {
    for (const auto& output : step.outputs) {
      if (std::filesystem::exists(output.path)) continue;
      stage.status = "error";
      stage.reason = step.tool_role + " did not write " + output.path;
      break;
    }
  }
  if (stage.ok()) {
    for (const auto& output : step.outputs) {
      std::string name = std::filesystem::path(output.path).filename();
      stage.artifacts.push_back({output.kind, name, read_text_file_or_empty(output.path), stage.command,
                                 stage.toolchain_version, output.binary});
    }
    if (!step.stdout_kind.empty()) {
      stage.artifacts.push_back({step.stdout_kind, step.stdout_kind, process.stdout_text, stage.command,
                                 stage.toolchain_version, false});
    }
  }
  stage.seconds = seconds_since(start) - waited;
  if (context.cache_db && (stage.status == "ok" || stage.status == "fail")) {
    (void)compile_cache_put(*context.cache_db, key, stage);  // a failed store only costs a rerun
  }
  return stage;
}

namespace {

// Runs a copy of `executable`, placed in the private folder `folder`, with `settings` in its
// environment; the seconds include the copying.
StageResult run_program_copy(StageContext& context, const std::string& name, const std::string& folder,
                             const std::string& executable, bool gpu, const std::vector<std::string>& settings) {
  auto start = std::chrono::steady_clock::now();
  Result<std::string> program = place_program(context, folder, executable);
  if (!program) return skipped_stage(name, program.message());
  double preparing = seconds_since(start);
  std::string private_dir = std::filesystem::path(*program).parent_path();
  StageResult stage = run_untrusted_stage(context, name, with_environment(settings, {*program}), private_dir, gpu);
  stage.seconds += preparing;
  return stage;
}

}  // namespace

StageResult run_program_stage(StageContext& context, const std::string& name,
                              const std::string& executable, bool gpu) {
  return run_program_copy(context, name, "run-" + name, executable, gpu, {});
}

std::vector<std::string> cuda_single_queue_settings(const StageContext& context) {
  if (!context.options.cuda_single_queue_first) return {};
  return {kCudaSingleQueue};
}

std::vector<std::string> with_environment(const std::vector<std::string>& settings, std::vector<std::string> argv) {
  if (settings.empty()) return argv;
  std::vector<std::string> command = {"/usr/bin/env"};
  command.insert(command.end(), settings.begin(), settings.end());
  command.insert(command.end(), argv.begin(), argv.end());
  return command;
}

StageResult run_cuda_program_stage(StageContext& context, const std::string& name, const std::string& executable) {
  std::vector<std::string> settings = cuda_single_queue_settings(context);
  if (settings.empty()) return run_program_stage(context, name, executable, true);
  StageResult single = run_program_copy(context, name, "run-" + name + "-single-queue", executable, true, settings);
  if (single.ok() || single.status == "skipped") return single;

  StageResult plain = run_program_stage(context, name, executable, true);
  std::ostringstream first;
  first << "a first run with " << kCudaSingleQueue << " did not pass (" << single.status
        << (single.reason.empty() ? "" : ": " + single.reason) << ", " << std::fixed << std::setprecision(2)
        << single.seconds << " s, counted in this stage's seconds); this run without it is the verdict\n";
  plain.diagnostics = first.str() + plain.diagnostics;
  plain.seconds += single.seconds;
  plain.child_seconds += single.child_seconds;
  plain.cpu_seconds += single.cpu_seconds;
  plain.peak_rss_kb = std::max(plain.peak_rss_kb, single.peak_rss_kb);
  return plain;
}

StageResult run_untrusted_stage(StageContext& context, const std::string& name, const std::vector<std::string>& argv,
                                const std::string& private_dir, bool gpu, const std::vector<std::string>& read_only_paths,
                                double timeout_seconds) {
  set_current_stage_name(name);
  auto start = std::chrono::steady_clock::now();
  SandboxOutcome outcome;
  double waited = 0;
  {
    ResourceSlot slot(context.gate, gpu ? ResourceKind::gpu : ResourceKind::cpu);
    waited = slot.waited_seconds();
    outcome = run_sandboxed(context.options.sandbox, {argv, private_dir, gpu, timeout_seconds, "", read_only_paths});
  }
  if (!outcome.executed) return skipped_stage(name, outcome.skip_reason);
  StageResult stage;
  stage.name = name;
  stage.command = outcome.command;
  describe_outcome(outcome.process, stage);
  if (outcome.process.stdout_truncated && stage.status != "timeout") {
    // A cut output compared with a reference would fail or pass by accident: it is a failure.
    stage.status = "fail";
    stage.reason = "stdout over the sandbox's output cap of " + std::to_string(context.options.sandbox.output_cap_bytes) +
                   " bytes (sandbox.output_cap_bytes)";
    stage.diagnostics = stage.reason + "\n" + stage.diagnostics;
  }
  if (outcome.oom_killed) {
    stage.status = "fail";
    stage.reason = "killed at the sandbox's memory cap of " +
                   std::to_string(context.options.sandbox.gpu_memory_cap_bytes >> 20) + " MB (sandbox.gpu_memory_cap_bytes)";
    stage.diagnostics = stage.reason + "\n" + stage.diagnostics;
  }
  stage.artifacts.push_back({"stdout", name + ".stdout", outcome.process.stdout_text, stage.command, "", false});
  stage.seconds = seconds_since(start) - waited;
  return stage;
}

}  // namespace tailforge
