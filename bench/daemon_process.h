// Shared by the benches that drive a real `tailforge daemon`: reading their command-line flags,
// starting the daemon with its output in a log file, and finding the tailforge binary next to
// the bench's build folder.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

extern char** environ;

namespace tailforge {

// A bench's `--name value` flag and what its value sets.
struct ValueFlag {
  std::string name;
  std::function<void(const std::string& value)> set;
};

// Reads a bench's command line left to right: `--keep` sets `keep`, and each `--name value`
// calls that flag's `set` with the value. False on a usage error: an unknown flag, or a flag
// without a value after it.
inline bool parse_bench_flags(int argc, char** argv, const std::vector<ValueFlag>& flags, bool& keep) {
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--keep") {
      keep = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    std::string value = argv[++i];
    auto known = std::find_if(flags.begin(), flags.end(), [&](const ValueFlag& f) { return f.name == flag; });
    if (known == flags.end()) return false;
    known->set(value);
  }
  return true;
}

// The tailforge binary of the build tree this bench was built in.
inline std::string default_tailforge_binary() {
  return (std::filesystem::canonical("/proc/self/exe").parent_path().parent_path() / "tailforge").string();
}

// Checks that the tailforge binary exists, then creates `dir` and makes it the working folder, so
// relative paths of the configuration (snapshots, work dir) land in it. False, with a message,
// when the binary is missing.
inline bool enter_run_dir(const std::filesystem::path& dir, const std::string& tailforge) {
  if (!std::filesystem::exists(tailforge)) {
    std::fprintf(stderr, "no tailforge binary at %s (pass --tailforge PATH)\n", tailforge.c_str());
    return false;
  }
  std::filesystem::create_directories(dir);
  std::filesystem::current_path(dir);
  return true;
}

// The end of a run made in enter_run_dir: removes `dir`, or with --keep says where it is.
inline void leave_run_dir(const std::filesystem::path& dir, bool keep) {
  if (keep) {
    std::printf("kept %s\n", dir.c_str());
    return;
  }
  std::error_code ignored;
  std::filesystem::current_path("/", ignored);
  std::filesystem::remove_all(dir, ignored);
}

// Starts args[0] with stdin from /dev/null and stdout + stderr into log_path; -1 on failure.
inline pid_t spawn_daemon(const std::vector<std::string>& args, const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return error == 0 ? pid : -1;
}

// Runs a bounded `tailforge daemon` (args as for spawn_daemon) to its end; the exit status
// (128 + signal when killed; -1 when it could not start) and the wall time.
struct FinishedRun {
  int status = -1;
  double seconds = 0;
};
inline FinishedRun run_daemon_to_end(const std::vector<std::string>& args, const std::string& log_path) {
  FinishedRun run;
  auto started = std::chrono::steady_clock::now();
  pid_t pid = spawn_daemon(args, log_path);
  if (pid < 0) return run;
  int status = 0;
  waitpid(pid, &status, 0);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

}  // namespace tailforge
