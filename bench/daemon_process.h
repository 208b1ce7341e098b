// Shared by the benches that drive a real `tailforge daemon`: starting it with its output in a
// log file, and finding the tailforge binary next to the bench's build folder.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

extern char** environ;

namespace tailforge {

// The tailforge binary of the build tree this bench was built in.
inline std::string default_tailforge_binary() {
  return (std::filesystem::canonical("/proc/self/exe").parent_path().parent_path() / "tailforge").string();
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

}  // namespace tailforge
