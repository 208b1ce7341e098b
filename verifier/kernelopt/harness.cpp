#include "verifier/kernelopt/harness.h"

#include <cstdlib>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace tailforge {
namespace {

// Splits a unit into its #include lines (hoisted to the top of the program, where a namespace
// cannot enclose them) and the rest.
void split_includes(const std::string& unit, std::set<std::string>& includes, std::string& body) {
  std::istringstream lines(unit);
  for (std::string line; std::getline(lines, line);) {
    size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 8, "#include") == 0) {
      includes.insert(line.substr(first));
      body += "\n";  // keeps the #line numbering true
    } else {
      body += line + "\n";
    }
  }
}

// A literal C++ reads as a floating-point number (a "f" suffix may follow).
std::string float_literal(double value) { return fmt::format("{:#.9g}", value); }

// The physical limit of one call, shared by this program and the PyTorch harness's library
// (roofline_code). The task's figures come before it as constants.
constexpr const char* kRooflineFunction = R"cuda(
namespace tf_harness {

// The physical limit of one call (ms): the bytes the task must read at the GPU's peak memory
// bandwidth (the L2 is flushed before each call, so reads come from memory) or its FLOPs at the
// peak arithmetic rate (FP32 lanes, or for matrix products the TF32 tensor cores, 8 times that),
// whichever is slower; 0 when the device does not say.
double roofline_ms(double* bandwidth_gbs, double* peak_gflops) {
  int memory_khz = 0, bus_bits = 0, sm_khz = 0, sms = 0, major = 0, minor = 0;
  cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0);
  cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  int fp32_lanes = (major == 8 && minor == 0) || major < 8 ? 64 : 128;
  *bandwidth_gbs = 2.0 * memory_khz * 1e3 * (bus_bits / 8.0) / 1e9;  // double data rate
  *peak_gflops = 2.0 * fp32_lanes * (double)sms * sm_khz * 1e3 / 1e9 * (kTensorCorePeak ? 8.0 : 1.0);
  double memory_ms = *bandwidth_gbs > 0 ? (double)kMustReadBytes / (*bandwidth_gbs * 1e9) * 1e3 : 0;
  double compute_ms = *peak_gflops > 0 ? kFlops / (*peak_gflops * 1e9) * 1e3 : 0;
  return std::max(memory_ms, compute_ms);
}

}  // namespace tf_harness
)cuda";

// The fixed part of the program. It only uses the runtime API, and prints "kernelopt" lines.
constexpr const char* kHarnessMain = R"cuda(
namespace tf_harness {

bool failed(cudaError_t error, const char* what, const char* verdict = "launch_error") {
  if (error == cudaSuccess) return false;
  std::printf("kernelopt verdict %s %s: %s\n", verdict, what, cudaGetErrorString(error));
  return true;
}

__global__ void poison_kernel(float* data, long long count) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  for (; i < count; i += (long long)gridDim.x * blockDim.x) data[i] = __uint_as_float(kPoison);
}

// The timed calls' inputs, made on the device from a seed (a fresh set for every call, no copy).
__device__ unsigned mix_bits(unsigned long long x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL; x ^= x >> 33;
  return (unsigned)x;
}

__global__ void fill_kernel(float* data, long long count, unsigned long long seed) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  for (; i < count; i += (long long)gridDim.x * blockDim.x) {
    data[i] = kInputLow + (kInputHigh - kInputLow) * (float)(mix_bits(seed * 0x9E3779B97F4A7C15ULL + (unsigned long long)i) >> 8) / 16777216.0f;
  }
}

// Adds to *wrong the outputs of `got` not within the tolerance of `want` (poison is never within it).
__global__ void compare_kernel(const float* got, const float* want, long long count, unsigned long long* wrong) {
  unsigned long long local = 0;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  for (; i < count; i += (long long)gridDim.x * blockDim.x) {
    double error = fabs((double)got[i] - (double)want[i]);
    if (!(error <= kTolerance * (1.0 + fabs((double)want[i])))) ++local;
  }
  if (local) atomicAdd(wrong, local);
}

bool is_poison(float value) {
  unsigned bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits == kPoison;
}

void fill_inputs(unsigned seed, std::vector<std::vector<float>>& host) {
  for (int b = 0; b < kInputCount; ++b) {
    unsigned state = seed * 2654435761u + 0x9e3779b9u * (unsigned)(b + 1);
    if (state == 0) state = 1;
    host[b].resize(kInputElements[b]);
    for (long long i = 0; i < kInputElements[b]; ++i) {
      state ^= state << 13; state ^= state >> 17; state ^= state << 5;
      host[b][i] = kInputLow + (kInputHigh - kInputLow) * (float)(state >> 8) / 16777216.0f;
    }
  }
}

struct Buffers {
  float* inputs[kInputCount > 0 ? kInputCount : 1] = {};
  float* reference_out = nullptr;
  float* candidate_out = nullptr;
  cudaStream_t stream = nullptr;
};

struct Check {
  bool ok = false;            // no error of any kind
  bool launch_error = false;
  long long mismatches = 0, untouched = 0, first = -1;
  float got = 0, want = 0;
  double max_error = 0;
  const char* cheat = nullptr;
  char detail[512] = {0};
};

bool upload(const std::vector<std::vector<float>>& host, Buffers& buffers) {
  for (int b = 0; b < kInputCount; ++b) {
    if (failed(cudaMemcpy(buffers.inputs[b], host[b].data(), host[b].size() * sizeof(float), cudaMemcpyHostToDevice),
               "upload input"))
      return false;
  }
  return true;
}

bool poison(float* buffer, cudaStream_t stream) {
  poison_kernel<<<1024, 256, 0, stream>>>(buffer, kOutputElements);
  return !failed(cudaStreamSynchronize(stream), "poison output");
}

// Runs the reference into its buffer and downloads the answer.
bool reference_answer(Buffers& buffers, std::vector<float>& want) {
  if (!poison(buffers.reference_out, buffers.stream)) return false;
  tf_reference::tf_launch(buffers.inputs, buffers.reference_out, buffers.stream);
  if (failed(cudaGetLastError(), "reference launch", "reference_error") ||
      failed(cudaDeviceSynchronize(), "reference run", "reference_error"))
    return false;
  if (failed(cudaMemcpy(want.data(), buffers.reference_out, want.size() * sizeof(float), cudaMemcpyDeviceToHost),
             "download reference"))
    return false;
  long long unwritten = 0;
  for (float value : want) unwritten += is_poison(value);
  if (unwritten > 0) {
    std::printf("kernelopt verdict reference_error the reference left %lld of %lld outputs unwritten\n", unwritten,
                kOutputElements);
    return false;
  }
  return true;
}

// Runs the candidate into `out` (already prepared by the caller) and compares with `want`.
Check candidate_check(Buffers& buffers, float* out, const std::vector<std::vector<float>>& host,
                      const std::vector<float>& want) {
  Check check;
  std::vector<float> seen(kOutputElements), settled(kOutputElements);
  tf_candidate::tf_launch(buffers.inputs, out, buffers.stream);
  if (failed(cudaGetLastError(), "candidate launch")) { check.launch_error = true; return check; }
  // What a caller that synchronizes the stream it passed sees...
  if (failed(cudaMemcpyAsync(seen.data(), out, seen.size() * sizeof(float), cudaMemcpyDeviceToHost, buffers.stream),
             "download candidate") ||
      failed(cudaStreamSynchronize(buffers.stream), "candidate run")) {
    check.launch_error = true;
    return check;
  }
  // ...and what is there once everything on the device has finished.
  if (failed(cudaDeviceSynchronize(), "candidate run") ||
      failed(cudaMemcpy(settled.data(), out, settled.size() * sizeof(float), cudaMemcpyDeviceToHost),
             "download candidate")) {
    check.launch_error = true;
    return check;
  }
  for (int b = 0; b < kInputCount; ++b) {
    std::vector<float> after(host[b].size());
    if (failed(cudaMemcpy(after.data(), buffers.inputs[b], after.size() * sizeof(float), cudaMemcpyDeviceToHost),
               "download input")) {
      check.launch_error = true;
      return check;
    }
    if (std::memcmp(after.data(), host[b].data(), after.size() * sizeof(float)) != 0) {
      long long changed = 0;
      for (size_t i = 0; i < after.size(); ++i) changed += std::memcmp(&after[i], &host[b][i], sizeof(float)) != 0;
      check.cheat = "cheat.input_write";
      std::snprintf(check.detail, sizeof check.detail, "input %d changed in %lld of %zu elements", b, changed,
                    after.size());
      return check;
    }
  }
  if (std::memcmp(seen.data(), settled.data(), seen.size() * sizeof(float)) != 0) {
    long long late = 0;
    for (long long i = 0; i < kOutputElements; ++i) late += std::memcmp(&seen[i], &settled[i], sizeof(float)) != 0;
    check.cheat = "cheat.unsynchronized_stream";
    std::snprintf(check.detail, sizeof check.detail,
                  "%lld of %lld outputs were still changing after the launch stream was synchronized: work runs "
                  "on another stream", late, kOutputElements);
    return check;
  }
  for (long long i = 0; i < kOutputElements; ++i) {
    float got = settled[i], expected = want[i];
    if (is_poison(got)) ++check.untouched;
    double error = std::fabs((double)got - (double)expected);
    bool bad = !(error <= kTolerance * (1.0 + std::fabs((double)expected)));
    if (std::isfinite(error) && error > check.max_error) check.max_error = error;
    if (bad) {
      if (check.first < 0) { check.first = i; check.got = got; check.want = expected; }
      ++check.mismatches;
    }
  }
  check.ok = check.mismatches == 0;
  return check;
}

void print_check(const char* label, const Check& check);

// Uploads `host`, computes the reference's answer into `want`, runs the candidate into a poisoned
// buffer of its own and prints the check. Returns 1 to stop with an error, 0 to stop with a
// cheat's verdict printed, -1 to go on with `check`.
int checked_run(const char* label, Buffers& buffers, const std::vector<std::vector<float>>& host,
                std::vector<float>& want, Check& check) {
  if (!upload(host, buffers) || !reference_answer(buffers, want)) return 1;
  if (!poison(buffers.candidate_out, buffers.stream)) return 1;
  check = candidate_check(buffers, buffers.candidate_out, host, want);
  print_check(label, check);
  if (check.launch_error) return 1;
  if (check.cheat) {
    std::printf("kernelopt verdict %s %s\n", check.cheat, check.detail);
    return 0;
  }
  return -1;
}

void print_check(const char* label, const Check& check) {
  std::printf("kernelopt check %s mismatches=%lld untouched=%lld max_error=%.9g", label, check.mismatches,
              check.untouched, check.max_error);
  if (check.first >= 0) std::printf(" first=%lld got=%.9g want=%.9g", check.first, check.got, check.want);
  std::printf("\n");
}

// Milliseconds of one launch from a cold L2: the flush buffer is overwritten first, so every
// trial starts from the same cache state whatever ran before (a working set near the L2's size
// otherwise times fast or slow depending on what the previous launch left behind). `pending_ms`:
// how long a device-wide synchronize took once the stop event had passed, the work the launch left
// running on streams the events do not see.
double time_launch(bool candidate, Buffers& buffers, void* flush, size_t flush_bytes, int trial, cudaEvent_t start,
                   cudaEvent_t stop, double* pending_ms = nullptr) {
  float* out = candidate ? buffers.candidate_out : buffers.reference_out;
  cudaMemsetAsync(flush, trial & 0xff, flush_bytes, buffers.stream);
  cudaEventRecord(start, buffers.stream);
  if (candidate) tf_candidate::tf_launch(buffers.inputs, out, buffers.stream);
  else tf_reference::tf_launch(buffers.inputs, out, buffers.stream);
  cudaEventRecord(stop, buffers.stream);
  cudaEventSynchronize(stop);
  auto settled = std::chrono::steady_clock::now();
  cudaDeviceSynchronize();
  if (pending_ms) *pending_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - settled).count();
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  return ms;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Times both kernels, every timed call on fresh inputs and checked against the reference's answer
// to the same inputs. Even calls find their output poisoned, odd calls find the previous call's
// answer (right for other inputs), so no call can tell it is watched. Prints the "time" lines and,
// when a call was wrong or left work running, the verdict; false when it printed a verdict.
bool time_both(Buffers& buffers, bool* verdict_printed) {
  *verdict_printed = false;
  cudaEvent_t start, stop;
  if (failed(cudaEventCreate(&start), "event") || failed(cudaEventCreate(&stop), "event")) return false;
  int l2_bytes = 0;
  cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, 0);
  size_t flush_bytes = std::max<size_t>(size_t(2) * (size_t)l2_bytes, size_t(64) << 20);
  void* flush = nullptr;
  unsigned long long* wrong = nullptr;
  if (failed(cudaMalloc(&flush, flush_bytes), "allocate the L2 flush buffer") ||
      failed(cudaMalloc(&wrong, sizeof(unsigned long long)), "allocate the check counter"))
    return false;
  for (int which = 0; which < 2; ++which) {
    for (int w = 0; w < 3; ++w) time_launch(which == 1, buffers, flush, flush_bytes, w, start, stop);
  }
  // A measurement whose repetitions disagree by more than kSpreadTarget (something else ran on
  // the GPU, clocks moved) is taken again, up to kTimingAttempts times; the last one is reported
  // with the number of attempts.
  double median_ms[2] = {0, 0}, spread[2] = {0, 0};
  int trials_done[2] = {0, 0}, attempt = 0;
  long long calls = 0, wrong_calls = 0;
  unsigned long long wrong_outputs = 0;
  std::vector<double> pending[2];
  while (attempt < kTimingAttempts) {
    ++attempt;
    std::vector<double> all[2], repetition_medians[2];
    for (int r = 0; r < kRepetitions; ++r) {
      std::vector<double> trials[2];
      for (int t = 0; t < kTrials; ++t) {
        unsigned long long seed = 0x7f4a7c15ULL + (unsigned long long)attempt * 1000003ULL + (unsigned long long)(r * kTrials + t);
        for (int b = 0; b < kInputCount; ++b) fill_kernel<<<1024, 256, 0, buffers.stream>>>(buffers.inputs[b], kInputElements[b], seed * 131 + b);
        poison_kernel<<<1024, 256, 0, buffers.stream>>>(buffers.reference_out, kOutputElements);
        if (t % 2 == 0) poison_kernel<<<1024, 256, 0, buffers.stream>>>(buffers.candidate_out, kOutputElements);
        if (failed(cudaMemsetAsync(wrong, 0, sizeof(unsigned long long), buffers.stream), "check counter")) return false;
        for (int which = 0; which < 2; ++which) {
          double waited = 0;
          trials[which].push_back(time_launch(which == 1, buffers, flush, flush_bytes, t, start, stop, &waited));
          pending[which].push_back(waited);
        }
        compare_kernel<<<1024, 256, 0, buffers.stream>>>(buffers.candidate_out, buffers.reference_out, kOutputElements, wrong);
        unsigned long long wrong_here = 0;
        if (failed(cudaMemcpy(&wrong_here, wrong, sizeof wrong_here, cudaMemcpyDeviceToHost), "check a timed call")) return false;
        ++calls;
        if (wrong_here > 0) ++wrong_calls;
        wrong_outputs += wrong_here;
      }
      for (int which = 0; which < 2; ++which) {
        all[which].insert(all[which].end(), trials[which].begin(), trials[which].end());
        repetition_medians[which].push_back(median(trials[which]));
      }
    }
    if (failed(cudaGetLastError(), "timing") || failed(cudaDeviceSynchronize(), "timing")) return false;
    for (int which = 0; which < 2; ++which) {
      median_ms[which] = median(all[which]);
      auto [low, high] = std::minmax_element(repetition_medians[which].begin(), repetition_medians[which].end());
      spread[which] = median_ms[which] > 0 ? (*high - *low) / median_ms[which] : 0.0;
      trials_done[which] = (int)all[which].size();
    }
    if (wrong_calls > 0 || (spread[0] < kSpreadTarget && spread[1] < kSpreadTarget)) break;
  }
  for (int which = 0; which < 2; ++which) {
    std::printf("kernelopt time %s median_ms=%.9g spread=%.6f trials=%d attempts=%d\n", which ? "candidate" : "reference",
                median_ms[which], spread[which], trials_done[which], attempt);
  }
  double pending_reference = median(pending[0]), pending_candidate = median(pending[1]);
  std::printf("kernelopt calls checked=%lld wrong=%lld pending_reference_ms=%.6f pending_candidate_ms=%.6f\n", calls,
              wrong_calls, pending_reference, pending_candidate);
  double bandwidth_gbs = 0, peak_gflops = 0;
  double bound_ms = roofline_ms(&bandwidth_gbs, &peak_gflops);
  std::printf("kernelopt roofline bound_ms=%.9g bandwidth_gbs=%.1f peak_gflops=%.1f read_bytes=%lld flops=%.6g\n",
              bound_ms, bandwidth_gbs, peak_gflops, (long long)kMustReadBytes, (double)kFlops);
  cudaFree(flush);
  cudaFree(wrong);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (wrong_calls > 0) {
    std::printf("kernelopt verdict cheat.stateful right on every check, wrong on %lld of %lld timed calls (%llu outputs "
                "in all; each had fresh inputs, half of them the previous answer in the output): its answers "
                "depend on earlier calls\n", wrong_calls, calls, wrong_outputs);
    *verdict_printed = true;
  } else if (pending_candidate > pending_reference + std::max(0.5 * median_ms[1], 0.01)) {
    std::printf("kernelopt verdict cheat.unsynchronized_stream a device-wide synchronize after each call's stop event "
                "still waited %.6f ms (the reference's %.6f ms) for a call the events timed at %.6f ms: work runs on "
                "streams the harness does not time\n", pending_candidate, pending_reference, median_ms[1]);
    *verdict_printed = true;
  } else if (bound_ms > 0 && median_ms[1] < kRooflineMargin * bound_ms) {
    std::printf("kernelopt verdict cheat.beyond_roofline %.6f ms a call, where reading %lld bytes at %.0f GB/s and "
                "%.6g FLOPs at %.0f GFLOP/s take at least %.6f ms: faster than the GPU can be\n", median_ms[1],
                (long long)kMustReadBytes, bandwidth_gbs, (double)kFlops, peak_gflops, bound_ms);
    *verdict_printed = true;
  }
  return true;
}

}  // namespace tf_harness

int main() {
  using namespace tf_harness;
  cudaDeviceProp properties;
  if (failed(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties")) return 1;
  std::printf("kernelopt device %s\n", properties.name);
  int sm_khz = 0, memory_khz = 0;
  cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, 0);
  cudaDeviceGetAttribute(&memory_khz, cudaDevAttrMemoryClockRate, 0);
  std::printf("kernelopt clocks sm_khz=%d memory_khz=%d\n", sm_khz, memory_khz);

  Buffers buffers;
  if (failed(cudaStreamCreateWithFlags(&buffers.stream, cudaStreamNonBlocking), "stream")) return 1;
  for (int b = 0; b < kInputCount; ++b) {
    if (failed(cudaMalloc(&buffers.inputs[b], kInputElements[b] * sizeof(float)), "allocate input")) return 1;
  }
  if (failed(cudaMalloc(&buffers.reference_out, kOutputElements * sizeof(float)), "allocate output") ||
      failed(cudaMalloc(&buffers.candidate_out, kOutputElements * sizeof(float)), "allocate output"))
    return 1;

  std::vector<std::vector<float>> host(kInputCount);
  std::vector<float> want(kOutputElements);
  fill_inputs(kCheckSeed, host);
  Check fixed;
  if (int stop = checked_run("fixed_input", buffers, host, want, fixed); stop >= 0) return stop;
  if (!fixed.ok) {
    if (fixed.untouched > 0) {
      // The allocator's case: the candidate's output lands where the reference's answer is.
      if (!upload(host, buffers) || !reference_answer(buffers, want)) return 1;
      Check reused = candidate_check(buffers, buffers.reference_out, host, want);
      print_check("reused_buffer", reused);
      if (reused.launch_error) return 1;
      if (reused.ok) {
        std::printf("kernelopt verdict cheat.output_reuse right only when its output buffer already holds the "
                    "reference's answer: %lld of %lld outputs never written\n", fixed.untouched, kOutputElements);
        return 0;
      }
    }
    std::printf("kernelopt verdict output_mismatch %lld of %lld outputs differ (first at %lld: %.9g, want %.9g; "
                "%lld never written)\n", fixed.mismatches, kOutputElements, fixed.first, fixed.got, fixed.want,
                fixed.untouched);
    return 0;
  }

  std::vector<std::vector<float>> fixed_host = host;
  std::vector<float> fixed_want = want;
  fill_inputs(kFreshSeed, host);
  Check fresh;
  if (int stop = checked_run("fresh_input", buffers, host, want, fresh); stop >= 0) return stop;
  if (!fresh.ok) {
    // Wrong on the fixed input now too, where it was right on its first call: it changed with the calls.
    if (!upload(fixed_host, buffers) || !poison(buffers.candidate_out, buffers.stream)) return 1;
    Check again = candidate_check(buffers, buffers.candidate_out, fixed_host, fixed_want);
    print_check("fixed_input_again", again);
    if (again.launch_error) return 1;
    if (!again.ok && !again.cheat) {
      std::printf("kernelopt verdict cheat.stateful right on its first call, wrong on a later call with the same "
                  "input: %lld of %lld outputs differ\n", again.mismatches, kOutputElements);
      return 0;
    }
    std::printf("kernelopt verdict cheat.fixed_input right on the fixed input, wrong on fresh input: %lld of %lld "
                "outputs differ (first at %lld: %.9g, want %.9g)\n", fresh.mismatches, kOutputElements, fresh.first,
                fresh.got, fresh.want);
    return 0;
  }
  // The fresh input again with one element in a hundred changed: a memo keyed on the buffers'
  // addresses or on a few sampled values answers for the unchanged input.
  long long changed = 0;
  for (int b = 0; b < kInputCount; ++b) {
    for (size_t i = 0; i < host[b].size(); ++i) {
      unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(b * 40503u + 0x5bd1e995u);
      h ^= h >> 15; h *= 0x2c1b3c6du; h ^= h >> 12;
      if (h % 100 != 0) continue;
      host[b][i] = kInputLow + kInputHigh - host[b][i];  // mirrored inside the task's range
      ++changed;
    }
  }
  Check nudged;
  if (int stop = checked_run("nudged_input", buffers, host, want, nudged); stop >= 0) return stop;
  if (!nudged.ok) {
    std::printf("kernelopt verdict cheat.stateful right on the fresh input, wrong once %lld of its elements changed in "
                "the same buffers: %lld of %lld outputs differ (first at %lld: %.9g, want %.9g)\n", changed,
                nudged.mismatches, kOutputElements, nudged.first, nudged.got, nudged.want);
    return 0;
  }
  if (kTimeKernels) {
    bool verdict_printed = false;
    if (!time_both(buffers, &verdict_printed)) return 1;
    if (verdict_printed) return 0;
  }
  std::printf("kernelopt verdict ok\n");
  return 0;
}
)cuda";

double field(const std::string& line, const std::string& key) {
  size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return 0;
  return std::atof(line.c_str() + at + key.size() + 2);
}

}  // namespace

bool names_reference(const std::string& candidate_source) {
  return candidate_source.find("tf_reference") != std::string::npos ||
         candidate_source.find("tf_harness") != std::string::npos;
}

std::string candidate_unit(const std::string& candidate_source) {
  // The headers the harness's unit has (a unit written for one program may rely on them).
  std::set<std::string> includes = {"#include <cuda_runtime.h>", "#include <algorithm>", "#include <cmath>",
                                    "#include <cstdint>", "#include <cstdio>", "#include <cstring>",
                                    "#include <vector>"};
  std::string body;
  split_includes(candidate_source, includes, body);
  std::string unit = "// kernelopt candidate (compiled alone: the reference is in another object, out of its reach)\n";
  for (const std::string& include : includes) unit += include + "\n";
  unit += "namespace tf_candidate {\n#line 1 \"candidate.cu\"\n" + body + "}  // namespace tf_candidate\n";
  return unit;
}

std::string roofline_code(const KernelTask& task) {
  bool tensor_cores = task.operator_type == kMatmulOperator || task.operator_type == kFusionOperator;
  return fmt::format("constexpr long long kMustReadBytes = {}LL;\n"
                     "constexpr double kFlops = {};\n"
                     "constexpr bool kTensorCorePeak = {};\n"
                     "#line 1 \"roofline.cu\"",
                     task.must_read_bytes(), float_literal(task.flops), tensor_cores ? "true" : "false") +
         kRooflineFunction;
}

std::string harness_program(const KernelTask& task, const HarnessOptions& options) {
  std::set<std::string> includes = {"#include <cuda_runtime.h>", "#include <algorithm>", "#include <chrono>",
                                    "#include <cmath>", "#include <cstdint>", "#include <cstdio>",
                                    "#include <cstring>", "#include <vector>"};
  std::string reference_body;
  split_includes(task.reference_source, includes, reference_body);

  std::string program = "// kernelopt harness for task " + task.name + " (generated by tailforge)\n";
  for (const std::string& include : includes) program += include + "\n";
  std::string input_sizes;
  for (const KernelBuffer& input : task.inputs) input_sizes += std::to_string(input.elements) + "LL, ";
  if (input_sizes.empty()) input_sizes = "0LL";
  program += fmt::format(
      "\nconstexpr int kInputCount = {};\n"
      "constexpr long long kInputElements[] = {{{}}};\n"
      "constexpr long long kOutputElements = {}LL;\n"
      "constexpr float kInputLow = {}f, kInputHigh = {}f;\n"
      "constexpr double kTolerance = {};\n"
      "constexpr unsigned kCheckSeed = {}u, kFreshSeed = {}u;\n"
      "constexpr unsigned kPoison = 0x7fbadbadu;  // a quiet NaN no arithmetic produces\n"
      "constexpr int kRepetitions = {}, kTrials = {}, kTimingAttempts = {};\n"
      "constexpr double kSpreadTarget = {};\n"
      "constexpr bool kTimeKernels = {};\n"
      "constexpr double kRooflineMargin = {};\n\n",
      task.inputs.size(), input_sizes, task.output.elements, float_literal(task.input_low),
      float_literal(task.input_high), float_literal(task.tolerance), options.check_seed, options.fresh_seed,
      options.repetitions, options.trials, options.timing_attempts,
      float_literal(options.spread_target), options.time_kernels ? "true" : "false",
      float_literal(options.roofline_margin));
  program += "namespace tf_candidate {\nvoid tf_launch(const float* const* inputs, float* output, cudaStream_t stream);\n}\n\n";
  // Internal linkage: no other object can name the reference, whatever it spells.
  program += "namespace {\nnamespace tf_reference {\n#line 1 \"reference.cu\"\n" + reference_body +
             "}  // namespace tf_reference\n}  // namespace\n";
  program += roofline_code(task);
  program += "#line 1 \"harness.cu\"\n";
  program += kHarnessMain;
  return program;
}

Result<HarnessReport> parse_harness_output(const std::string& stdout_text) {
  HarnessReport report;
  bool has_verdict = false;
  std::istringstream lines(stdout_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("kernelopt ", 0) != 0) continue;
    std::istringstream words(line.substr(10));
    std::string kind;
    words >> kind;
    if (kind == "device") {
      report.device = line.size() > 17 ? line.substr(17) : "";
    } else if (kind == "clocks") {
      report.sm_clock_khz = static_cast<int64_t>(field(line, "sm_khz"));
      report.memory_clock_khz = static_cast<int64_t>(field(line, "memory_khz"));
    } else if (kind == "check") {
      report.max_error = field(line, "max_error");
    } else if (kind == "time") {
      std::string which;
      words >> which;
      KernelTiming timing{field(line, "median_ms"), field(line, "spread"), static_cast<int>(field(line, "trials")),
                          std::max(1, static_cast<int>(field(line, "attempts")))};
      if (which == "reference") report.reference = timing;
      if (which == "candidate") report.candidate = timing;
    } else if (kind == "calls") {
      report.calls_checked = static_cast<int64_t>(field(line, "checked"));
    } else if (kind == "roofline") {
      report.roofline_ms = field(line, "bound_ms");
      report.bandwidth_gbs = field(line, "bandwidth_gbs");
      report.peak_gflops = field(line, "peak_gflops");
    } else if (kind == "verdict") {
      words >> report.verdict;
      std::getline(words, report.detail);
      size_t first = report.detail.find_first_not_of(' ');
      report.detail = first == std::string::npos ? "" : report.detail.substr(first);
      has_verdict = true;
    }
  }
  if (!has_verdict) return make_error("the kernelopt harness printed no verdict");
  return report;
}

}  // namespace tailforge
