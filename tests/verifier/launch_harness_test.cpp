// The ptx2cuda harness: buffers compared by normalized error, recorded launches read back, the
// capture and replay programs built by nvcc, and on a GPU a real program's launch captured and
// replayed with a correct, an off-by-one and a broken candidate kernel, each judged and
// categorized by the failure taxonomy.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/files.h"
#include "policies/categorizer.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/nvidia.h"
#include "verifier/ptx2cuda/launch_harness.h"

namespace tailforge {
namespace {

std::string float_bytes(const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

const StageResult* find_stage(const StageContext& context, const std::string& name) { return context.find(name); }

std::string category_of(const StageResult& stage) {
  static const Taxonomy taxonomy = load_taxonomy(data_path("policies/taxonomy.json")).value();
  FailureEvidence evidence;
  evidence.stage = stage.name;
  evidence.diagnostics = stage.diagnostics + "\n" + stage.reason;
  evidence.exit_code = stage.exit_code;
  evidence.signal = stage.signal ? std::optional<int>(stage.signal) : std::nullopt;
  evidence.timed_out = stage.status == "timeout";
  return categorize(taxonomy, evidence).category;
}

// The program whose launch is captured: scale_shift writes y[i] = a * x[i] + b for i < n.
const char* kProgram = R"(#include <cstdio>
__global__ void scale_shift(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + b;
}
int main() {
  const int n = 1000;
  float host[n];
  for (int i = 0; i < n; ++i) host[i] = 0.5f * i - 7.0f;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice);
  cudaMemset(y, 0, n * sizeof(float));
  scale_shift<<<(n + 127) / 128, 128>>>(x, y, 3.0f, 0.25f, n);
  cudaMemcpy(host, y, sizeof host, cudaMemcpyDeviceToHost);
  printf("%f %f\n", host[0], host[n - 1]);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
)";

const char* kCorrectCandidate = R"(__global__ void scale_shift(const float* input, float* output, float scale, float shift, int count) {
  int index = threadIdx.x + blockDim.x * blockIdx.x;
  if (index < count) output[index] = scale * input[index] + shift;
}
)";

const char* kOffByOneCandidate = R"(__global__ void scale_shift(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i + 1 < n) y[i] = a * x[i + 1] + b;
}
)";

const char* kBrokenCandidate = R"(__global__ void scale_shift(const float* x, float* y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + offset;
}
)";

}  // namespace

TEST_CASE("harness: buffers compare by normalized error for numbers and byte for byte otherwise") {
  std::string expected = float_bytes({1.0f, -2.5f, 1000.0f});
  CHECK(compare_buffers(expected, float_bytes({1.0005f, -2.5f, 1000.5f}), "f32").equal);
  BufferComparison off = compare_buffers(expected, float_bytes({1.0f, -2.5f, 1002.0f}), "f32");
  CHECK_FALSE(off.equal);
  CHECK(off.message.find("element 2 (f32)") != std::string::npos);
  CHECK(off.message.find("normalized error") != std::string::npos);
  CHECK(off.max_error > 1e-3);
  CHECK_FALSE(compare_buffers(expected, float_bytes({1.0005f, -2.5f, 1000.0f}), "bytes").equal);
  BufferComparison shorter = compare_buffers(expected, float_bytes({1.0f}), "f32");
  CHECK_FALSE(shorter.equal);
  CHECK(shorter.message == "4 bytes where 12 were recorded");
}

TEST_CASE("harness: recorded launches are read back in launch order with their buffers") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("launch_0"));
  std::filesystem::create_directories(dir.file("launch_1"));
  std::ofstream(dir.file("launch_0/launch.txt")) << "kernel _Z3addPfS_i\ngrid 8 1 1\nblock 128 2 1\nshared 512\n"
                                                     "param 0 8 0000000b02000000\nparam 8 8 0002000b02000000\n"
                                                     "param 16 4 e8030000\nbuffer 47278784512 4000\nbuffer 47278785024 4000\n";
  std::ofstream(dir.file("launch_1/launch.txt")) << "kernel _Z4big1Pf\ngrid 1 1 1\nblock 1 1 1\nshared 0\n"
                                                     "param 0 8 0000000b02000000\nskipped over_cap 999999999\n";
  Result<std::vector<CapturedLaunch>> launches = read_captured_launches(dir.path());
  REQUIRE(launches.ok());
  REQUIRE(launches->size() == 2);
  const CapturedLaunch& first = (*launches)[0];
  CHECK(first.kernel == "_Z3addPfS_i");
  CHECK(first.grid[0] == 8);
  CHECK(first.block[1] == 2);
  CHECK(first.shared_bytes == 512);
  CHECK(first.parameters == 3);
  CHECK(first.buffer_bytes == std::vector<size_t>{4000, 4000});
  CHECK(first.skipped.empty());
  CHECK((*launches)[1].skipped == "over_cap 999999999");
  std::ofstream(dir.file("launch_1/launch.txt")) << "grid 1 1 1\n";
  CHECK_FALSE(read_captured_launches(dir.path()).ok());
}

TEST_CASE("harness: a captured launch holding a link is refused, never followed") {
  TempDir dir;
  std::filesystem::create_directories(dir.file("launch_0"));
  std::ofstream(dir.file("secret")) << "the daemon's file";
  std::ofstream(dir.file("launch_0/launch.txt")) << "kernel _Z4big1Pf\ngrid 1 1 1\nblock 1 1 1\nshared 0\n"
                                                     "param 0 8 0000000b02000000\nbuffer 47278784512 17\n";
  std::ofstream(dir.file("launch_0/buffer_0.out")) << "the daemon's file";
  std::filesystem::create_symlink(dir.file("secret"), dir.file("launch_0/buffer_0.in"));
  Result<std::vector<CapturedLaunch>> launches = read_captured_launches(dir.path());
  REQUIRE_FALSE(launches.ok());
  CHECK(launches.message().find("buffer_0.in is not a plain file") != std::string::npos);
  // A launch folder that is itself a link is refused as well.
  std::filesystem::remove(dir.file("launch_0/buffer_0.in"));
  std::ofstream(dir.file("launch_0/buffer_0.in")) << "the program's data";
  REQUIRE(read_captured_launches(dir.path()).ok());
  std::filesystem::create_directories(dir.file("elsewhere"));
  std::filesystem::create_directory_symlink(dir.file("elsewhere"), dir.file("launch_1"));
  Result<std::vector<CapturedLaunch>> linked = read_captured_launches(dir.path());
  REQUIRE_FALSE(linked.ok());
  CHECK(linked.message().find("launch_1 is not a folder") != std::string::npos);
}

TEST_CASE("harness: a capture's launch folders move out of its run's folder, and only once") {
  TempDir dir;
  for (const char* launch : {"run/launch_0", "run/launch_1"}) {
    std::filesystem::create_directories(dir.file(launch));
    std::ofstream(dir.file(std::string(launch) + "/launch.txt")) << "kernel _Z1kv\ngrid 1 1 1\nblock 1 1 1\nshared 0\n";
  }
  std::ofstream(dir.file("run/program")) << "not a launch";
  Status kept = keep_captured_launches(dir.file("run"), dir.file("kept"));
  REQUIRE_MESSAGE(kept.ok(), kept.message());
  CHECK_FALSE(std::filesystem::exists(dir.file("run/launch_0")));
  CHECK_FALSE(std::filesystem::exists(dir.file("kept/program")));
  Result<std::vector<CapturedLaunch>> launches = read_captured_launches(dir.file("kept"));
  REQUIRE(launches.ok());
  CHECK(launches->size() == 2);
  Status again = keep_captured_launches(dir.file("run"), dir.file("kept"));
  REQUIRE_FALSE(again.ok());
  CHECK(again.message().find("it exists") != std::string::npos);
}

TEST_CASE("harness: a stored launch keeps the module variables its kernel declares, in its data and launch.txt") {
  StoredLaunch stored;
  stored.launch_txt = "kernel _Z5shiftPf\ngrid 1 1 1\nblock 32 1 1\nshared 0\nglobal bias 16\nglobal weights 8\n";
  stored.globals = {{"bias", std::string(16, 'b'), std::string(16, 'B')}, {"weights", std::string(8, 'w'), std::string(8, 'W')}};
  keep_module_variables(stored, {"weights", "unrelated"});
  REQUIRE(stored.globals.size() == 1);
  CHECK(stored.globals[0].name == "weights");
  CHECK(stored.launch_txt == "kernel _Z5shiftPf\ngrid 1 1 1\nblock 32 1 1\nshared 0\nglobal weights 8\n");
  TempDir dir;
  Result<CapturedLaunch> restored = restore_captured_launch(stored, dir.path());
  REQUIRE_MESSAGE(restored.ok(), restored.message());
  CHECK(restored->globals == std::vector<std::string>{"weights"});
  keep_module_variables(stored, {});
  CHECK(stored.globals.empty());
  CHECK(stored.launch_txt.find("global") == std::string::npos);
}

TEST_CASE("harness: the taxonomy names each way a candidate fails") {
  StageResult stage;
  stage.status = "fail";
  stage.name = "ptx2cuda.launch";
  for (auto [code, category] : std::vector<std::pair<int, std::string>>{{3, "ptx2cuda.launch.missing_kernel"},
                                                                        {4, "ptx2cuda.launch.signature"},
                                                                        {5, "ptx2cuda.launch.refused"},
                                                                        {6, "ptx2cuda.launch.fault"}}) {
    stage.exit_code = code;
    CHECK(category_of(stage) == category);
  }
  stage.name = "ptx2cuda.compile";
  stage.exit_code = 1;
  stage.diagnostics = "candidate.cu(3): error: identifier \"offset\" is undefined";
  CHECK(category_of(stage) == "ptx2cuda.compile.undeclared_identifier");
  stage.diagnostics = "candidate.cu(2): error: expected a \";\"";
  CHECK(category_of(stage) == "ptx2cuda.compile.syntax");
  stage.name = "ptx2cuda.compare";
  stage.exit_code.reset();
  stage.diagnostics = "buffer 1: element 998 (f32): 0 where 1490.5 was recorded, normalized error 1";
  CHECK(category_of(stage) == "ptx2cuda.mismatch.numeric");
  stage.diagnostics = "buffer 0: byte 12 differs";
  CHECK(category_of(stage) == "ptx2cuda.mismatch.bytes");
}

TEST_CASE("harness: a captured launch replays a correct candidate and fails an off-by-one and a broken one") {
  const Toolchains& toolchains = detected_toolchains();
  if (!testing::nvcc_here()) return;
  TempDir dir;
  chmod(dir.path().c_str(), 0755);  // the sandbox user reaches its private directories through it
  VerifierOptions options;
  options.cache_dir = dir.file("cache");
  options.sm_targets = {"sm_90"};
  StageContext context{options, toolchains, nullptr, nullptr, dir.path(), {}};
  Result<HarnessTools> tools = build_harness_tools(context);
  REQUIRE_MESSAGE(tools.ok(), tools.message());
  CHECK(std::filesystem::exists(tools->capture_library));
  CHECK(std::filesystem::exists(tools->replay));
  if (!testing::nvidia_gpu_here("for the capture and the replays")) return;

  std::ofstream(dir.file("program.cu")) << kProgram;
  std::vector<std::string> argv = {toolchains.tool("nvcc").path, "-arch=sm_90", dir.file("program.cu"), "-o",
                                   dir.file("program")};
  for (const std::string& flag : shared_cuda_runtime_flags(toolchains)) argv.push_back(flag);
  ProcessSpec build;
  build.argv = argv;
  build.timeout_seconds = 120;
  ProcessResult built = run_process(build);
  REQUIRE_MESSAGE(built.succeeded(), built.stderr_text);

  std::string capture_dir;
  StageResult capture = run_capture_stage(context, *tools, dir.file("program"), {}, capture_dir);
  REQUIRE_MESSAGE(capture.ok(), capture.reason << "\n" << capture.diagnostics);
  CHECK(capture.artifact("stdout")->content == "-20.750000 1477.750000\n");
  Result<std::vector<CapturedLaunch>> launches = read_captured_launches(capture_dir);
  REQUIRE(launches.ok());
  REQUIRE(launches->size() == 1);
  const CapturedLaunch& launch = launches->front();
  CHECK(launch.kernel == "_Z11scale_shiftPKfPfffi");
  CHECK(launch.grid[0] == 8);
  CHECK(launch.block[0] == 128);
  CHECK(launch.parameters == 5);
  REQUIRE(launch.buffer_bytes == std::vector<size_t>{4000, 4000});
  CHECK(launch.skipped.empty());

  auto judge = [&](const std::string& name, const char* source) {
    StageContext candidate{options, toolchains, nullptr, nullptr, dir.file(name), {}};
    std::filesystem::create_directories(candidate.scratch_dir);
    run_candidate_stages(candidate, *tools, launch, source, {"f32", "f32"});
    return candidate;
  };
  StageContext correct = judge("correct", kCorrectCandidate);
  const StageResult* compare = find_stage(correct, "ptx2cuda.compare");
  REQUIRE(compare != nullptr);
  CHECK_MESSAGE(compare->ok(), compare->diagnostics);

  StageContext off_by_one = judge("off-by-one", kOffByOneCandidate);
  compare = find_stage(off_by_one, "ptx2cuda.compare");
  REQUIRE(compare != nullptr);
  CHECK(compare->status == "fail");
  CHECK(category_of(*compare) == "ptx2cuda.mismatch.numeric");

  StageContext broken = judge("broken", kBrokenCandidate);
  const StageResult* compile = find_stage(broken, "ptx2cuda.compile");
  REQUIRE(compile != nullptr);
  CHECK(compile->status == "fail");
  CHECK(category_of(*compile) == "ptx2cuda.compile.undeclared_identifier");
  CHECK(find_stage(broken, "ptx2cuda.launch")->status == "skipped");
}

}  // namespace tailforge
