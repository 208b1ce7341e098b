// nvidia.run as the run that records a program's launches (ChainOptions::record_launches), on any
// host with nvcc and gcc: the NVIDIA GPU is pretended (a Toolchains that lists one) and the
// recorder is a small preload library that writes one launch folder, so what is tested is the
// chain's handling of the recorded run, not the recorder (tests/daemon/ptx2cuda_pairs_test.cpp
// runs the real one on a GPU).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_support/pretended_gpu.h"
#include "test_support/temp_dir.h"
#include "verifier/chain.h"
#include "verifier/ptx2cuda/launch_harness.h"
#include "test_support/tools_here.h"

namespace tailforge {
namespace {

// Writes launch_0/launch.txt and the globals it was asked for into $TAILFORGE_CAPTURE_DIR when
// loaded, as the recorder writes its folders.
const char* kFakeRecorder = R"(#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
__attribute__((constructor)) static void record_one_launch(void) {
  const char* dir = getenv("TAILFORGE_CAPTURE_DIR");
  const char* globals = getenv("TAILFORGE_CAPTURE_GLOBALS");
  char path[4096];
  if (!dir) return;
  snprintf(path, sizeof path, "%s/launch_0", dir);
  mkdir(path, 0755);
  snprintf(path, sizeof path, "%s/launch_0/launch.txt", dir);
  FILE* launch = fopen(path, "w");
  if (!launch) return;
  fprintf(launch, "kernel _Z4fillPi\ngrid 1 1 1\nblock 32 1 1\nshared 0\n");
  fclose(launch);
  snprintf(path, sizeof path, "%s/launch_0/globals.txt", dir);
  FILE* named = fopen(path, "w");
  if (named) fprintf(named, "%s", globals ? globals : "");
  if (named) fclose(named);
}
)";

struct RecordedChain {
  ChainResult chain;
  LaunchRecording recording;
};

// Verifies `source` with nvidia.run recording through the fake recorder, as on a GPU host.
RecordedChain verify_recorded(const TempDir& dir, const std::string& source) {
  chmod(dir.path().c_str(), 0755);  // the sandbox user reaches the run's folder
  std::ofstream(dir.file("recorder.c")) << kFakeRecorder;
  std::string build = "gcc -shared -fPIC -o " + dir.file("recorder.so") + " " + dir.file("recorder.c");
  REQUIRE(std::system(build.c_str()) == 0);
  std::ofstream(dir.file("program.cu")) << source;
  ChainOptions options;
  options.toolchains = &toolchains_with_pretended_nvidia_gpu();
  options.verifier.sm_targets = {"sm_90"};
  options.verifier.stages = {"nvidia"};
  options.verifier.cache_dir = dir.file("cache");
  options.shared_cuda_runtime = true;
  options.record_launches = LaunchRecording{dir.file("recorder.so"), {"weights"}, dir.file("launches")};
  return {verify_file(dir.file("program.cu"), options), *options.record_launches};
}

bool tools_here() { return testing::tools_here({"nvcc", "gcc"}); }

TEST_CASE("recording: nvidia.run is the recorded run; the recording is kept beside the stages, its launches moved out") {
  if (!tools_here()) return;
  TempDir dir;
  RecordedChain recorded = verify_recorded(dir, R"(#include <cstdio>
__global__ void fill(int* out) { out[threadIdx.x] = threadIdx.x; }
int main() { std::printf("hello\n"); return 0; }
)");
  const ChainResult& chain = recorded.chain;
  const StageResult* ran = chain.stage("nvidia.run");
  REQUIRE(ran != nullptr);
  REQUIRE_MESSAGE(ran->ok(), ran->reason << "\n" << ran->diagnostics);
  CHECK(ran->command.find("LD_PRELOAD=") != std::string::npos);
  CHECK(ran->command.find(kCudaSingleQueue) != std::string::npos);
  REQUIRE(ran->artifact("stdout") != nullptr);
  CHECK(ran->artifact("stdout")->content == "hello\n");
  CHECK(chain.ok);
  for (const StageResult& stage : chain.stages) {
    CHECK_FALSE(stage.name.empty());
    CHECK(stage.name != "ptx2cuda.capture");
  }
  REQUIRE(chain.launch_recording.has_value());
  CHECK(chain.launch_recording->name == "ptx2cuda.capture");
  CHECK(chain.launch_recording->status == "ok");
  CHECK(chain.launch_recording->seconds == 0);
  Result<std::vector<CapturedLaunch>> launches = read_captured_launches(recorded.recording.keep_dir);
  REQUIRE_MESSAGE(launches.ok(), launches.message());
  REQUIRE(launches->size() == 1);
  CHECK((*launches)[0].kernel == "_Z4fillPi");
  std::ifstream globals(recorded.recording.keep_dir + "/launch_0/globals.txt");
  std::string named;
  std::getline(globals, named);
  CHECK(named == "weights");
}

TEST_CASE("recording: a program that fails with the recorder is judged by a plain run after it") {
  if (!tools_here()) return;
  TempDir dir;
  RecordedChain recorded = verify_recorded(dir, R"(#include <cstdio>
#include <cstdlib>
__global__ void fill(int* out) { out[threadIdx.x] = threadIdx.x; }
int main() {
  if (std::getenv("LD_PRELOAD")) return 3;
  std::printf("hello\n");
  return 0;
}
)");
  const ChainResult& chain = recorded.chain;
  const StageResult* ran = chain.stage("nvidia.run");
  REQUIRE(ran != nullptr);
  CHECK_MESSAGE(ran->ok(), ran->reason << "\n" << ran->diagnostics);
  CHECK(ran->command.find("LD_PRELOAD=") == std::string::npos);
  CHECK(ran->command.find(kCudaSingleQueue) == std::string::npos);  // the program as it is, run once
  CHECK(ran->diagnostics.find("a first run") == std::string::npos);
  CHECK(chain.ok);
  REQUIRE(chain.launch_recording.has_value());
  CHECK(chain.launch_recording->status == "fail");
  CHECK(chain.launch_recording->exit_code == std::optional<int>(3));
  CHECK(chain.launch_recording->seconds > 0);
  CHECK(chain.launch_recording->reason.find("the program's run with the launch recorder did not pass") == 0);
  CHECK(chain.launch_recording->artifacts.empty());
  CHECK_FALSE(std::filesystem::exists(recorded.recording.keep_dir));
}

}  // namespace
}  // namespace tailforge
