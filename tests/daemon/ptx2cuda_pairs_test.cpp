// The ptx2cuda track from a verified program: one pair per PTX entry (a template's instantiations
// each), Rolled-PTX on the PTX side, the refactored kernel unit on the CUDA side compiling alone,
// on a GPU each kernel replayed on its recorded launch; stored as samples with their artifacts and
// exported as Rolled-PTX -> CUDA pairs.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "agents/ptx2cuda/ptx_pairs.h"
#include "base/files.h"
#include "daemon/verify/derived_pairs.h"
#include "daemon/verify/ptx_pairs_store.h"
#include "test_support/ptx_pairs_fixture.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"

namespace tailforge {
namespace {

const char* kProgram = R"(#include <cstdio>
#define N 4096
__constant__ float weights[8];

__device__ float weighted(const float* x, int i) {
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < 8; ++k) sum += weights[k] * x[(i + k) % N];
  return sum;
}

__global__ void smooth(const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = (weighted(x, i));
}

template <typename T>
__global__ void scale(T* data, T factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if ((i) < N) data[i] = data[blockIdx.x * blockDim.x + threadIdx.x] * factor;
}

int main() {
  float host_weights[8] = {0.1f, 0.2f, 0.3f, 0.4f, 0.4f, 0.3f, 0.2f, 0.1f};
  cudaMemcpyToSymbol(weights, host_weights, sizeof host_weights);
  float *x, *y;
  double* z;
  cudaMalloc(&x, N * sizeof(float));
  cudaMalloc(&y, N * sizeof(float));
  cudaMalloc(&z, N * sizeof(double));
  float ones[N];
  for (int i = 0; i < N; ++i) ones[i] = 1.0f + i % 3;
  cudaMemcpy(x, ones, sizeof ones, cudaMemcpyHostToDevice);
  cudaMemset(z, 0, N * sizeof(double));
  smooth<<<N / 256, 256>>>(x, y);
  scale<float><<<N / 256, 256>>>(y, 2.0f);
  scale<double><<<N / 256, 256>>>(z, 3.0);
  float out[N];
  cudaMemcpy(out, y, sizeof out, cudaMemcpyDeviceToHost);
  printf("%.4f %.4f\n", out[0], out[N - 1]);
  return 0;
}
)";

}  // namespace

TEST_CASE("ptx2cuda: a verified program gives one pair per PTX entry, stored and exported as Rolled-PTX -> CUDA") {
  const Toolchains& toolchains = detected_toolchains();
  if (!testing::nvcc_here()) return;
  TempDir dir;
  PtxPairing pairing = pair_test_program(dir, kProgram);
  CHECK_MESSAGE(pairing.none_reason.empty(), pairing.none_reason);
  for (const std::string& unmatched : pairing.unmatched) FAIL_CHECK("unmatched: " << unmatched);
  REQUIRE(pairing.pairs.size() == 3);  // smooth, scale<float>, scale<double>
  bool gpu = toolchains.has_gpu("nvidia");
  for (const PtxPair& pair : pairing.pairs) {
    CAPTURE(pair.kernel);
    CHECK(pair.ok);
    CHECK(pair.rolled_ptx_chars <= pair.ptx_chars);
    CHECK(pair.cuda.find("int main") == std::string::npos);
    CHECK(pair.cuda.find("__global__") != std::string::npos);
    std::map<std::string, std::string> status;
    for (const StageResult& check : pair.checks) {
      status[check.name] = check.status;
      if (check.name == "ptx2cuda.launch" && gpu) CHECK(check.command.find(kCudaSingleQueue) != std::string::npos);
      if (check.status != "ok" && check.status != "skipped") MESSAGE(check.name << ": " << check.reason << "\n" << check.diagnostics);
    }
    CHECK(status["ptx2cuda.reroll"] == "ok");
    CHECK(status["ptx2cuda.compile"] == "ok");
    CHECK(status["ptx2cuda.launch"] == (gpu ? "ok" : "skipped"));
    if (gpu) {
      CHECK(status["ptx2cuda.compare"] == "ok");
      CHECK(pair.launch.launch_txt.find("kernel " + pair.kernel) != std::string::npos);
    }
  }
  const PtxPair& smooth = pairing.pairs.front();
  CHECK(smooth.kernel == "_Z6smoothPKfPf");
  CHECK(smooth.rolled_ptx.find("for.size.") != std::string::npos);  // the unrolled 8-tap sum folds
  CHECK(smooth.rolled_ptx_chars < smooth.ptx_chars);
  CHECK(smooth.cuda.find("weights[8]") != std::string::npos);  // the constant it reads comes along
  CHECK(smooth.cuda.find("y[i] = weighted(x, i);") != std::string::npos);  // refactored: no redundant parentheses
  CHECK(parameter_element_types(smooth.cuda, "smooth") == std::vector<std::string>{"f32", "f32"});
  CHECK(parameter_element_types("template <typename T>\n__global__ void scale(T* data, T factor) {}", "scale") ==
        std::vector<std::string>{"bytes", "bytes"});
  CHECK(parameter_element_types("__global__ void mix(const double* __restrict__ a, unsigned char* b, int n) {}", "mix") ==
        std::vector<std::string>{"f64", "u8", "bytes"});
  if (gpu) {
    CHECK_MESSAGE(pairing.capture.ok(), pairing.capture.reason << "\n" << pairing.capture.diagnostics);
    CHECK(smooth.launch.launch_txt.find("global weights 32") != std::string::npos);  // the __constant__ it reads
  } else {
    CHECK(pairing.capture.status == "skipped");
    CHECK(pairing.capture.reason.find("no NVIDIA GPU") == 0);
  }

  std::string db_path = dir.file("pairs.db");
  {
    Database db = Database::open(db_path).value();
    Sample parent;
    parent.track = "cuda2hip";
    parent.origin = "template";
    parent.language = "cuda";
    parent.text = kProgram;
    parent.features = {"constant_memory"};
    parent.id = insert_sample_if_absent(db, parent).value().id;
    Taxonomy taxonomy = load_taxonomy(data_path("policies/taxonomy.json")).value();
    Result<StoredDerivedSamples> stored = store_ptx_pairs(db, parent, pairing, taxonomy, "test-host");
    REQUIRE_MESSAGE(stored.ok(), stored.message());
    CHECK(stored->inserted == 3);
    CHECK(stored->verified == 3);
    CHECK(store_ptx_pairs(db, parent, pairing, taxonomy, "test-host")->already_stored == 3);
    CHECK(query_int(db, "SELECT count(*) FROM sample WHERE track = 'ptx2cuda' AND status = 'verified'") == 3);
    CHECK(query_int(db, "SELECT count(*) FROM lineage WHERE relation = 'compiled_to' AND parent_id = '" + parent.id +
                            "'") == 3);
    CHECK(query_int(db, "SELECT count(*) FROM sample_artifact WHERE name = 'rolled_ptx'") == 3);
    CHECK(query_int(db, "SELECT count(*) FROM sample_artifact WHERE name = 'launch'") == (gpu ? 3 : 0));
  }
  ProcessResult exported = run_tailforge({"export", "--db", db_path, "--track", "ptx2cuda", "--format", "jsonl",
                                          "--out", dir.file("dataset")});
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.stderr_text);
  CHECK(exported.stdout_text.find("exported 3 ptx2cuda pairs") == 0);
  std::ifstream rows(dir.file("dataset/train.jsonl"));
  std::ifstream held_out(dir.file("dataset/eval.jsonl"));
  std::string line, all;
  while (std::getline(rows, line)) all += line + "\n";
  while (std::getline(held_out, line)) all += line + "\n";
  CHECK(all.find("for.size.") != std::string::npos);
  CHECK(all.find("__global__ void smooth") != std::string::npos);
  CHECK(exported.stdout_text.find("length reduction rolled_ptx: ") != std::string::npos);
  std::ifstream manifest_file(dir.file("dataset/manifest.json"));
  nlohmann::json manifest = nlohmann::json::parse(manifest_file);
  size_t ptx_chars = 0, rolled_chars = 0;
  for (const PtxPair& pair : pairing.pairs) {
    ptx_chars += pair.ptx_chars;
    rolled_chars += pair.rolled_ptx_chars;
  }
  CHECK(manifest["length_reductions"]["rolled_ptx"]["characters_before"].get<double>() == doctest::Approx(ptx_chars));
  CHECK(manifest["length_reductions"]["rolled_ptx"]["characters_after"].get<double>() == doctest::Approx(rolled_chars));
  CHECK(manifest["length_reductions"]["refactored_cuda"]["reduction"].get<double>() > 0);  // parentheses went
  CHECK(manifest["counts"]["harnesses"] == (gpu ? 3 : 0));
  for (const nlohmann::json& sample : manifest["samples"]) {
    if (!gpu) {
      CHECK_FALSE(sample.contains("harness"));
      continue;
    }
    // The recorded launch, as files a test can be rebuilt from.
    std::string harness = dir.file("dataset/" + sample["harness"].get<std::string>());
    CHECK(std::filesystem::exists(harness + "/launch_0/launch.txt"));
    CHECK(std::filesystem::exists(harness + "/launch_0/buffer_0.in"));
    CHECK(std::filesystem::exists(harness + "/element_types.json"));
  }
}

TEST_CASE("ptx2cuda: where the chain links nvidia.exe with the shared CUDA runtime, the capture runs that executable") {
  if (!testing::nvcc_here()) return;
  TempDir dir;
  ChainOptions options;
  options.shared_cuda_runtime = true;
  ChainResult chain = verify_test_program(dir, kProgram, options);
  const StageResult* linked = chain.stage("nvidia.exe");
  REQUIRE(linked != nullptr);
  REQUIRE_MESSAGE(linked->ok(), linked->diagnostics);
  CHECK(linked->command.find("-cudart shared") != std::string::npos);
  REQUIRE(linked->artifact("executable") != nullptr);
  CHECK(linked->artifact("executable")->content.find("libcudart.so") != std::string::npos);  // a needed library
  if (!testing::nvidia_gpu_here("the capture run")) return;
  REQUIRE_MESSAGE(chain.stage("nvidia.run")->ok(), chain.stage("nvidia.run")->diagnostics);
  PtxPairing pairing = pair_ptx_kernels(kProgram, chain, options, dir.file("pairs"));
  CHECK_MESSAGE(pairing.capture.ok(), pairing.capture.reason << "\n" << pairing.capture.diagnostics);
  CHECK(pairing.capture.seconds > 0);
  // No second build of the program: its source is never written for one.
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.file("pairs"))) {
    CHECK_MESSAGE(entry.path().filename() != "program.cu", entry.path().string());
  }
  REQUIRE(pairing.pairs.size() == 3);
  for (const PtxPair& pair : pairing.pairs) {
    CAPTURE(pair.kernel);
    CHECK(pair.ok);
    CHECK(pair.launch.launch_txt.find("kernel " + pair.kernel) != std::string::npos);
  }
}

// The chain as SampleVerifier sets it on a GPU host: nvidia.exe linked with the shared runtime
// and nvidia.run recording the launches into `dir`/launches.
ChainOptions recording_options(const TempDir& dir, const std::string& source) {
  ChainOptions options;
  options.shared_cuda_runtime = true;
  options.verifier.cache_dir = dir.file("cache");
  StageContext context{options.verifier, detected_toolchains(), nullptr, nullptr, "", {}};
  Result<HarnessTools> tools = build_harness_tools(context);
  REQUIRE_MESSAGE(tools.ok(), tools.message());
  options.record_launches = LaunchRecording{tools->capture_library, device_variable_names(source), dir.file("launches")};
  return options;
}

TEST_CASE("ptx2cuda: where the chain records launches, nvidia.run is the recorded run and the capture runs nothing") {
  if (!testing::nvcc_here() || !testing::nvidia_gpu_here("the program runs")) return;
  TempDir dir;
  ChainOptions options = recording_options(dir, kProgram);
  CHECK(options.record_launches->globals == std::vector<std::string>{"weights"});
  ChainResult chain = verify_test_program(dir, kProgram, options);
  const StageResult* ran = chain.stage("nvidia.run");
  REQUIRE(ran != nullptr);
  REQUIRE_MESSAGE(ran->ok(), ran->diagnostics);
  CHECK(ran->command.find("LD_PRELOAD=") != std::string::npos);
  REQUIRE(ran->artifact("stdout") != nullptr);
  CHECK_FALSE(ran->artifact("stdout")->content.empty());  // the program's own output
  // The recording is reported beside the program's stages, not among them.
  CHECK(chain.stage("ptx2cuda.capture") == nullptr);
  REQUIRE(chain.launch_recording.has_value());
  CHECK_MESSAGE(chain.launch_recording->ok(), chain.launch_recording->reason);
  CHECK(chain.launch_recording->seconds == 0);
  CHECK(std::filesystem::exists(dir.file("launches/launch_0/launch.txt")));

  PtxPairing pairing = pair_ptx_kernels(kProgram, chain, options, dir.file("pairs"));
  CHECK(pairing.capture.ok());
  CHECK_FALSE(std::filesystem::exists(dir.file("pairs/capture-build")));  // no run of its own
  REQUIRE(pairing.pairs.size() == 3);
  for (const PtxPair& pair : pairing.pairs) {
    CAPTURE(pair.kernel);
    CHECK(pair.ok);
    CHECK(pair.launch.launch_txt.find("kernel " + pair.kernel) != std::string::npos);
  }
}

TEST_CASE("ptx2cuda: a program that fails under the launch recorder keeps its verdict from a plain run") {
  if (!testing::nvcc_here() || !testing::nvidia_gpu_here("the program runs")) return;
  // Refuses to run with anything preloaded; passes without.
  const char* source = R"(#include <cstdio>
#include <cstdlib>
__global__ void fill(int* out) { out[threadIdx.x] = threadIdx.x; }
int main() {
  if (std::getenv("LD_PRELOAD")) return 3;
  int* out;
  cudaMalloc(&out, 32 * sizeof(int));
  fill<<<1, 32>>>(out);
  int host[32];
  cudaMemcpy(host, out, sizeof(host), cudaMemcpyDeviceToHost);
  std::printf("%d\n", host[31]);
  return host[31] == 31 ? 0 : 1;
}
)";
  TempDir dir;
  ChainOptions options = recording_options(dir, source);
  ChainResult chain = verify_test_program(dir, source, options);
  // The chain's side, with the real recorder (tests/verifier/launch_recording_test.cpp has the rest).
  CHECK(chain.ok);
  REQUIRE(chain.launch_recording.has_value());
  CHECK(chain.launch_recording->exit_code == std::optional<int>(3));

  PtxPairing pairing = pair_ptx_kernels(source, chain, options, dir.file("pairs"));
  CHECK(pairing.capture.status == "fail");
  REQUIRE(pairing.pairs.size() == 1);
  for (const StageResult& check : pairing.pairs[0].checks) {
    if (check.name == "ptx2cuda.launch") CHECK(check.reason.find("no recorded launch: the program's run with") == 0);
  }
}

TEST_CASE("ptx2cuda: a capture that verifier.stages leaves out does not run; the units still compile") {
  if (!testing::nvcc_here()) return;
  TempDir dir;
  ChainOptions options;
  ChainResult chain = verify_test_program(dir, kProgram, options);
  REQUIRE_MESSAGE(chain.stage("nvidia.ptx")->ok(), chain.stage("nvidia.ptx")->diagnostics);
  options.verifier.stages = {"nvidia", "ptx2cuda.compile"};
  PtxPairing pairing = pair_ptx_kernels(kProgram, chain, options, dir.file("pairs"));
  CHECK(pairing.capture.status == "skipped");
  CHECK(pairing.capture.reason == "disabled by verifier.stages");
  REQUIRE(pairing.pairs.size() == 3);
  for (const PtxPair& pair : pairing.pairs) {
    CAPTURE(pair.kernel);
    CHECK(pair.launch.launch_txt.empty());
    for (const StageResult& check : pair.checks) {
      if (check.name == "ptx2cuda.compile") CHECK(check.status == "ok");
    }
  }
}

TEST_CASE("ptx2cuda: the capture run that ran is stored as the program's stage, with no failure record") {
  TempDir dir;
  Database db = Database::open(dir.file("capture.db")).value();
  Taxonomy taxonomy = load_taxonomy(data_path("policies/taxonomy.json")).value();
  auto program = [&](const std::string& text) {
    Sample sample;
    sample.track = "cuda2hip";
    sample.origin = "template";
    sample.language = "cuda";
    sample.text = text;
    sample.id = insert_sample_if_absent(db, sample).value().id;
    return sample;
  };
  auto stored_with = [&](const Sample& sample, const std::string& status, double seconds) {
    VerifyOutput output;
    output.ptx_pairs = PtxPairing{};
    output.ptx_pairs->capture.name = "ptx2cuda.capture";
    output.ptx_pairs->capture.status = status;
    output.ptx_pairs->capture.seconds = seconds;
    output.ptx_pairs->capture.cpu_seconds = seconds / 2;
    output.ptx_pairs->capture.reason = status == "ok" ? "" : "the capture library found no launch";
    Status stored = store_derived_pairs(db, sample, output, taxonomy, "test-host");
    REQUIRE_MESSAGE(stored.ok(), stored.message());
  };
  auto capture_rows = [&](const Sample& sample, const std::string& column) {
    // One line per row.
    return query_text(db, "SELECT " + column + " FROM verification WHERE stage = 'ptx2cuda.capture' AND sample_id = '" +
                              sample.id + "'");
  };
  Sample captured = program("int main() { return 0; }\n");
  stored_with(captured, "ok", 0.75);
  CHECK(capture_rows(captured, "status") == "ok\n");
  CHECK(capture_rows(captured, "seconds") == "0.75\n");
  CHECK(capture_rows(captured, "cpu_seconds") == "0.375\n");
  Sample failed = program("int main() { return 1; }\n");
  stored_with(failed, "fail", 1.5);
  CHECK(capture_rows(failed, "status") == "fail\n");
  CHECK(capture_rows(failed, "reason") == "the capture library found no launch\n");
  CHECK(query_int(db, "SELECT count(*) FROM failure") == 0);  // a harness's miss, not the program's fault
  Sample not_run = program("int main() { return 2; }\n");
  stored_with(not_run, "skipped", 0);
  CHECK(capture_rows(not_run, "status").empty());
}

}  // namespace tailforge
