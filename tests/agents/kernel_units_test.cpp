#include "agents/ptx2cuda/kernel_units.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agents/generator/generator.h"
#include "base/process.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/nvidia.h"

using namespace tailforge;

namespace {

// The machine's nvcc, found as the product finds it; a case without it records its skip.
bool nvcc_available() { return testing::nvcc_here(); }

// PTX of `source` by `nvcc -ptx -arch=sm_90`, or the compiler's message.
Result<std::string> compile_to_ptx(const std::string& source) {
  TempDir dir;
  write_tree_file(dir.file("program.cu"), source);
  ProcessSpec spec;
  spec.argv = {testing::nvcc_path(), "-ptx", "-arch=sm_90", "-o", dir.file("program.ptx"), dir.file("program.cu")};
  spec.timeout_seconds = 120;
  ProcessResult result = run_process(spec);
  if (!result.succeeded()) return make_error("nvcc: " + result.stderr_text);
  std::ifstream in(dir.file("program.ptx"));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// An entry's text without comments, .loc/.file lines and blank lines.
std::string comparable_entry(const std::string& text) {
  std::istringstream stream(text);
  std::string line, kept;
  while (std::getline(stream, line)) {
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos) continue;
    std::string body = line.substr(start);
    if (body.rfind("//", 0) == 0 || body.rfind(".loc", 0) == 0 || body.rfind(".file", 0) == 0) continue;
    kept += line + "\n";
  }
  return kept;
}

// The entry with the function's place in its module taken out of block labels and local depots
// ($L__BB3_7 -> $L__BB_7): a kernel that is the fourth function of a program is the first of its unit.
std::string without_function_numbers(const std::string& entry) {
  static const std::regex numbered(R"((\$L__BB|__local_depot)[0-9]+)");
  return std::regex_replace(entry, numbered, "$1");
}

struct ModuleEntries {
  std::vector<std::string> names;  // in module order
  std::map<std::string, std::string> texts;
};

ModuleEntries module_entries(const std::string& ptx) {
  ModuleEntries entries;
  for (const KernelText& kernel : split_ptx_kernels(ptx)) {
    entries.names.push_back(kernel.name);
    entries.texts[kernel.name] = comparable_entry(kernel.text);
  }
  return entries;
}

struct UnitOutcome {
  std::string kernel;
  bool compiled = false;
  bool identical = false;                // every entry of the kernel, byte for byte
  bool identical_but_numbering = false;  // the same after without_function_numbers
  std::string problem;                   // why not, for the failure message
};

void compare_entries(const std::vector<std::string>& kernel_entries, const ModuleEntries& program,
                     const ModuleEntries& unit, UnitOutcome* outcome) {
  outcome->identical = outcome->identical_but_numbering = !kernel_entries.empty();
  if (kernel_entries.empty()) outcome->problem = "no entry of the kernel in the program's PTX";
  for (const std::string& entry : kernel_entries) {
    auto mine = unit.texts.find(entry);
    std::string unit_text = mine == unit.texts.end() ? "" : mine->second;
    const std::string& program_text = program.texts.at(entry);
    bool same = unit_text == program_text;
    bool same_but_numbering = without_function_numbers(unit_text) == without_function_numbers(program_text);
    outcome->identical = outcome->identical && same;
    outcome->identical_but_numbering = outcome->identical_but_numbering && same_but_numbering;
    if (!same_but_numbering) {
      outcome->problem +=
          "entry " + entry + " differs\n--- unit ---\n" + unit_text + "--- program ---\n" + program_text;
    }
  }
}

UnitOutcome check_unit(const std::string& program, const KernelUnit& extracted, const ModuleEntries& full) {
  UnitOutcome outcome{extracted.name, false, false, false, ""};
  Result<KernelUnit> unit = instantiate_kernel_unit(program, extracted, full.names);
  if (!unit.ok()) {
    outcome.problem = unit.message();
    return outcome;
  }
  Result<std::string> ptx = compile_to_ptx(unit->source);
  if (!ptx.ok()) {
    outcome.problem = ptx.message() + "\n--- unit ---\n" + unit->source;
    return outcome;
  }
  outcome.compiled = true;
  Result<std::vector<std::string>> mine = kernel_entry_names(unit->name, full.names);
  std::vector<std::string> kernel_entries = mine.ok() ? *mine : std::vector<std::string>{};
  compare_entries(kernel_entries, full, module_entries(*ptx), &outcome);
  if (!mine.ok()) outcome.problem = mine.message();
  if (outcome.identical_but_numbering || kernel_entries.empty()) return outcome;
  // nvcc -ptx gave two different texts for one file when several ran at once (sha256 programs):
  // a mismatch counts only when both compiles, done again one at a time, still differ.
  static std::mutex one_at_a_time;
  std::lock_guard<std::mutex> lock(one_at_a_time);
  Result<std::string> program_again = compile_to_ptx(program), unit_again = compile_to_ptx(unit->source);
  if (!program_again.ok() || !unit_again.ok()) return outcome;
  outcome.problem.clear();
  compare_entries(kernel_entries, module_entries(*program_again), module_entries(*unit_again), &outcome);
  return outcome;
}

// Every kernel unit of `program`, compiled alone and compared with the program's own PTX entries.
std::vector<UnitOutcome> check_program(const std::string& program) {
  Result<std::string> full = compile_to_ptx(program);
  if (!full.ok()) return {{"<program>", false, false, false, full.message()}};
  ModuleEntries full_entries = module_entries(*full);
  Result<std::vector<KernelUnit>> units = extract_kernel_units(program);
  if (!units.ok()) return {{"<program>", false, false, false, units.message()}};
  std::vector<UnitOutcome> outcomes;
  for (const KernelUnit& unit : *units) outcomes.push_back(check_unit(program, unit, full_entries));
  return outcomes;
}

// check_program over all programs on a few threads, outcomes in program order.
std::vector<std::vector<UnitOutcome>> check_programs(const std::vector<std::string>& programs) {
  std::vector<std::vector<UnitOutcome>> outcomes(programs.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 3; ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < programs.size(); i = next++) outcomes[i] = check_program(programs[i]);
    });
  }
  for (std::thread& worker : workers) worker.join();
  return outcomes;
}

// Each unit compiles; its entries equal the program's, exactly when `exact`, else up to numbering.
// Skipped, with a message, without nvcc.
void require_same_entries(const std::string& program, size_t expected_units, bool exact) {
  if (!nvcc_available()) return;
  std::vector<UnitOutcome> outcomes = check_program(program);
  REQUIRE(outcomes.size() == expected_units);
  for (const UnitOutcome& outcome : outcomes) {
    INFO(outcome.kernel << ": " << outcome.problem);
    CHECK(outcome.compiled);
    CHECK(outcome.identical_but_numbering);
    if (exact) CHECK(outcome.identical);
  }
}

KernelUnit only_unit_named(const std::string& program, const std::string& name) {
  Result<std::vector<KernelUnit>> units = extract_kernel_units(program);
  REQUIRE_MESSAGE(units.ok(), units.message());
  for (const KernelUnit& unit : *units) {
    if (unit.name == name) return unit;
  }
  FAIL("no unit named " << name);
  return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* const kConstantHelperStruct = R"(#include <cstdio>
#include <cuda_runtime.h>
#define SCALE 2.0f
#define CHECK(call) report((call), __LINE__)

struct Particle {
  float x, y;
};

__constant__ float weights[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__constant__ float unused_table[2] = {5.0f, 6.0f};
static int host_counter = 0;

inline void report(cudaError_t status, int line) {
  if (status != cudaSuccess) printf("error %d at %d\n", (int)status, line);
  ++host_counter;
}

// Weighted sum of a particle's coordinates.
__device__ float weigh(const Particle& p, int k) { return (p.x + p.y) * weights[k % 4] * SCALE; }

__global__ void weigh_particles(const Particle* particles, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = weigh(particles[i], i);
}

int main() {
  Particle* particles = nullptr;
  float* out = nullptr;
  CHECK(cudaMalloc(&particles, 64 * sizeof(Particle)));
  CHECK(cudaMalloc(&out, 64 * sizeof(float)));
  weigh_particles<<<1, 64>>>(particles, out, 64);
  CHECK(cudaDeviceSynchronize());
  return host_counter > 3;
}
)";

const char* const kSharedHelper = R"(#include <cuda_runtime.h>
__device__ __forceinline__ float square(float v) { return v * v; }
__device__ float cube(float v) { return v * v * v; }

__global__ void squares(float* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = square(data[i]);
}

__global__ void sum_of_squares(const float* data, float* total, int n) {
  extern __shared__ float partial[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? square(data[i]) : 0.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float sum = 0;
    for (int k = 0; k < blockDim.x; ++k) sum += partial[k];
    atomicAdd(total, sum);
  }
}

int main() { return 0; }
)";

const char* const kCallChain = R"(#include <cuda_runtime.h>
__device__ int third(int v) { return v ^ 0x55; }
__device__ __noinline__ int second(int v) { return third(v) + 1; }
__device__ int first(int v) { return second(v) * 3; }
__device__ int unrelated(int v) { return v - 7; }

__global__ void chained(int* data) { data[threadIdx.x] = first(data[threadIdx.x]); }

void host_only_helper(int* data) { chained<<<1, 32>>>(data); }
int main() { host_only_helper(nullptr); return 0; }
)";

const char* const kTemplateKernel = R"(#include <cuda_runtime.h>
struct Pixel {
  unsigned char r, g, b, a;
  __device__ Pixel operator+(const Pixel& o) const { return {(unsigned char)(r + o.r), g, b, a}; }
};

template <typename T, int Block>
__global__ void __launch_bounds__(Block) accumulate(const T* __restrict__ in, T* out, int n) {
  int i = blockIdx.x * Block + threadIdx.x;
  if (i < n) out[i] = out[i] + in[i];
}

int main() {
  accumulate<float, 128><<<1, 128>>>(nullptr, nullptr, 0);
  accumulate<int, 64><<<1, 64>>>(nullptr, nullptr, 0);
  accumulate<Pixel, 256><<<1, 256>>>(nullptr, nullptr, 0);
  return 0;
}
)";

// The first `count` programs of the generator's batch for seed 7 (`tailforge generate --seed 7`).
std::vector<std::string> generated_programs(size_t count) {
  Result<GeneratorCatalog> catalog = load_default_generator_catalog(TAILFORGE_SOURCE_DIR);
  REQUIRE_MESSAGE(catalog.ok(), catalog.message());
  std::vector<std::string> programs;
  for (size_t i = 0; i < count; ++i) {
    Result<GeneratedProgram> program = generate_program(*catalog, batch_request(7, i));
    REQUIRE_MESSAGE(program.ok(), program.message());
    programs.push_back(program->source);
  }
  return programs;
}

}  // namespace

TEST_CASE("a kernel unit keeps the constant array, device helper, struct and macro it uses and drops host code") {
  KernelUnit unit = only_unit_named(kConstantHelperStruct, "weigh_particles");
  CHECK_FALSE(unit.is_template);
  CHECK(unit.declarations == std::vector<std::string>{"SCALE", "Particle", "weights", "weigh"});
  CHECK(contains(unit.source, "#define SCALE"));
  CHECK_FALSE(contains(unit.source, "#define CHECK"));
  CHECK(contains(unit.source, "// Weighted sum"));
  CHECK_FALSE(contains(unit.source, "unused_table"));
  CHECK_FALSE(contains(unit.source, "int main"));
  CHECK_FALSE(contains(unit.source, "host_counter"));
  require_same_entries(kConstantHelperStruct, 1, true);
}

TEST_CASE("two kernels sharing a helper each get a kernel unit with the helper") {
  Result<std::vector<KernelUnit>> units = extract_kernel_units(kSharedHelper);
  REQUIRE_MESSAGE(units.ok(), units.message());
  REQUIRE(units->size() == 2);
  CHECK((*units)[0].name == "squares");
  CHECK((*units)[1].name == "sum_of_squares");
  for (const KernelUnit& unit : *units) CHECK(unit.declarations == std::vector<std::string>{"square"});
  require_same_entries(kSharedHelper, 2, false);
}

TEST_CASE("a kernel unit follows a chain of device calls and leaves the rest out") {
  KernelUnit unit = only_unit_named(kCallChain, "chained");
  CHECK(unit.declarations == std::vector<std::string>{"third", "second", "first"});
  CHECK_FALSE(contains(unit.source, "host_only_helper"));
  require_same_entries(kCallChain, 1, true);
}

TEST_CASE("a template kernel unit instantiates what the program's PTX holds, types named only by host code included") {
  KernelUnit unit = only_unit_named(kTemplateKernel, "accumulate");
  CHECK(unit.is_template);
  CHECK(unit.declarations.empty());
  if (!nvcc_available()) return;
  Result<std::string> full = compile_to_ptx(kTemplateKernel);
  REQUIRE_MESSAGE(full.ok(), full.message());
  Result<KernelUnit> instantiated = instantiate_kernel_unit(kTemplateKernel, unit, module_entries(*full).names);
  REQUIRE_MESSAGE(instantiated.ok(), instantiated.message());
  CHECK(instantiated->declarations == std::vector<std::string>{"Pixel"});
  CHECK(contains(instantiated->source, "template __global__ void accumulate<float, 128>(float const*, float*, int);"));
  require_same_entries(kTemplateKernel, 1, true);
}

TEST_CASE("a kernel unit of a template kernel that nothing instantiates is an error, not a unit") {
  const std::string program = "template <typename T> __global__ void idle(T* p) { *p = T(); }\n";
  KernelUnit unit = only_unit_named(program, "idle");
  Result<KernelUnit> instantiated = instantiate_kernel_unit(program, unit, {"_Z5otherPf"});
  REQUIRE_FALSE(instantiated.ok());
  CHECK(contains(instantiated.message(), "nothing instantiates it"));
}

TEST_CASE("kernel unit extraction refuses a kernel inside a namespace and unbalanced braces") {
  Result<std::vector<KernelUnit>> nested =
      extract_kernel_units("namespace ops { __global__ void k(int* p) { *p = 1; } }\n");
  REQUIRE_FALSE(nested.ok());
  CHECK(contains(nested.message(), "namespace"));
  Result<std::vector<KernelUnit>> broken = extract_kernel_units("__global__ void k(int* p) { *p = 1;\n");
  REQUIRE_FALSE(broken.ok());
  CHECK(contains(broken.message(), "unbalanced"));
}

// TAILFORGE_KERNEL_UNIT_PROGRAMS=40 measures the whole `generate --count 40 --seed 7` corpus.
TEST_CASE("kernel units of generated programs compile alone to the program's own PTX entries") {
  if (!nvcc_available()) return;
  const char* count_text = std::getenv("TAILFORGE_KERNEL_UNIT_PROGRAMS");
  std::vector<std::string> programs = generated_programs(count_text ? std::stoul(count_text) : 12);
  size_t kernels = 0, compiled = 0, identical = 0, identical_but_numbering = 0;
  std::vector<std::vector<UnitOutcome>> outcomes = check_programs(programs);
  for (size_t i = 0; i < programs.size(); ++i) {
    // A program that launches with <<<...>>> defines its kernel; the host-library ones (cuBLAS, the
    // cuRAND host API) and NVRTC's, whose kernel is a string, may have none.
    if (contains(programs[i], "<<<")) CHECK_MESSAGE(!outcomes[i].empty(), "program " << i << " launches a kernel it has no unit for");
    for (const UnitOutcome& outcome : outcomes[i]) {
      INFO("program " << i << ", kernel " << outcome.kernel << ": " << outcome.problem);
      CHECK(outcome.identical_but_numbering);
      ++kernels;
      compiled += outcome.compiled;
      identical += outcome.identical;
      identical_but_numbering += outcome.identical_but_numbering;
    }
  }
  MESSAGE(programs.size() << " programs, " << kernels << " kernels, " << compiled << " units compile alone, "
                          << identical << " with identical PTX entries, " << identical_but_numbering
                          << " identical up to the function's number in its module");
  CHECK(kernels >= programs.size() / 2);
}
