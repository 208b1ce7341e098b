#include "verifier/kernelopt/pytorch_harness.h"

#include <mutex>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "base/process.h"

namespace tailforge {
namespace {

constexpr const char* kHarnessScript = R"py(
import ctypes, importlib.util, os, sys
os.environ.setdefault("OMP_NUM_THREADS", "1")  # the sandbox bounds processes and threads
import torch

POISON = 0x7fbadbad

def verdict(kind, detail=""):
    print(f"kernelopt verdict {kind} {detail}".rstrip(), flush=True)
    sys.exit(0)

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
sm_khz, memory_khz = ctypes.c_int(0), ctypes.c_int(0)
library.tf_device_clocks(ctypes.byref(sm_khz), ctypes.byref(memory_khz))
print(f"kernelopt device {torch.cuda.get_device_name(0)}")
print(f"kernelopt clocks sm_khz={sm_khz.value} memory_khz={memory_khz.value}")

stream = torch.cuda.Stream()

def make_inputs(seed):
    torch.manual_seed(seed)
    inputs = [t.cuda().float().contiguous() for t in module.get_inputs()]
    if [t.numel() for t in inputs] != INPUT_ELEMENTS:
        verdict("reference_error", f"get_inputs() gives {[t.numel() for t in inputs]} elements, the task says {INPUT_ELEMENTS}")
    return inputs

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

def poisoned(count):
    return torch.full((count,), POISON, dtype=torch.int32, device="cuda").view(torch.float32)

def check(inputs, want, out):
    saved = [t.clone() for t in inputs]
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
    error = (settled.double() - expected.double()).abs()
    bad = ~(error <= TOLERANCE * (1 + expected.double().abs()))
    mismatches = int(bad.sum())
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

inputs = make_inputs(CHECK_SEED)
want = reference_answer(inputs)
fixed = check(inputs, want, poisoned(OUTPUT_ELEMENTS))
report_check("fixed_input", fixed)
if fixed[0]:
    if fixed[1]:
        reused = check(inputs, want, want.clone())
        report_check("reused_buffer", reused)
        if reused[0] == 0:
            verdict("cheat.output_reuse", f"right only when its output buffer already holds the reference's answer: {fixed[1]} of {OUTPUT_ELEMENTS} outputs never written")
    m, u, e, f, got, exp = fixed
    verdict("output_mismatch", f"{m} of {OUTPUT_ELEMENTS} outputs differ (first at {f}: {float(got[f]):.9g}, want {float(exp[f]):.9g}; {u} never written)")

inputs = make_inputs(FRESH_SEED)
want = reference_answer(inputs)
fresh = check(inputs, want, poisoned(OUTPUT_ELEMENTS))
report_check("fresh_input", fresh)
if fresh[0]:
    m, u, e, f, got, exp = fresh
    verdict("cheat.fixed_input", f"right on the fixed input, wrong on fresh input: {m} of {OUTPUT_ELEMENTS} outputs differ (first at {f}: {float(got[f]):.9g}, want {float(exp[f]):.9g})")

if TIME_KERNELS:
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    flush = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8, device="cuda")
    out = torch.empty(OUTPUT_ELEMENTS, dtype=torch.float32, device="cuda")
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    def time_once(candidate, trial):
        with torch.cuda.stream(stream):
            flush.fill_(trial & 0xFF)
            start.record(stream)
            if candidate:
                launch(inputs, out)
            else:
                with torch.no_grad():
                    model(*inputs)
            stop.record(stream)
        stop.synchronize()
        return start.elapsed_time(stop)
    def median(values):
        values = sorted(values)
        n = len(values)
        return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2
    for which in (0, 1):
        for w in range(3):
            time_once(which == 1, w)
    for attempt in range(1, TIMING_ATTEMPTS + 1):
        every, medians = ([], []), ([], [])
        for r in range(REPETITIONS):
            for which in (0, 1):
                trials = [time_once(which == 1, t) for t in range(TRIALS)]
                every[which].extend(trials)
                medians[which].append(median(trials))
        results = []
        for which in (0, 1):
            middle = median(every[which])
            spread = (max(medians[which]) - min(medians[which])) / middle if middle > 0 else 0.0
            results.append((middle, spread, len(every[which])))
        if all(spread < SPREAD_TARGET for _, spread, _ in results):
            break
    for which, (middle, spread, count) in enumerate(results):
        name = "candidate" if which else "reference"
        print(f"kernelopt time {name} median_ms={middle:.9g} spread={spread:.6f} trials={count} attempts={attempt}")
print("kernelopt verdict ok", flush=True)
)py";

}  // namespace

std::string pytorch_candidate_library_source(const std::string& candidate_source) {
  return "#include <cuda_runtime.h>\n#line 1 \"candidate.cu\"\n" + candidate_source +
         "\n#line 1 \"entry.cu\"\n"
         "extern \"C\" int tf_candidate_entry(const float* const* inputs, float* output, cudaStream_t stream) {\n"
         "  tf_launch(inputs, output, stream);\n"
         "  return static_cast<int>(cudaGetLastError());\n"
         "}\n"
         "extern \"C\" void tf_device_clocks(int* sm_khz, int* memory_khz) {\n"
         "  cudaDeviceGetAttribute(sm_khz, cudaDevAttrClockRate, 0);\n"
         "  cudaDeviceGetAttribute(memory_khz, cudaDevAttrMemoryClockRate, 0);\n"
         "}\n";
}

std::string pytorch_harness_script(const KernelTask& task, const HarnessOptions& options) {
  std::string elements;
  for (const KernelBuffer& input : task.inputs) elements += (elements.empty() ? "" : ", ") + std::to_string(input.elements);
  return fmt::format(
             "# kernelopt harness for task {} (generated by tailforge): PyTorch reference\n"
             "INPUT_ELEMENTS = [{}]\nOUTPUT_ELEMENTS = {}\nTOLERANCE = {:.9g}\nCHECK_SEED = {}\nFRESH_SEED = {}\n"
             "REPETITIONS = {}\nTRIALS = {}\nTIMING_ATTEMPTS = {}\nSPREAD_TARGET = {:.9g}\nTIME_KERNELS = {}\n",
             task.name, elements, task.output.elements, task.tolerance, options.check_seed, options.fresh_seed,
             options.repetitions, options.trials, options.timing_attempts, options.spread_target,
             options.time_kernels ? "True" : "False") +
         kHarnessScript;
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
