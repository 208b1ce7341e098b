#include "base/process.h"

#include <doctest/doctest.h>
#include <signal.h>

#include <filesystem>

#include <thread>
#include <vector>

using namespace tailforge;

TEST_CASE("a child's exit code and stdout are captured") {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"};
  ProcessResult result = run_process(spec);
  CHECK(result.spawned);
  CHECK(result.exit_code == 3);
  CHECK(result.stdout_text == "out\n");
  CHECK(result.stderr_text == "err\n");
  CHECK_FALSE(result.timed_out);
}

TEST_CASE("a missing program is a spawn error, not an exception") {
  ProcessSpec spec;
  spec.argv = {"/nonexistent/tool-xyz"};
  ProcessResult result = run_process(spec);
  CHECK_FALSE(result.spawned);
  CHECK(result.spawn_error.find("No such file") != std::string::npos);
}

TEST_CASE("a hanging child and its whole process group are killed at the timeout") {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "sleep 30 & sleep 30; echo never"};
  spec.timeout_seconds = 0.3;
  spec.kill_grace_seconds = 0.1;
  ProcessResult result = run_process(spec);
  CHECK(result.timed_out);
  CHECK(result.wall_seconds < 3.0);
  CHECK(result.stdout_text.empty());
}

TEST_CASE("large output on both streams does not deadlock and is capped") {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2"};
  spec.output_cap_bytes = 1000000;
  ProcessResult result = run_process(spec);
  CHECK(result.exit_code == 0);
  CHECK(result.stdout_text.size() == 1000000);
  CHECK(result.stdout_truncated);
  CHECK(result.stderr_truncated);
}

TEST_CASE("stdin is fed and only allowlisted environment variables pass") {
  setenv("TAILFORGE_SECRET_TEST", "hidden", 1);
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "cat; echo \"[$TAILFORGE_SECRET_TEST][$EXTRA]\""};
  spec.stdin_text = "hello ";
  spec.extra_env = {{"EXTRA", "yes"}};
  ProcessResult result = run_process(spec);
  CHECK(result.stdout_text == "hello [][yes]\n");
}

TEST_CASE("peak memory and cpu time are reported") {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"};
  ProcessResult result = run_process(spec);
  CHECK(result.exit_code == 0);
  CHECK(result.peak_rss_kb > 0);
  CHECK(result.cpu_seconds > 0.0);
}

TEST_CASE("several threads can run children at once") {
  std::vector<std::thread> threads;
  std::vector<std::string> outputs(6);
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([i, &outputs] {
      ProcessSpec spec;
      spec.argv = {"sh", "-c", "echo " + std::to_string(i)};
      outputs[static_cast<size_t>(i)] = run_process(spec).stdout_text;
    });
  }
  for (auto& thread : threads) thread.join();
  for (int i = 0; i < 6; ++i) CHECK(outputs[static_cast<size_t>(i)] == std::to_string(i) + "\n");
}

TEST_CASE("a child's orphans are reaped before run_process returns, even those that left its process group") {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "setsid sleep 0.5 & echo $!; sleep 0.1"};
  spec.timeout_seconds = 10;
  ProcessResult result = run_process(spec);
  REQUIRE(result.exit_code == 0);
  std::string orphan = result.stdout_text.substr(0, result.stdout_text.find('\n'));
  REQUIRE_FALSE(orphan.empty());
  // Not alive, and not a zombie waiting for the host's init to reap it: gone.
  CHECK_FALSE(std::filesystem::exists("/proc/" + orphan));
  CHECK(result.wall_seconds >= 0.45);
}

TEST_CASE("a timeout's SIGTERM reaches the child's group only, never the caller's handlers") {
  static volatile sig_atomic_t caller_got_term = 0;
  struct sigaction action {}, previous{};
  action.sa_handler = [](int) { caller_got_term = 1; };
  sigaction(SIGTERM, &action, &previous);
  ProcessSpec spec;
  spec.argv = {"sleep", "10"};
  spec.timeout_seconds = 0.2;
  ProcessResult result = run_process(spec);
  sigaction(SIGTERM, &previous, nullptr);
  CHECK(result.timed_out);
  CHECK(result.signal == SIGTERM);
  CHECK(caller_got_term == 0);
}

TEST_CASE("a child starts with every signal at its default, whatever the caller and the keeper ignore") {
  struct sigaction ignore {}, previous{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGUSR2, &ignore, &previous);
  for (const char* name : {"USR1", "USR2", "PIPE", "HUP"}) {
    CAPTURE(name);
    ProcessSpec spec;
    // A shell cannot take back a signal ignored when it started: it would live and say so.
    spec.argv = {"sh", "-c", std::string("kill -") + name + " $$; echo alive"};
    spec.timeout_seconds = 10;
    ProcessResult result = run_process(spec);
    CHECK(result.signal != 0);
    CHECK(result.stdout_text.find("alive") == std::string::npos);
  }
  sigaction(SIGUSR2, &previous, nullptr);
}
