#include "verifier/kernelopt/pytorch_harness.h"

#include <mutex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "base/process.h"

namespace tailforge {
namespace {

// What the program needs before torch: the verdict, the median, and the timing's report and
// verdict, printed as the CUDA harness prints them (parse_harness_output reads both).
constexpr const char* kHelpers = R"py(
import os, sys, time
os.environ.setdefault("OMP_NUM_THREADS", "1")  # the sandbox bounds processes and threads

POISON = 0x7fbadbad

def verdict(kind, detail=""):
    print(f"kernelopt verdict {kind} {detail}".rstrip(), flush=True)
    sys.exit(0)

def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2

def finish_timing(results, attempt, calls, wrong_calls, wrong_outputs, pending, roofline):
    """Prints the time, calls and roofline lines; a verdict (and exits) when a timed call was wrong,
    left work running after its stop event, or was faster than the GPU can be.
    results: (median_ms, spread, trials) of the reference and the candidate; pending: the waits of
    a device-wide synchronize after each stop event, per side; roofline: (bound_ms, GB/s, GFLOP/s)."""
    for which, (middle, spread, count) in enumerate(results):
        name = "candidate" if which else "reference"
        print(f"kernelopt time {name} median_ms={middle:.9g} spread={spread:.6f} trials={count} attempts={attempt}")
    pending_reference, pending_candidate = median(pending[0]), median(pending[1])
    print(f"kernelopt calls checked={calls} wrong={wrong_calls} pending_reference_ms={pending_reference:.6f} "
          f"pending_candidate_ms={pending_candidate:.6f}")
    bound_ms, bandwidth_gbs, peak_gflops = roofline
    print(f"kernelopt roofline bound_ms={bound_ms:.9g} bandwidth_gbs={bandwidth_gbs:.1f} peak_gflops={peak_gflops:.1f} "
          f"read_bytes={READ_BYTES} flops={FLOPS:.6g}", flush=True)
    candidate_ms = results[1][0]
    if wrong_calls > 0:
        verdict("cheat.stateful", f"right on every check, wrong on {wrong_calls} of {calls} timed calls ({wrong_outputs} "
                "outputs in all; each had fresh inputs, half of them the previous answer in the output): its answers "
                "depend on earlier calls")
    if pending_candidate > pending_reference + max(0.5 * candidate_ms, 0.01):
        verdict("cheat.unsynchronized_stream", f"a device-wide synchronize after each call's stop event still waited "
                f"{pending_candidate:.6f} ms (the reference's {pending_reference:.6f} ms) for a call the events timed at "
                f"{candidate_ms:.6f} ms: work runs on streams the harness does not time")
    if bound_ms > 0 and candidate_ms < ROOFLINE_MARGIN * bound_ms:
        verdict("cheat.beyond_roofline", f"{candidate_ms:.6f} ms a call, where reading {READ_BYTES} bytes at "
                f"{bandwidth_gbs:.0f} GB/s and {FLOPS:.6g} FLOPs at {peak_gflops:.0f} GFLOP/s take at least "
                f"{bound_ms:.6f} ms: faster than the GPU can be")
)py";

constexpr const char* kHarnessScript = R"py(
import ctypes, importlib.util
import torch

def load_reference():
    spec = importlib.util.spec_from_file_location("reference", "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    init = module.get_init_inputs() if hasattr(module, "get_init_inputs") else []
    return module, module.Model(*init).cuda().eval()

try:
    module, model = load_reference()
except Exception as error:
    verdict("reference_error", f"the PyTorch reference does not load: {type(error).__name__}: {error}")

library = ctypes.CDLL(os.path.abspath("candidate.so"))
library.tf_candidate_entry.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
library.tf_candidate_entry.restype = ctypes.c_int
library.tf_device_clocks.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int)]
library.tf_roofline_ms.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double)]
library.tf_roofline_ms.restype = ctypes.c_double
sm_khz, memory_khz = ctypes.c_int(0), ctypes.c_int(0)
library.tf_device_clocks(ctypes.byref(sm_khz), ctypes.byref(memory_khz))
print(f"kernelopt device {torch.cuda.get_device_name(0)}")
print(f"kernelopt clocks sm_khz={sm_khz.value} memory_khz={memory_khz.value}")

stream = torch.cuda.Stream()

def as_inputs(made):
    inputs = [t.cuda().float().contiguous() for t in made]
    if [t.numel() for t in inputs] != INPUT_ELEMENTS:
        verdict("reference_error", f"get_inputs() gives {[t.numel() for t in inputs]} elements, the task says {INPUT_ELEMENTS}")
    return inputs

def make_inputs(seed):
    torch.manual_seed(seed)
    inputs = as_inputs(module.get_inputs())
    torch.cuda.synchronize()
    return inputs

def refill(inputs, seed):
    """A timed call's fresh inputs from the module's get_inputs(), made on the device where torch
    allows it, written into the same buffers."""
    torch.manual_seed(seed)
    try:
        with torch.device("cuda"):
            made = module.get_inputs()
    except Exception:  # torch before 2.0 has no device context
        torch.manual_seed(seed)
        made = module.get_inputs()
    with torch.no_grad():
        for target, values in zip(inputs, as_inputs(made)):
            target.copy_(values.reshape(target.shape))

def reference_answer(inputs):
    with torch.no_grad(), torch.cuda.stream(stream):
        out = model(*inputs).float().contiguous().flatten()
    stream.synchronize()
    if out.numel() != OUTPUT_ELEMENTS:
        verdict("reference_error", f"the module returns {out.numel()} elements, the task says {OUTPUT_ELEMENTS}")
    return out

def launch(inputs, out):
    pointers = (ctypes.c_void_p * len(inputs))(*[t.data_ptr() for t in inputs])
    error = library.tf_candidate_entry(pointers, ctypes.c_void_p(out.data_ptr()), ctypes.c_void_p(stream.cuda_stream))
    if error:
        verdict("launch_error", f"candidate launch: CUDA error {error}")

def poison(out):
    out.view(torch.int32).fill_(POISON)
    return out

def wrong_outputs(got, want):
    """Which of `got` are not within the tolerance of `want` (poison never is)."""
    error = (got.double() - want.double()).abs()
    return ~(error <= TOLERANCE * (1 + want.double().abs()))

def check(inputs, want, out):
    saved = [t.clone() for t in inputs]
    torch.cuda.synchronize()
    launch(inputs, out)
    with torch.cuda.stream(stream):
        seen = out.to("cpu")  # what a caller that synchronizes only its stream sees
    torch.cuda.synchronize()
    settled = out.to("cpu")
    for index, (before, after) in enumerate(zip(saved, inputs)):
        if not torch.equal(before.view(torch.int32), after.view(torch.int32)):
            changed = int((before.view(torch.int32) != after.view(torch.int32)).sum())
            verdict("cheat.input_write", f"input {index} changed in {changed} of {after.numel()} elements")
    if not torch.equal(seen.view(torch.int32), settled.view(torch.int32)):
        late = int((seen.view(torch.int32) != settled.view(torch.int32)).sum())
        verdict("cheat.unsynchronized_stream",
                f"{late} of {OUTPUT_ELEMENTS} outputs were still changing after the launch stream was synchronized: work runs on another stream")
    expected = want.to("cpu")
    untouched = int((settled.view(torch.int32) == POISON).sum())
    bad = wrong_outputs(settled, expected)
    mismatches = int(bad.sum())
    error = (settled.double() - expected.double()).abs()
    finite = error[torch.isfinite(error)]
    max_error = float(finite.max()) if finite.numel() else 0.0
    first = int(bad.nonzero()[0]) if mismatches else -1
    return mismatches, untouched, max_error, first, settled, expected

def report_check(label, result):
    mismatches, untouched, max_error, first, got, want = result
    line = f"kernelopt check {label} mismatches={mismatches} untouched={untouched} max_error={max_error:.9g}"
    if first >= 0:
        line += f" first={first} got={float(got[first]):.9g} want={float(want[first]):.9g}"
    print(line, flush=True)

def differ(result):
    m, u, e, f, got, exp = result
    return f"{m} of {OUTPUT_ELEMENTS} outputs differ (first at {f}: {float(got[f]):.9g}, want {float(exp[f]):.9g})"

out = torch.empty(OUTPUT_ELEMENTS, dtype=torch.float32, device="cuda")
inputs = make_inputs(CHECK_SEED)
want = reference_answer(inputs)
fixed = check(inputs, want, poison(out))
report_check("fixed_input", fixed)
if fixed[0]:
    if fixed[1]:
        reused = check(inputs, want, want.clone())
        report_check("reused_buffer", reused)
        if reused[0] == 0:
            verdict("cheat.output_reuse", f"right only when its output buffer already holds the reference's answer: {fixed[1]} of {OUTPUT_ELEMENTS} outputs never written")
    m, u, e, f, got, exp = fixed
    verdict("output_mismatch", f"{m} of {OUTPUT_ELEMENTS} outputs differ (first at {f}: {float(got[f]):.9g}, want {float(exp[f]):.9g}; {u} never written)")

fixed_inputs, fixed_want = [t.clone() for t in inputs], want
fresh_inputs = make_inputs(FRESH_SEED)
with torch.no_grad():
    for target, values in zip(inputs, fresh_inputs):
        target.copy_(values)  # the same buffers, as the CUDA harness uploads into them
torch.cuda.synchronize()
want = reference_answer(inputs)
fresh = check(inputs, want, poison(out))
report_check("fresh_input", fresh)
if fresh[0]:
    # Wrong on the fixed input now too, where it was right on its first call: it changed with the calls.
    with torch.no_grad():
        for target, values in zip(inputs, fixed_inputs):
            target.copy_(values)
    again = check(inputs, fixed_want, poison(out))
    report_check("fixed_input_again", again)
    if again[0]:
        verdict("cheat.stateful", f"right on its first call, wrong on a later call with the same input: {again[0]} of {OUTPUT_ELEMENTS} outputs differ")
    verdict("cheat.fixed_input", "right on the fixed input, wrong on fresh input: " + differ(fresh))

# The fresh input again with one element in a hundred changed (to its neighbour's value, which
# keeps it in the module's domain), in the same buffers: a memo keyed on the buffers' addresses or
# on a few sampled values answers for the unchanged input.
changed = 0
with torch.no_grad():
    for index, tensor in enumerate(inputs):
        flat = tensor.view(-1)
        n = flat.numel()
        if n < 2:
            continue
        at = torch.arange((7 * index + 3) % min(n, 100), n, 100, device=flat.device)
        flat[at] = flat[(at + 1) % n].clone()
        changed += at.numel()
torch.cuda.synchronize()
want = reference_answer(inputs)
nudged = check(inputs, want, poison(out))
report_check("nudged_input", nudged)
if nudged[0]:
    verdict("cheat.stateful", f"right on the fresh input, wrong once {changed} of its elements changed in the same buffers: " + differ(nudged))

if TIME_KERNELS:
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device="cuda")
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    def time_once(candidate, trial):
        """One call from a cold L2 between two events: (ms, how long a device-wide synchronize
        still waited after the stop event, the call's output)."""
        with torch.cuda.stream(stream):
            flush.fill_(trial & 0xFF)
            start.record(stream)
            if candidate:
                launch(inputs, out)
                answer = out
            else:
                with torch.no_grad():
                    answer = model(*inputs)
            stop.record(stream)
        stop.synchronize()
        settled = time.perf_counter()
        torch.cuda.synchronize()
        return start.elapsed_time(stop), (time.perf_counter() - settled) * 1e3, answer
    for which in (0, 1):
        for w in range(3):
            time_once(which == 1, w)
    # Every timed call on fresh inputs in the same buffers, checked against the module's answer to
    # them; even calls find the output poisoned, odd calls the previous call's answer.
    calls = wrong_calls = wrong_total = 0
    pending = ([], [])
    for attempt in range(1, TIMING_ATTEMPTS + 1):
        every, medians = ([], []), ([], [])
        for r in range(REPETITIONS):
            trials = ([], [])
            for t in range(TRIALS):
                with torch.cuda.stream(stream):
                    refill(inputs, 0x7F4A7C15 + attempt * 1000003 + r * TRIALS + t)
                    if t % 2 == 0:
                        poison(out)
                for which in (0, 1):
                    ms, waited, answer = time_once(which == 1, t)
                    trials[which].append(ms)
                    pending[which].append(waited)
                    if which == 0:
                        expected = answer.float().contiguous().flatten()
                with torch.cuda.stream(stream):
                    wrong_here = int(wrong_outputs(out, expected).sum())
                calls += 1
                wrong_calls += wrong_here > 0
                wrong_total += wrong_here
            for which in (0, 1):
                every[which].extend(trials[which])
                medians[which].append(median(trials[which]))
        results = []
        for which in (0, 1):
            middle = median(every[which])
            spread = (max(medians[which]) - min(medians[which])) / middle if middle > 0 else 0.0
            results.append((middle, spread, len(every[which])))
        if wrong_calls or all(spread < SPREAD_TARGET for _, spread, _ in results):
            break
    bandwidth_gbs, peak_gflops = ctypes.c_double(0), ctypes.c_double(0)
    bound_ms = library.tf_roofline_ms(ctypes.byref(bandwidth_gbs), ctypes.byref(peak_gflops))
    finish_timing(results, attempt, calls, wrong_calls, wrong_total, pending,
                  (bound_ms, bandwidth_gbs.value, peak_gflops.value))
print("kernelopt verdict ok", flush=True)
)py";

}  // namespace

std::string pytorch_entry_unit(const KernelTask& task) {
  return "// kernelopt PyTorch harness's entry points (generated by tailforge), linked with the candidate's object\n"
         "#include <cuda_runtime.h>\n#include <algorithm>\n" +
         roofline_code(task) +
         "#line 1 \"entry.cu\"\n"
         "namespace tf_candidate {\n"
         "void tf_launch(const float* const* inputs, float* output, cudaStream_t stream);\n"
         "}\n"
         "extern \"C\" int tf_candidate_entry(const float* const* inputs, float* output, cudaStream_t stream) {\n"
         "  tf_candidate::tf_launch(inputs, output, stream);\n"
         "  return static_cast<int>(cudaGetLastError());\n"
         "}\n"
         "extern \"C\" void tf_device_clocks(int* sm_khz, int* memory_khz) {\n"
         "  cudaDeviceGetAttribute(sm_khz, cudaDevAttrClockRate, 0);\n"
         "  cudaDeviceGetAttribute(memory_khz, cudaDevAttrMemoryClockRate, 0);\n"
         "}\n"
         "extern \"C\" double tf_roofline_ms(double* bandwidth_gbs, double* peak_gflops) {\n"
         "  return tf_harness::roofline_ms(bandwidth_gbs, peak_gflops);\n"
         "}\n";
}

std::string pytorch_harness_helpers(const KernelTask& task, const HarnessOptions& options) {
  std::string elements;
  for (const KernelBuffer& input : task.inputs) elements += (elements.empty() ? "" : ", ") + std::to_string(input.elements);
  return fmt::format(
             "# kernelopt harness for task {} (generated by tailforge): PyTorch reference\n"
             "INPUT_ELEMENTS = [{}]\nOUTPUT_ELEMENTS = {}\nTOLERANCE = {:.9g}\nCHECK_SEED = {}\nFRESH_SEED = {}\n"
             "REPETITIONS = {}\nTRIALS = {}\nTIMING_ATTEMPTS = {}\nSPREAD_TARGET = {:.9g}\nTIME_KERNELS = {}\n"
             "READ_BYTES = {}\nFLOPS = {:.17g}\nROOFLINE_MARGIN = {:.9g}\n",
             task.name, elements, task.output.elements, task.tolerance, options.check_seed, options.fresh_seed,
             options.repetitions, options.trials, options.timing_attempts, options.spread_target,
             options.time_kernels ? "True" : "False", task.must_read_bytes(), task.flops, options.roofline_margin) +
         kHelpers;
}

std::string pytorch_harness_script(const KernelTask& task, const HarnessOptions& options) {
  return pytorch_harness_helpers(task, options) + kHarnessScript;
}

const PytorchEnvironment& pytorch_environment() {
  static std::once_flag probed;
  static PytorchEnvironment environment;
  std::call_once(probed, [] {
    ProcessSpec spec;
    spec.argv = {"python3", "-c",
                 "import sys, torch\n"
                 "print('cuda' if torch.cuda.is_available() else 'no-cuda')\n"
                 "print(sys.executable)\nprint(sys.prefix)\nprint(torch.__version__)"};
    spec.timeout_seconds = 60;
    ProcessResult result = run_process(spec);
    std::istringstream lines(result.stdout_text);
    std::string cuda;
    std::getline(lines, cuda);
    std::getline(lines, environment.executable);
    std::getline(lines, environment.prefix);
    std::getline(lines, environment.torch_version);
    if (!result.spawned) {
      environment.unavailable_reason = "PyTorch reference: python3 is not installed here";
    } else if (result.exit_code != 0) {
      environment.unavailable_reason = "PyTorch reference: python3 cannot import torch here";
    } else if (cuda != "cuda") {
      environment.unavailable_reason = "PyTorch reference: torch " + environment.torch_version + " sees no CUDA GPU here";
    }
  });
  return environment;
}

}  // namespace tailforge
