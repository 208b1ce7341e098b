// verifier.cuda_single_queue_first: nvidia.run and hip_on_nvidia.run run first with one hardware
// work queue (kCudaSingleQueue), and a program that does not pass that way is judged by a run
// without it. On any host with nvcc: the NVIDIA GPU is pretended (a Toolchains that lists one) and
// the programs launch no kernel, so what is tested is the chain's handling of the two runs (the
// driver's side was measured on an H200: docs/benchmarks.md).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>

#include "test_support/pretended_gpu.h"
#include "test_support/temp_dir.h"
#include "verifier/chain.h"
#include "test_support/tools_here.h"

namespace tailforge {
namespace {

// A program that prints "hello" and exits 0, except that it exits `refusal` after 0.6 s when the
// single-queue setting is in its environment (0: never), or always exits `failure` when that is not 0.
std::string program_body(int refusal, int failure) {
  return "#include <cstdio>\n#include <cstdlib>\n#include <unistd.h>\n"
         "int main() {\n"
         "  if (" + std::to_string(refusal) + " && std::getenv(\"CUDA_DEVICE_MAX_CONNECTIONS\")) {\n"
         "    usleep(600000);\n    return " + std::to_string(refusal) + ";\n  }\n" +
         (failure ? "  return " + std::to_string(failure) + ";\n" : "") +
         "  std::printf(\"hello\\n\");\n  return 0;\n}\n";
}

ChainResult verify_on_pretended_gpu(const TempDir& dir, int refusal, int failure, bool single_queue_first) {
  chmod(dir.path().c_str(), 0755);  // the sandbox user reaches the runs' folders
  std::ofstream(dir.file("program.cu")) << "__global__ void fill(int* out) { out[threadIdx.x] = 1; }\n"
                                        << program_body(refusal, failure);
  ChainOptions options;
  options.toolchains = &toolchains_with_pretended_nvidia_gpu();
  options.verifier.sm_targets = {"sm_90"};
  options.verifier.amd_targets = {};
  options.verifier.stages = {"translate", "nvidia", "hip_on_nvidia", "compare"};
  options.verifier.cache_dir = dir.file("cache");
  options.verifier.cuda_single_queue_first = single_queue_first;
  options.translate = [=](const std::string&) {
    return TranslateOutcome{true, "#include <hip/hip_runtime.h>\n" + program_body(refusal, failure), "", ""};
  };
  return verify_file(dir.file("program.cu"), options);
}

bool tools_here() { return testing::nvcc_here(); }

const StageResult& required_stage(const ChainResult& chain, const std::string& name) {
  const StageResult* stage = chain.stage(name);
  REQUIRE_MESSAGE(stage != nullptr, name);
  return *stage;
}

bool has_single_queue(const StageResult& stage) {
  return stage.command.find(kCudaSingleQueue) != std::string::npos;
}

TEST_CASE("single queue: a CUDA program and its HIP translation run with one hardware queue") {
  if (!tools_here()) return;
  TempDir dir;
  ChainResult chain = verify_on_pretended_gpu(dir, 0, 0, true);
  for (const char* name : {"nvidia.run", "hip_on_nvidia.run"}) {
    CAPTURE(name);
    const StageResult& run = required_stage(chain, name);
    CHECK_MESSAGE(run.ok(), run.reason << "\n" << run.diagnostics);
    CHECK(has_single_queue(run));
    CHECK(run.diagnostics.find("a first run") == std::string::npos);
    REQUIRE(run.artifact("stdout") != nullptr);
    CHECK(run.artifact("stdout")->content == "hello\n");
  }
  CHECK(required_stage(chain, "compare").ok());
  CHECK(chain.ok);
}

TEST_CASE("single queue: a program that fails with one queue is judged by a run without it") {
  if (!tools_here()) return;
  TempDir dir;
  ChainResult chain = verify_on_pretended_gpu(dir, 3, 0, true);
  for (const char* name : {"nvidia.run", "hip_on_nvidia.run"}) {
    CAPTURE(name);
    const StageResult& run = required_stage(chain, name);
    CHECK_MESSAGE(run.ok(), run.reason << "\n" << run.diagnostics);
    CHECK_FALSE(has_single_queue(run));
    CHECK(run.diagnostics.rfind("a first run with CUDA_DEVICE_MAX_CONNECTIONS=1 did not pass (fail: exit code 3", 0) == 0);
    CHECK(run.seconds >= 0.6);  // the first run's included
    REQUIRE(run.artifact("stdout") != nullptr);
    CHECK(run.artifact("stdout")->content == "hello\n");
  }
  CHECK(chain.ok);
}

TEST_CASE("single queue: a program that fails both ways fails with the plain run's exit code") {
  if (!tools_here()) return;
  TempDir dir;
  ChainResult chain = verify_on_pretended_gpu(dir, 3, 4, true);
  const StageResult& run = required_stage(chain, "nvidia.run");
  CHECK(run.status == "fail");
  CHECK(run.exit_code == std::optional<int>(4));
  CHECK_FALSE(has_single_queue(run));
  CHECK(run.diagnostics.find("did not pass (fail: exit code 3") != std::string::npos);
  CHECK_FALSE(chain.ok);
}

TEST_CASE("single queue: verifier.cuda_single_queue_first false runs each program once, as it is") {
  if (!tools_here()) return;
  TempDir dir;
  ChainResult chain = verify_on_pretended_gpu(dir, 3, 0, false);
  for (const char* name : {"nvidia.run", "hip_on_nvidia.run"}) {
    CAPTURE(name);
    const StageResult& run = required_stage(chain, name);
    CHECK(run.ok());
    CHECK_FALSE(has_single_queue(run));
    CHECK(run.diagnostics.find("a first run") == std::string::npos);
  }
  CHECK(chain.ok);
}

}  // namespace
}  // namespace tailforge
