// Starting a process in the background for a test that kills it or starts several at once:
// stdout to /dev/null, stderr to `stderr_path` (empty: the test's own stderr). A spawn that fails
// fails the test. The caller waits for the pid. `extra_env` ("NAME=value") is added to this
// process's environment.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <spawn.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace tailforge {

inline pid_t spawn_in_background(const std::vector<std::string>& argv, const std::string& stderr_path = "",
                                 const std::vector<std::string>& extra_env = {}) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  if (!stderr_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  std::vector<char*> env;
  for (char** entry = environ; *entry; ++entry) env.push_back(*entry);
  for (const std::string& entry : extra_env) env.push_back(const_cast<char*>(entry.c_str()));
  env.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), env.data());
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(rc == 0, "cannot start " << argv[0]);
  return pid;
}

}  // namespace tailforge
