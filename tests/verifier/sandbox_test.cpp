#include "verifier/sandbox.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/files.h"
#include "policies/categorizer.h"
#include "test_support/skip.h"
#include "test_support/tools_here.h"
#include "verifier/memory_cgroup.h"
#include "verifier/stage_runner.h"
#include "verifier/toolchains.h"

using namespace tailforge;

namespace {

struct TestDir {
  std::string path;
  TestDir() {
    char pattern[] = "/tmp/tf-sandbox-test-XXXXXX";
    path = mkdtemp(pattern);
    chmod(path.c_str(), 0755);
  }
  ~TestDir() { std::filesystem::remove_all(path); }
};

// Compiles a tiny C program with gcc into dir/name; returns its path ("" on failure).
std::string build_program(const TestDir& dir, const std::string& name, const std::string& source) {
  std::string source_path = dir.path + "/" + name + ".c";
  std::ofstream(source_path) << source;
  ProcessSpec spec;
  spec.argv = {"gcc", "-O0", "-o", dir.path + "/" + name, source_path};
  spec.timeout_seconds = 60;
  ProcessResult result = run_process(spec);
  REQUIRE_MESSAGE(result.exit_code == 0, result.stderr_text);
  return dir.path + "/" + name;
}

SandboxOptions test_options() {
  SandboxOptions options;
  options.timeout_seconds = 2;
  options.limits.max_processes = 32;
  options.limits.address_space_bytes = int64_t{1} << 30;
  return options;
}

bool bwrap_usable() { return testing::sandbox_here(test_options()); }

}  // namespace

TEST_CASE("an endless loop is killed at its timeout") {
  if (!bwrap_usable()) return;
  TestDir dir;
  std::string program = build_program(dir, "loop", "int main(void){ volatile int x = 0; for(;;) ++x; }");
  SandboxOptions options = test_options();
  SandboxOutcome outcome = run_sandboxed(options, {{program}, dir.path, false, 0.5, ""});
  CHECK(outcome.executed);
  CHECK(outcome.process.timed_out);
  CHECK(outcome.process.wall_seconds < 5);
}

TEST_CASE("a sandboxed program's CPU seconds are counted, though bwrap leaves its init to be reaped by others") {
  if (!bwrap_usable()) return;
  TestDir dir;
  // About half a second of CPU, then a normal exit.
  std::string program = build_program(dir, "spin", R"(#include <time.h>
int main(void) {
  volatile unsigned long x = 0;
  while (clock() < CLOCKS_PER_SEC / 2) ++x;
  return 0;
})");
  SandboxOutcome outcome = run_sandboxed(test_options(), {{program}, dir.path, false, 10, ""});
  REQUIRE(outcome.executed);
  CHECK(outcome.process.exit_code == 0);
  CHECK(outcome.process.cpu_seconds >= 0.45);
  CHECK(outcome.process.cpu_seconds <= outcome.process.wall_seconds + 0.2);
}

TEST_CASE("a program killed by a signal inside bwrap is categorized as the signal, not as bwrap's exit code") {
  if (!bwrap_usable()) return;
  TestDir dir;
  std::string program = build_program(dir, "crash", "#include <signal.h>\nint main(void){ raise(SIGSEGV); return 0; }");
  SandboxOptions options = test_options();
  SandboxOutcome outcome = run_sandboxed(options, {{program}, dir.path, false, 5, ""});
  REQUIRE(outcome.executed);
  CHECK(outcome.process.signal == SIGSEGV);
  VerifierOptions verifier;
  verifier.sandbox = test_options();
  StageContext context{verifier, detected_toolchains(), nullptr, nullptr, dir.path, {}};
  std::string private_dir = make_subdirectory(context, "run");
  Taxonomy taxonomy = load_taxonomy(data_path("policies/taxonomy.json")).value();
  for (auto [name, stage] : {std::pair{"sigsegv", "nvidia.run"}, std::pair{"sigabrt", "amd.run"}}) {
    std::string raise = std::string("kill -") + (std::string(name) == "sigsegv" ? "SEGV" : "ABRT") + " $$";
    StageResult crashed = run_untrusted_stage(context, stage, {"/bin/sh", "-c", raise}, private_dir, false);
    CHECK(crashed.status == "fail");
    FailureEvidence evidence{.stage = crashed.name, .diagnostics = crashed.diagnostics,
                             .exit_code = crashed.exit_code, .reason = crashed.reason};
    if (crashed.signal != 0) evidence.signal = crashed.signal;
    CHECK(categorize(taxonomy, evidence).category == std::string("run.crash.") + name);
  }
  // An ordinary non-zero exit stays an exit code.
  StageResult exited = run_untrusted_stage(context, "nvidia.run", {"/bin/sh", "-c", "exit 3"}, private_dir, false);
  CHECK(exited.signal == 0);
  CHECK(exited.exit_code == 3);
}

TEST_CASE("a fork bomb is stopped by the process limit") {
  if (!bwrap_usable()) return;
  TestDir dir;
  std::string program = build_program(dir, "forkbomb", R"(
#include <stdio.h>
#include <unistd.h>
int main(void) {
  for (int n = 0; n < 100000; ++n) {
    pid_t pid = fork();
    if (pid == 0) { sleep(30); _exit(0); }
    if (pid < 0) { printf("fork failed after %d\n", n); return 3; }
  }
  printf("forked all\n");
  return 0;
})");
  SandboxOutcome outcome = run_sandboxed(test_options(), {{program}, dir.path, false, 5, ""});
  CHECK(outcome.executed);
  CHECK(outcome.process.exit_code == 3);
  CHECK(outcome.process.stdout_text.find("fork failed after") != std::string::npos);
}

TEST_CASE("a sandbox that cannot fork its first process is reported as not executed, after retries") {
  if (!bwrap_usable()) return;
  TestDir dir;
  SandboxOptions options = test_options();
  options.limits.max_processes = 1;  // bwrap itself is the one process the sandbox user may have
  SandboxOutcome outcome = run_sandboxed(options, {{"/bin/true"}, dir.path, false, 2, ""});
  CHECK_FALSE(outcome.executed);
  CHECK_MESSAGE(outcome.skip_reason.find("could not start the program: ") != std::string::npos, outcome.skip_reason);
  CHECK_MESSAGE(outcome.skip_reason.find("Resource temporarily unavailable") != std::string::npos, outcome.skip_reason);
  CHECK(outcome.process.wall_seconds < 3);  // the last attempt's; the retries waited about 5 s in all
  // With room for its processes the same program runs.
  CHECK(run_sandboxed(test_options(), {{"/bin/true"}, dir.path, false, 2, ""}).executed);
}

TEST_CASE("a sandboxed run leaves no process of the sandbox user behind, not even bwrap's init as a zombie") {
  if (!bwrap_usable()) return;
  if (geteuid() != 0) {
    testing::skip(testing::Missing::host_feature,
                  "not root, so the sandbox runs as this user, whose other processes cannot be told apart");
    return;
  }
  // bwrap exits before reaping its pid-1 init; left to the host's init, 60 such zombies at once
  // filled the sandbox user's process limit and the next program could not start.
  TestDir dir;
  SandboxOptions options = test_options();
  auto processes_of_sandbox_user = [&] {
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      struct stat info {};
      std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") == std::string::npos && stat(entry.path().c_str(), &info) == 0 &&
          static_cast<int>(info.st_uid) == options.run_as_uid) {
        ++count;
      }
    }
    return count;
  };
  for (int run = 0; run < 10; ++run) {
    SandboxOutcome outcome = run_sandboxed(options, {{"/bin/true"}, dir.path, false, 2, ""});
    REQUIRE(outcome.executed);
    CHECK(processes_of_sandbox_user() == 0);
  }
}

TEST_CASE("a 64 GiB allocation fails without harming the caller") {
  if (!bwrap_usable()) return;
  TestDir dir;
  std::string program = build_program(dir, "alloc", R"(
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
  size_t size = (size_t)64 << 30;
  char* p = malloc(size);
  if (!p) { printf("allocation failed\n"); return 4; }
  memset(p, 1, size);
  printf("allocated\n");
  return 0;
})");
  SandboxOutcome outcome = run_sandboxed(test_options(), {{program}, dir.path, false, 5, ""});
  CHECK(outcome.executed);
  CHECK(outcome.process.exit_code == 4);
  CHECK(outcome.process.stdout_text == "allocation failed\n");
}

TEST_CASE("a connect to 127.0.0.1 fails inside the sandbox") {
  if (!bwrap_usable()) return;
  TestDir dir;
  std::string program = build_program(dir, "connect", R"(
#include <arpa/inet.h>
#include <stdio.h>
#include <sys/socket.h>
int main(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {0};
  address.sin_family = AF_INET;
  address.sin_port = htons(22);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, (struct sockaddr*)&address, sizeof address) != 0) { perror("connect"); return 5; }
  printf("connected\n");
  return 0;
})");
  SandboxOutcome outcome = run_sandboxed(test_options(), {{program}, dir.path, false, 5, ""});
  CHECK(outcome.executed);
  CHECK(outcome.process.exit_code == 5);
  CHECK(outcome.process.stderr_text.find("connect") != std::string::npos);
}

TEST_CASE("a write outside the private directory fails, a write inside succeeds") {
  if (!bwrap_usable()) return;
  TestDir dir;
  TestDir outside;
  std::string target = outside.path + "/escaped.txt";
  std::string program = build_program(dir, "writer", R"(
#include <stdio.h>
int main(int argc, char** argv) {
  FILE* inside = fopen("inside.txt", "w");
  if (!inside) { printf("inside failed\n"); return 1; }
  fputs("ok", inside); fclose(inside);
  FILE* out = fopen(argv[1], "w");
  if (out) { printf("escaped\n"); return 0; }
  perror("outside");
  return 6;
})");
  SandboxOutcome outcome = run_sandboxed(test_options(), {{program, target}, dir.path, false, 5, ""});
  CHECK(outcome.executed);
  CHECK(outcome.process.exit_code == 6);
  CHECK_FALSE(std::filesystem::exists(target));
  CHECK(std::filesystem::exists(dir.path + "/inside.txt"));
}

TEST_CASE("a missing bwrap means untrusted code is not executed in bwrap mode") {
  TestDir dir;
  SandboxOptions options = test_options();
  options.bwrap_path = "/nonexistent/bwrap";
  SandboxOutcome outcome = run_sandboxed(options, {{"true"}, dir.path, false, 1, ""});
  CHECK_FALSE(outcome.executed);
  CHECK(outcome.skip_reason.find("sandbox unavailable") != std::string::npos);
}

TEST_CASE("rlimits-only mode runs the program with limits but without bwrap") {
  TestDir dir;
  SandboxOptions options = test_options();
  options.mode = "rlimits-only";
  options.bwrap_path = "/nonexistent/bwrap";
  SandboxOutcome outcome = run_sandboxed(options, {{"grep", "Max processes", "/proc/self/limits"}, dir.path, false, 2, ""});
  CHECK(outcome.executed);
  CHECK(outcome.process.stdout_text.find(" 32 ") != std::string::npos);
}

TEST_CASE("sandbox options are read from JSON and a bad mode is an error naming the key") {
  auto options = sandbox_options_from_json(nlohmann::json::parse(R"({"mode":"rlimits-only","max_processes":10})"));
  REQUIRE(options.ok());
  CHECK(options->mode == "rlimits-only");
  CHECK(options->limits.max_processes == 10);
  auto bad = sandbox_options_from_json(nlohmann::json::parse(R"({"mode":"none"})"));
  CHECK_FALSE(bad.ok());
  CHECK(bad.message().find("sandbox.mode") != std::string::npos);
}

TEST_CASE("the sandbox hides the host: only system programs and libraries are there, read-only") {
  if (!bwrap_usable()) return;
  TestDir dir;
  // Secrets where a user keeps them: outside /tmp (a tmpfs inside anyway), readable by everyone.
  std::string secrets = "/var/tmp/tf-sandbox-secret-" + std::to_string(getpid());
  std::filesystem::create_directories(secrets);
  chmod(secrets.c_str(), 0755);
  std::ofstream(secrets + "/token") << "s3cr3t";
  chmod((secrets + "/token").c_str(), 0644);
  std::string source_tree_file = std::string(TAILFORGE_SOURCE_DIR) + "/README.md";
  std::string program = build_program(dir, "reader", R"(
#include <stdio.h>
int main(int argc, char** argv) {
  int seen = 0;
  for (int i = 1; i < argc; ++i) {
    FILE* f = fopen(argv[i], "r");
    if (f) { printf("read %s\n", argv[i]); ++seen; fclose(f); }
  }
  return seen;
})");
  SandboxOutcome hidden = run_sandboxed(
      test_options(), {{program, secrets + "/token", source_tree_file, "/etc/hostname", "/etc/passwd", "/root/.bashrc"},
                       dir.path, false, 5, ""});
  std::filesystem::remove_all(secrets);
  REQUIRE(hidden.executed);
  CAPTURE(hidden.process.stdout_text);
  CHECK(hidden.process.exit_code == 0);
  CHECK(hidden.process.stdout_text.empty());
  // What programs need is there: the loader's cache, libc, the shell and its tools.
  SandboxOutcome system = run_sandboxed(
      test_options(), {{"/bin/sh", "-c", "test -r /etc/ld.so.cache && ls / && echo written > here && cat here"},
                       dir.path, false, 5, ""});
  REQUIRE(system.executed);
  CAPTURE(system.process.stderr_text);
  CHECK(system.process.exit_code == 0);
  CHECK(system.process.stdout_text.find("usr\n") != std::string::npos);
  CHECK(system.process.stdout_text.find("written\n") != std::string::npos);
  for (const char* absent : {"root\n", "home\n", "work\n", "var\n", "srv\n"}) {
    CHECK_MESSAGE(system.process.stdout_text.find(absent) == std::string::npos, absent);
  }
  SandboxOutcome read_only = run_sandboxed(test_options(), {{"/bin/sh", "-c", "touch /usr/tf-escape"}, dir.path, false, 5, ""});
  CHECK(read_only.process.exit_code != 0);
  CHECK_FALSE(std::filesystem::exists("/usr/tf-escape"));
}

TEST_CASE("stdout over the output cap is a recorded sandbox.output_cap failure, not a silently cut output") {
  if (!bwrap_usable()) return;
  TestDir dir;
  VerifierOptions options;
  options.sandbox = test_options();
  options.sandbox.output_cap_bytes = 1000;
  StageContext context{options, detected_toolchains(), nullptr, nullptr, dir.path, {}};
  std::string private_dir = make_subdirectory(context, "run");
  StageResult flood =
      run_untrusted_stage(context, "nvidia.run", {"/bin/sh", "-c", "yes tailforge | head -c 100000"}, private_dir, false);
  CHECK(flood.status == "fail");
  CHECK(flood.reason == "stdout over the sandbox's output cap of 1000 bytes (sandbox.output_cap_bytes)");
  Taxonomy taxonomy = load_taxonomy(data_path("policies/taxonomy.json")).value();
  FailureEvidence evidence{.stage = flood.name, .diagnostics = flood.diagnostics, .exit_code = flood.exit_code,
                           .reason = flood.reason};
  CHECK(categorize(taxonomy, evidence).category == "sandbox.output_cap");
  StageResult quiet = run_untrusted_stage(context, "nvidia.run", {"/bin/sh", "-c", "echo small"}, private_dir, false);
  CHECK(quiet.ok());
}

TEST_CASE("a GPU-mode program that allocates host memory without end is killed at the memory cap, as sandbox.memory_cap") {
  if (!bwrap_usable()) return;
  if (const std::string& why = memory_cgroups_unavailable(); !why.empty()) {
    testing::skip(testing::Missing::host_feature, "no memory cgroups here: " + why);
    return;
  }
  TestDir dir;
  std::string program = build_program(dir, "hog", R"(
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
  for (int mb = 32; mb <= 64 * 1024; mb += 32) {
    char* block = malloc(32 << 20);
    if (!block) { printf("malloc failed at %d MB\n", mb); return 3; }
    memset(block, 1, 32 << 20);
  }
  printf("allocated 64 GB\n");
  return 0;
})");
  VerifierOptions options;
  options.sandbox = test_options();
  options.sandbox.timeout_seconds = 30;
  options.sandbox.gpu_memory_cap_bytes = int64_t{256} << 20;
  StageContext context{options, detected_toolchains(), nullptr, nullptr, dir.path, {}};
  StageResult hog = run_program_stage(context, "nvidia.run", program, true);
  CAPTURE(hog.diagnostics);
  CHECK(hog.status == "fail");
  CHECK((hog.signal == SIGKILL || hog.exit_code == 128 + SIGKILL));  // bwrap reports its program's signal as 128+N
  CHECK(hog.reason == "killed at the sandbox's memory cap of 256 MB (sandbox.gpu_memory_cap_bytes)");
  Taxonomy taxonomy = load_taxonomy(data_path("policies/taxonomy.json")).value();
  FailureEvidence evidence{.stage = hog.name, .diagnostics = hog.diagnostics, .exit_code = hog.exit_code,
                           .signal = hog.signal, .reason = hog.reason};
  CHECK(categorize(taxonomy, evidence).category == "sandbox.memory_cap");
  // Under the cap the same kind of run is untouched, and no run cgroup is left behind.
  StageResult small = run_untrusted_stage(context, "nvidia.run", {"/bin/sh", "-c", "echo small"},
                                          make_subdirectory(context, "small"), true);
  CHECK(small.ok());
}

TEST_CASE("a CUDA program that allocates host memory without end is killed at the memory cap; a normal one runs") {
  if (!bwrap_usable()) return;
  if (!testing::nvcc_here() || !testing::nvidia_gpu_here()) return;
  const Toolchains& toolchains = detected_toolchains();
  if (const std::string& why = memory_cgroups_unavailable(); !why.empty()) {
    testing::skip(testing::Missing::host_feature, "no memory cgroups here: " + why);
    return;
  }
  TestDir dir;
  std::string source = dir.path + "/hog.cu";
  std::ofstream(source) << R"(#include <cstdio>
#include <cstdlib>
#include <cstring>
__global__ void touch(int* p) { p[threadIdx.x] = threadIdx.x; }
int main(int argc, char**) {
  int* device = nullptr;
  if (cudaMalloc(&device, 1 << 20) != cudaSuccess) { printf("cudaMalloc failed\n"); return 2; }
  touch<<<1, 32>>>(device);
  if (cudaDeviceSynchronize() != cudaSuccess) { printf("kernel failed\n"); return 2; }
  printf("kernel ok\n");
  fflush(stdout);
  if (argc > 1) return 0;  // the well-behaved run stops here
  for (long mb = 64; mb <= 1L << 20; mb += 64) {
    char* block = static_cast<char*>(malloc(64 << 20));
    if (!block) { printf("malloc failed at %ld MB\n", mb); return 3; }
    memset(block, 1, 64 << 20);
  }
  return 0;
})";
  ProcessSpec compile;
  compile.argv = {toolchains.tool("nvcc").path, "-o", dir.path + "/hog", source};
  compile.timeout_seconds = 180;
  ProcessResult built = run_process(compile);
  REQUIRE_MESSAGE(built.succeeded(), built.stderr_text);
  VerifierOptions options;
  options.sandbox = test_options();
  options.sandbox.timeout_seconds = 60;
  options.sandbox.gpu_memory_cap_bytes = int64_t{2} << 30;
  StageContext context{options, toolchains, nullptr, nullptr, dir.path, {}};
  std::string polite_dir = make_subdirectory(context, "polite");
  std::filesystem::copy_file(dir.path + "/hog", polite_dir + "/hog");
  StageResult polite = run_untrusted_stage(context, "nvidia.run", {polite_dir + "/hog", "stop"}, polite_dir, true);
  CHECK_MESSAGE(polite.ok(), polite.reason << "\n" << polite.diagnostics);
  StageResult hog = run_program_stage(context, "nvidia.run", dir.path + "/hog", true);
  CAPTURE(hog.diagnostics);
  CHECK(hog.reason == "killed at the sandbox's memory cap of 2048 MB (sandbox.gpu_memory_cap_bytes)");
}
