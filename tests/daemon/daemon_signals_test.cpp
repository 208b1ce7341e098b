// Unattended operation: SIGHUP reloads the configuration (a broken file is refused and the old
// one kept), SIGTERM drains and exits cleanly, and a restart resumes the interrupted cycle.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_support/temp_dir.h"

extern char** environ;

using namespace tailforge;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Polls the daemon's log until it holds `needle` or `seconds` pass.
bool wait_for_log(const std::string& log, const std::string& needle, double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_all(log).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

pid_t spawn_daemon(const std::string& db, const std::string& config, const std::string& log) {
  std::vector<std::string> argv = {TAILFORGE_BINARY, "daemon", "--db", db, "--config", config, "--no-progress"};
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  return pid;
}

}  // namespace

TEST_CASE("SIGHUP reloads the configuration, SIGTERM drains, and a restart resumes the cycle") {
  TempDir dir;
  std::string config = dir.file("daemon.json");
  std::string db = dir.file("signals.db");
  std::string log = dir.file("daemon.log");
  const char* small = R"({"daemon": {"samples_per_cycle": 4, "drain_grace_seconds": 20},
                          "verifier": {"stages": ["translate", "amd.assemble"]}})";
  std::ofstream(config) << small;
  pid_t pid = spawn_daemon(db, config, log);
  REQUIRE(wait_for_log(log, "cycle 1 started", 30));

  std::ofstream(config) << "{\"daemon\": {\"samples_per_cycle\": \"many\"}}";
  REQUIRE(kill(pid, SIGHUP) == 0);
  CHECK(wait_for_log(log, "SIGHUP: configuration not reloaded: " + config + ": key /daemon/samples_per_cycle", 10));
  std::ofstream(config) << small;
  REQUIRE(kill(pid, SIGHUP) == 0);
  CHECK(wait_for_log(log, "SIGHUP: configuration reloaded from " + config, 10));

  REQUIRE(kill(pid, SIGTERM) == 0);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::string text = read_all(log);
  CHECK(text.find("draining (SIGTERM)") != std::string::npos);
  CHECK(text.find("daemon stopped") != std::string::npos);

  pid = spawn_daemon(db, config, log);
  bool resumed = wait_for_log(log, "cycle 1 resumed", 30) || wait_for_log(log, "cycle 2 started", 1);
  CHECK(resumed);
  kill(pid, SIGTERM);
  waitpid(pid, &status, 0);
  CHECK(WEXITSTATUS(status) == 0);
}
