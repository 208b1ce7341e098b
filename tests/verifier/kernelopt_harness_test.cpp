// The kernelopt harness: its printed lines parsed; a candidate compiled alone by nvcc and linked
// with the harness, with timing recorded as skipped where no GPU exists, and its object's asks for
// streams or for the reference caught before it runs; and on an NVIDIA GPU, a right candidate
// timed, a wrong one and each way of faking speed caught and named: writing into the inputs,
// working on another stream, relying on the reference's answer already in the output buffer,
// returning a remembered answer for the fixed input, calling the reference, being honest only
// while watched (call counting), skipping work when the output looks done, a memo keyed on the
// buffers and a few sampled values, and a time the GPU cannot physically reach.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include "test_support/temp_dir.h"
#include "verifier/kernelopt/measure.h"
#include "verifier/kernelopt/pytorch_harness.h"
#include "test_support/tools_here.h"

namespace tailforge {
namespace {

// out[i] = a[i] + 2 b[i] over a length no block size divides.
KernelTask add_task() {
  KernelTask task;
  task.name = "add_scaled_test";
  task.operator_type = kSingleOperator;
  task.domain = "tensor";
  task.description = "out = a + 2b over 1,000,003 floats";
  task.inputs = {{"a", 1000003}, {"b", 1000003}};
  task.output = {"out", 1000003};
  task.reference_source = R"(constexpr long long kCount = 1000003;
__global__ void add_scaled(const float* a, const float* b, float* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < kCount) out[i] = a[i] + 2.0f * b[i];
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  add_scaled<<<(kCount + 127) / 128, 128, 0, stream>>>(inputs[0], inputs[1], output);
}
)";
  return task;
}

const char* kRight = R"(#include <cuda_runtime.h>
constexpr long long kCount = 1000003;
__global__ void add_scaled_stride(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kCount; i += (long long)gridDim.x * blockDim.x)
    out[i] = fmaf(2.0f, b[i], a[i]);
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  add_scaled_stride<<<1024, 256, 0, stream>>>(inputs[0], inputs[1], output);
}
)";

const char* kWrong = R"(constexpr long long kCount = 1000003;
__global__ void add_scaled_off(const float* a, const float* b, float* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < kCount) out[i] = a[i] + 2.0f * b[i] + (i == 77 ? 1.0f : 0.0f);
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  add_scaled_off<<<(kCount + 255) / 256, 256, 0, stream>>>(inputs[0], inputs[1], output);
}
)";

// Right answer, then scribbles over its first input.
const char* kWritesInput = R"(constexpr long long kCount = 1000003;
__global__ void add_then_clear(const float* a, const float* b, float* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < kCount) {
    out[i] = a[i] + 2.0f * b[i];
    const_cast<float*>(a)[i] = 0.0f;
  }
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  add_then_clear<<<(kCount + 255) / 256, 256, 0, stream>>>(inputs[0], inputs[1], output);
}
)";

// Right answer, computed on a stream of its own that nobody waits for, after a long spin.
const char* kOtherStream = R"(constexpr long long kCount = 1000003;
__global__ void slow_add(const float* a, const float* b, float* out) {
  long long start = clock64();
  while (clock64() - start < 200000000LL) {}
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kCount; i += (long long)gridDim.x * blockDim.x)
    out[i] = a[i] + 2.0f * b[i];
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t) {
  static cudaStream_t own = [] { cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); return s; }();
  slow_add<<<256, 256, 0, own>>>(inputs[0], inputs[1], output);
}
)";

// Writes nothing: right only where the buffer already holds the answer.
const char* kWritesNothing = R"(__global__ void nothing(float*) {}
void tf_launch(const float* const*, float* output, cudaStream_t stream) {
  nothing<<<1, 1, 0, stream>>>(output);
}
)";

// Computes once, then copies its remembered answer: right for the first input only.
const char* kRemembers = R"(constexpr long long kCount = 1000003;
__device__ float remembered[kCount];
__global__ void add_and_remember(const float* a, const float* b, float* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < kCount) remembered[i] = out[i] = a[i] + 2.0f * b[i];
}
__global__ void replay(float* out) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < kCount) out[i] = remembered[i];
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  static bool computed = false;
  if (!computed) add_and_remember<<<(kCount + 255) / 256, 256, 0, stream>>>(inputs[0], inputs[1], output);
  else replay<<<(kCount + 255) / 256, 256, 0, stream>>>(output);
  computed = true;
}
)";

const char* kCallsReference = R"(void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  tf_reference::tf_launch(inputs, output, stream);
}
)";

// The reference's name assembled by token pasting, out of the candidate's namespace: past the text
// check, but the reference has internal linkage in the harness's object.
const char* kAliasesReference = R"(#define JOIN(a, b) a##b
}  // leaves namespace tf_candidate
namespace JOIN(tf_ref, erence) { void tf_launch(const float* const*, float*, cudaStream_t); }
namespace tf_candidate {
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  JOIN(tf_ref, erence)::tf_launch(inputs, output, stream);
}
)";

// Right answer, on the legacy default stream (no stream created: the object asks for nothing).
const char* kDefaultStream = R"(constexpr long long kCount = 1000003;
__global__ void add_elsewhere(const float* a, const float* b, float* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kCount; i += (long long)gridDim.x * blockDim.x)
    out[i] = a[i] + 2.0f * b[i];
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t) {
  add_elsewhere<<<64, 256>>>(inputs[0], inputs[1], output);
}
)";

// Honest for its first four calls (every check), then does a quarter of the work.
const char* kCountsCalls = R"(constexpr long long kCount = 1000003;
__global__ void add_every(const float* a, const float* b, float* out, int step) {
  for (long long i = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * step; i < kCount; i += (long long)gridDim.x * blockDim.x * step)
    out[i] = a[i] + 2.0f * b[i];
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  static int calls = 0;
  add_every<<<1024, 256, 0, stream>>>(inputs[0], inputs[1], output, ++calls <= 4 ? 1 : 4);
}
)";

// Skips the work when the output already holds numbers (a poisoned buffer holds NaNs).
const char* kGuardsOutput = R"(constexpr long long kCount = 1000003;
__global__ void add_unless_done(const float* a, const float* b, float* out) {
  if (isfinite(out[0]) && isfinite(out[kCount / 2]) && isfinite(out[kCount - 1])) return;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kCount; i += (long long)gridDim.x * blockDim.x)
    out[i] = a[i] + 2.0f * b[i];
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  add_unless_done<<<1024, 256, 0, stream>>>(inputs[0], inputs[1], output);
}
)";

// Remembers its last answer with the buffers' addresses and three sampled input values, and
// replays it when they match.
const char* kFingerprintMemo = R"(constexpr long long kCount = 1000003;
__device__ float memo[kCount];
__device__ float seen[3];
__device__ int hit;
__global__ void decide(const float* a, const float* b, bool same_buffers) {
  float now[3] = {a[1], a[kCount / 2 + 1], b[kCount - 2]};
  hit = same_buffers && now[0] == seen[0] && now[1] == seen[1] && now[2] == seen[2];
  for (int k = 0; k < 3; ++k) seen[k] = now[k];
}
__global__ void add_or_replay(const float* a, const float* b, float* out) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kCount; i += (long long)gridDim.x * blockDim.x)
    out[i] = hit ? memo[i] : (memo[i] = a[i] + 2.0f * b[i]);
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  static const float* last[3] = {nullptr, nullptr, nullptr};
  bool same = last[0] == inputs[0] && last[1] == inputs[1] && last[2] == output;
  last[0] = inputs[0]; last[1] = inputs[1]; last[2] = output;
  decide<<<1, 1, 0, stream>>>(inputs[0], inputs[1], same);
  add_or_replay<<<1024, 256, 0, stream>>>(inputs[0], inputs[1], output);
}
)";

struct Bench {
  TempDir dir;
  VerifierOptions options;
  StageContext context;
  Bench() : context{options, detected_toolchains(), nullptr, nullptr, "", {}} {
    chmod(dir.path().c_str(), 0755);
    options.cache_dir = dir.file("cache");
    options.sm_targets = {"sm_80", "sm_90"};
    context.scratch_dir = dir.path();
  }
};

// The same operator as a KernelBench-style PyTorch module.
KernelTask pytorch_add_task() {
  KernelTask task = add_task();
  task.name = "add_scaled_pytorch_test";
  task.reference_language = "pytorch";
  task.reference_source = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, b):
        return a + 2.0 * b

def get_inputs():
    return [torch.randn(1000003), torch.randn(1000003)]

def get_init_inputs():
    return []
)";
  return task;
}

// A wrong candidate and each cheat are rejected with their category and never timed.
void check_every_cheat(Bench& bench, const KernelTask& task) {
  struct Case {
    const char* name;
    const char* source;
    const char* category;
  };
  const Case cases[] = {{"wrong", kWrong, "kernelopt.output_mismatch"},
                        {"writes its input", kWritesInput, "kernelopt.cheat.input_write"},
                        {"another stream", kOtherStream, "kernelopt.cheat.unsynchronized_stream"},
                        {"writes nothing", kWritesNothing, "kernelopt.cheat.output_reuse"},
                        {"remembers the answer", kRemembers, "kernelopt.cheat.fixed_input"}};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    KernelMeasurement measured = measure_candidate(bench.context, task, c.source);
    CHECK(measured.status == "fail");
    CHECK_MESSAGE(measured.category == c.category, measured.detail);
    CHECK_FALSE(measured.timed());
    CHECK(measured.speedup() == 0);
  }
}

}  // namespace

TEST_CASE("kernelopt harness: its lines are read into a verdict, the device, clocks and both timings") {
  std::string printed =
      "warming up\n"
      "kernelopt device NVIDIA H100 80GB HBM3\n"
      "kernelopt clocks sm_khz=1980000 memory_khz=2619000\n"
      "kernelopt check fixed_input mismatches=0 untouched=0 max_error=2.5e-07\n"
      "kernelopt time reference median_ms=0.5 spread=0.012 trials=100\n"
      "kernelopt time candidate median_ms=0.25 spread=0.020 trials=150 attempts=2\n"
      "kernelopt calls checked=150 wrong=0 pending_reference_ms=0.004 pending_candidate_ms=0.005\n"
      "kernelopt roofline bound_ms=0.05 bandwidth_gbs=3352.3 peak_gflops=66908.2 read_bytes=167772160 flops=0\n"
      "kernelopt verdict ok\n";
  Result<HarnessReport> report = parse_harness_output(printed);
  REQUIRE(report.ok());
  CHECK(report->device == "NVIDIA H100 80GB HBM3");
  CHECK(report->sm_clock_khz == 1980000);
  CHECK(report->memory_clock_khz == 2619000);
  CHECK(report->correct());
  CHECK(report->max_error == doctest::Approx(2.5e-7));
  REQUIRE(report->reference);
  REQUIRE(report->candidate);
  CHECK(report->reference->median_ms == doctest::Approx(0.5));
  CHECK(report->candidate->spread == doctest::Approx(0.02));
  CHECK(report->candidate->trials == 150);
  CHECK(report->candidate->attempts == 2);
  CHECK(report->reference->attempts == 1);
  CHECK(report->calls_checked == 150);
  CHECK(report->roofline_ms == doctest::Approx(0.05));
  CHECK(report->bandwidth_gbs == doctest::Approx(3352.3));
  CHECK(report->roofline_fraction() == doctest::Approx(0.2));

  Result<HarnessReport> cheat = parse_harness_output("kernelopt verdict cheat.input_write input 0 changed in 5 of 9 elements\n");
  REQUIRE(cheat.ok());
  CHECK(cheat->verdict == "cheat.input_write");
  CHECK(cheat->detail == "input 0 changed in 5 of 9 elements");
  CHECK_FALSE(cheat->correct());
  CHECK_FALSE(parse_harness_output("kernelopt device X\n").ok());
}

TEST_CASE("kernelopt harness: the candidate is a unit of its own; the harness's reference has internal linkage") {
  std::string candidate = candidate_unit(kRight);
  size_t opened = candidate.find("namespace tf_candidate {");
  REQUIRE(opened != std::string::npos);
  CHECK(candidate.find("#include <cuda_runtime.h>") < opened);
  CHECK(candidate.find("#include <cuda_runtime.h>", opened) == std::string::npos);
  CHECK(candidate.find("add_scaled_stride") > opened);
  CHECK(candidate.find("tf_reference") == std::string::npos);

  std::string program = harness_program(add_task());
  CHECK(program.find("add_scaled_stride") == std::string::npos);
  size_t anonymous = program.find("namespace {\nnamespace tf_reference {");
  REQUIRE(anonymous != std::string::npos);
  CHECK(program.find("void tf_launch(const float* const* inputs, float* output, cudaStream_t stream);") < anonymous);
  CHECK(program.find("kOutputElements = 1000003LL") != std::string::npos);
  CHECK(program.find("kMustReadBytes = 8000024LL") != std::string::npos);
  CHECK(names_reference(kCallsReference));
  CHECK_FALSE(names_reference(kRight));
  CHECK_FALSE(names_reference(kAliasesReference));
}

TEST_CASE("kernelopt harness: a candidate object that asks for a stream of its own or for the reference is caught "
          "before it runs") {
  Bench bench;
  if (!testing::tools_here({"nvcc", "nm"})) return;
  KernelMeasurement stream = measure_candidate(bench.context, add_task(), kOtherStream);
  CHECK(stream.status == "fail");
  CHECK_MESSAGE(stream.category == "kernelopt.cheat.unsynchronized_stream", stream.detail);
  CHECK(stream.detail.find("cudaStreamCreateWithFlags") != std::string::npos);
  KernelMeasurement alias = measure_candidate(bench.context, add_task(), kAliasesReference);
  CHECK(alias.status == "fail");
  CHECK_MESSAGE(alias.category == "kernelopt.cheat.reference_call", alias.detail);
  CHECK(alias.detail.find("tf_reference::tf_launch") != std::string::npos);
  for (const KernelMeasurement* caught : {&stream, &alias}) {
    REQUIRE(!caught->stages.empty());
    CHECK(caught->stages.back().name == "kernelopt.inspect");
  }
  // An honest candidate's object asks for nothing of the kind.
  KernelMeasurement right = measure_candidate(bench.context, add_task(), kRight);
  CHECK_MESSAGE(right.status != "fail", right.category << ": " << right.detail);
}

TEST_CASE("kernelopt harness: a candidate calling the reference is a cheat before anything is compiled") {
  Bench bench;
  KernelMeasurement measured = measure_candidate(bench.context, add_task(), kCallsReference);
  CHECK(measured.status == "fail");
  CHECK(measured.category == "kernelopt.cheat.reference_call");
  CHECK(measured.stages.empty());
}

TEST_CASE("kernelopt harness: nvcc builds reference and candidate into one program; without a GPU the timing is "
          "skipped with the reason") {
  Bench bench;
  if (!testing::nvcc_here()) return;
  KernelMeasurement measured = measure_candidate(bench.context, add_task(), kRight);
  REQUIRE(!measured.stages.empty());
  CHECK(measured.stages[0].name == "kernelopt.candidate");
  CHECK_MESSAGE(measured.stages[0].ok(), measured.stages[0].diagnostics);
  if (bench.context.toolchains.has_gpu("nvidia")) {
    CHECK_MESSAGE(measured.status == "ok", measured.category << ": " << measured.detail);
    return;
  }
  CHECK(measured.status == "skipped");
  REQUIRE(measured.stages.size() >= 3);
  const StageResult& linked = measured.stages[measured.stages.size() - 2];
  CHECK(linked.name == "kernelopt.exe");
  CHECK_MESSAGE(linked.ok(), linked.diagnostics);
  CHECK(measured.stages.back().name == "kernelopt.run");
  CHECK(measured.stages.back().status == "skipped");
  CHECK(measured.detail.find("timing skipped: ") == 0);
  CHECK(measured.stages.back().reason.find("GPU") != std::string::npos);

  // A candidate without the entry point fails at the link, one that does not parse at its compile.
  KernelMeasurement broken = measure_candidate(bench.context, add_task(), "void tf_launch(int) {}\n");
  CHECK(broken.status == "fail");
  CHECK_MESSAGE(broken.category == "kernelopt.compile.link", broken.detail);
  KernelMeasurement unparsed = measure_candidate(bench.context, add_task(), "void tf_launch(const float* const*, "
                                                 "float* output, cudaStream_t) { int x = ; }\n");
  CHECK(unparsed.status == "fail");
  CHECK_MESSAGE(unparsed.category == "kernelopt.compile.syntax", unparsed.detail);
  CHECK(unparsed.stages.back().name == "kernelopt.candidate");
}

TEST_CASE("kernelopt harness: on a GPU a right candidate is timed and a wrong one and every cheat are caught") {
  Bench bench;
  if (!testing::nvcc_here() || !testing::nvidia_gpu_here()) return;
  KernelMeasurement right = measure_candidate(bench.context, add_task(), kRight);
  REQUIRE_MESSAGE(right.status == "ok", right.category << ": " << right.detail);
  REQUIRE(right.timed());
  CHECK(right.report->device.size() > 0);
  CHECK(right.report->reference->median_ms > 0);
  CHECK(right.report->candidate->median_ms > 0);
  CHECK(right.speedup() > 0);
  MESSAGE("right candidate on " << right.report->device << ": speedup " << right.speedup() << ", spreads "
                                << right.report->reference->spread << " / " << right.report->candidate->spread);

  CHECK(right.report->calls_checked >= 150);
  CHECK(right.report->roofline_ms > 0);
  CHECK(right.report->roofline_fraction() > 0);
  CHECK(right.report->roofline_fraction() <= 1.25);
  MESSAGE("roofline " << right.report->roofline_ms << " ms (" << right.report->bandwidth_gbs << " GB/s): fraction "
                      << right.report->roofline_fraction());

  check_every_cheat(bench, add_task());
}

TEST_CASE("kernelopt harness: on a GPU, candidates honest only while watched, or faster than physics, are caught") {
  Bench bench;
  if (!testing::nvcc_here() || !testing::nvidia_gpu_here()) return;
  struct Case {
    const char* name;
    const char* source;
    const char* category;
  };
  const Case cases[] = {{"the legacy default stream", kDefaultStream, "kernelopt.cheat.unsynchronized_stream"},
                        {"counts its calls", kCountsCalls, "kernelopt.cheat.stateful"},
                        {"guards its output", kGuardsOutput, "kernelopt.cheat.stateful"},
                        {"a memo on addresses and sampled values", kFingerprintMemo, "kernelopt.cheat.stateful"}};
  for (const Case& c : cases) {
    CAPTURE(c.name);
    KernelMeasurement measured = measure_candidate(bench.context, add_task(), c.source);
    CHECK(measured.status == "fail");
    CHECK_MESSAGE(measured.category == c.category, measured.detail);
    CHECK(measured.speedup() == 0);
    MESSAGE(c.name << ": " << measured.category << ": " << measured.detail);
  }
  // A task that says it must read a thousand times what it does: the honest candidate's time is
  // then beyond the physical limit.
  KernelTask inflated = add_task();
  inflated.read_bytes = inflated.must_read_bytes() * 1000;
  KernelMeasurement beyond = measure_candidate(bench.context, inflated, kRight);
  CHECK(beyond.status == "fail");
  CHECK_MESSAGE(beyond.category == "kernelopt.cheat.beyond_roofline", beyond.detail);
  MESSAGE("beyond the roofline: " << beyond.detail);
}

TEST_CASE("kernelopt harness: a PyTorch reference measures the candidate built as a library, with every check") {
  std::string entry = pytorch_entry_unit(pytorch_add_task());
  CHECK(entry.find("extern \"C\" int tf_candidate_entry") != std::string::npos);
  std::string script = pytorch_harness_script(pytorch_add_task(), {});
  CHECK(script.find("INPUT_ELEMENTS = [1000003, 1000003]") != std::string::npos);
  CHECK(script.find("OUTPUT_ELEMENTS = 1000003") != std::string::npos);
  CHECK(script.find("READ_BYTES = 8000024") != std::string::npos);

  Bench bench;
  if (!testing::tools_here({"nvcc", "nm"})) return;
  // The candidate's object is inspected before the library is linked, as on the CUDA path.
  KernelMeasurement stream = measure_candidate(bench.context, pytorch_add_task(), kOtherStream);
  CHECK(stream.status == "fail");
  CHECK_MESSAGE(stream.category == "kernelopt.cheat.unsynchronized_stream", stream.detail);
  REQUIRE(!stream.stages.empty());
  CHECK(stream.stages.back().name == "kernelopt.inspect");
  KernelMeasurement missing_entry = measure_candidate(bench.context, pytorch_add_task(), "void tf_launch(int) {}\n");
  CHECK_MESSAGE(missing_entry.category == "kernelopt.compile.link", missing_entry.detail);
  std::string missing = !bench.context.toolchains.has_gpu("nvidia") ? "no NVIDIA GPU" : pytorch_unavailable_reason();
  if (!missing.empty()) {
    KernelMeasurement skipped = measure_candidate(bench.context, pytorch_add_task(), kRight);
    REQUIRE(skipped.stages.size() == 4);
    for (size_t i = 0; i < 3; ++i) CHECK_MESSAGE(skipped.stages[i].ok(), skipped.stages[i].diagnostics);
    CHECK(skipped.stages[0].name == "kernelopt.candidate");
    CHECK(skipped.stages[1].name == "kernelopt.inspect");
    CHECK(skipped.stages[2].name == "kernelopt.exe");
    CHECK(skipped.status == "skipped");
    CHECK(skipped.detail.find("timing skipped: ") == 0);
    testing::skip(bench.context.toolchains.has_gpu("nvidia") ? testing::Missing::pytorch : testing::Missing::gpu,
                  "the PyTorch run needs a GPU and torch: " + skipped.detail);
    return;
  }
  KernelMeasurement right = measure_candidate(bench.context, pytorch_add_task(), kRight);
  REQUIRE_MESSAGE(right.status == "ok", right.category << ": " << right.detail << "\n"
                                                         << (right.stages.size() > 1 ? right.stages[1].diagnostics : ""));
  REQUIRE(right.timed());
  MESSAGE("PyTorch reference on " << right.report->device << ": speedup " << right.speedup() << ", spreads "
                                  << right.report->reference->spread << " / " << right.report->candidate->spread);
  check_every_cheat(bench, pytorch_add_task());
}

}  // namespace tailforge
