#include "agents/ptx2cuda/refactor.h"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/generator/generator.h"
#include "base/process.h"
#include "test_support/tools_here.h"
#include "verifier/compare.h"

using namespace tailforge;
namespace fs = std::filesystem;

#ifndef TAILFORGE_SOURCE_DIR
#define TAILFORGE_SOURCE_DIR TAILFORGE_TEST_DATA "/../.."
#endif

namespace {

std::string refactored(const std::string& source) { return refactor_cuda(source).text; }

void check_unchanged(const std::string& source) { CHECK(refactored(source) == source); }

}  // namespace

TEST_CASE("refactor removes redundant parentheses by precedence") {
  CHECK(refactored("x = ((a));") == "x = a;");
  CHECK(refactored("y = (a * b) + c;") == "y = a * b + c;");
  CHECK(refactored("x = (a + b);") == "x = a + b;");
  CHECK(refactored("v = a[(i)];") == "v = a[i];");
  CHECK(refactored("f((x));") == "f(x);");
  CHECK(refactored("int g() { return (x); }") == "int g() { return x; }");
  CHECK(refactored("z = (a - b) - c;") == "z = a - b - c;");
  CHECK(refactored("int k = (n / 2) * 3;") == "int k = n / 2 * 3;");
  CHECK(refactored("m = (a < b) ? (p[i]) : q;") == "m = a < b ? p[i] : q;");
  CHECK(refactored("int x;\nint y;\nw = (int)(y) + -(x);") == "int x;\nint y;\nw = (int)y + -x;");
}

TEST_CASE("refactor keeps the counts of removed parentheses") {
  RefactorResult result = refactor_cuda("x = ((a * b)) + c;");
  CHECK(result.text == "x = a * b + c;");
  CHECK(result.parentheses_removed == 2);
  CHECK(result.redundant_parenthesis_characters_before == 4);
  CHECK(result.redundant_parenthesis_characters_after == 0);
  CHECK(result.parenthesized_expression_characters_before == std::string("x = ((a * b)) + c").size());
  CHECK(result.parenthesized_expression_characters_after == std::string("x = a * b + c").size());
}

TEST_CASE("refactor removes the redundant pairs inside if, while and for conditions but not their own") {
  CHECK(refactored("void k() { if ((a < b)) x = 1; }") == "void k() { if (a < b) x = 1; }");
  CHECK(refactored("void k() { while ((i) < n) ++i; }") == "void k() { while (i < n) ++i; }");
  CHECK(refactored("void k() { for (int i = (0); i < (n); i += (s)) {} }") ==
        "void k() { for (int i = 0; i < n; i += s) {} }");
  CHECK(refactored("void k() { switch ((c)) { case 1: y = (a); break; } }") ==
        "void k() { switch (c) { case 1: y = a; break; } }");
}

TEST_CASE("refactor never touches calls, declarations, casts and sizeof") {
  check_unchanged("void f(int a, float b);\nint main() { f(a, b); return 0; }\n");
  check_unchanged("float v = (float)x;");
  check_unchanged("float* p = (float*)q;");
  check_unchanged("value_t* p = (value_t*)device_alloc(n * sizeof(value_t));");
  check_unchanged("typedef double value_t;\ndouble d = (value_t)-x;");
  check_unchanged("size_t s = sizeof((a));");
  check_unchanged("x = (a) - b;");
}

TEST_CASE("refactor never touches macros and preprocessor lines") {
  check_unchanged("#define SQUARE(x) ((x) * (x))\n");
  check_unchanged("#if (A > 1)\n#endif\n");
  check_unchanged("#define N 4 + 1\nint m = (N) * 2;");
  check_unchanged("CHECK((call));");
}

TEST_CASE("refactor keeps parentheses that precedence or readability need") {
  check_unchanged("x = a - (b - c);");
  check_unchanged("x = a / (b * c);");
  check_unchanged("x = (a < b) == c;");
  check_unchanged("x = a < (b >> c);");
  check_unchanged("x = (a + b) << 2;");
  check_unchanged("x = (a && b) || c;");
  check_unchanged("x = (a, b);");
  check_unchanged("void k() { if ((x = y)) z = 1; }");
  check_unchanged("x = y * (c ? a : b);");
  check_unchanged("auto t = foo<int>((a));");
  check_unchanged("kernel<<<(n + 255) / 256, 256>>>((p));");
}

TEST_CASE("refactor leaves what it cannot parse and keeps comments and layout") {
  check_unchanged("auto f = [&](int v) { return g((v), [](int w) { return w; }); };");
  check_unchanged("x = (a +;");
  CHECK(refactored("// (keep) ((this))\nx = (a + b); /* and (this) */\n  y = 1;\n") ==
        "// (keep) ((this))\nx = a + b; /* and (this) */\n  y = 1;\n");
  CHECK(refactored("int g() { return(x); }") == "int g() { return x; }");
  CHECK(refactored("y = a+(++b);") == "y = a+ ++b;");
}

namespace {

const char* kTwoIndexKernel =
    "__global__ void scale(float* out, const float* in, int n) {\n"
    "  if (blockIdx.x * blockDim.x + threadIdx.x < n)\n"
    "    out[blockIdx.x * blockDim.x + threadIdx.x] = 2 * in[threadIdx.x + blockDim.x * blockIdx.x];\n"
    "}\n";

}  // namespace

TEST_CASE("refactor hoists repeated thread-index arithmetic into one local, commuted forms included") {
  RefactorResult result = refactor_cuda(kTwoIndexKernel);
  CHECK(result.text ==
        "__global__ void scale(float* out, const float* in, int n) {\n"
        "  const unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "  if (idx < n)\n"
        "    out[idx] = 2 * in[idx];\n"
        "}\n");
  CHECK(result.index_expressions_extracted == 1);
  CHECK(result.index_occurrences_replaced == 3);
  CHECK(result.index_arithmetic_characters_before == 3 * std::string("blockIdx.x * blockDim.x + threadIdx.x").size());
  CHECK(result.index_arithmetic_characters_after ==
        std::string("const unsigned int idx = blockIdx.x * blockDim.x + threadIdx.x;").size() + 9);
}

TEST_CASE("refactor hoists grid strides, and longer terms with parameters when that pays off, under unused names") {
  std::string kernel =
      "__device__ void fill(float* out, int n, int width) {\n"
      "  int idx = 0;\n"
      "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = idx;\n"
      "  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += blockDim.x * gridDim.x) out[j] += 1;\n"
      "  out[(blockIdx.y * blockDim.y + threadIdx.y) * width + threadIdx.x] = 0;\n"
      "  out[threadIdx.x + width * (threadIdx.y + blockDim.y * blockIdx.y)] += 1;\n"
      "  out[(blockIdx.y * blockDim.y + threadIdx.y) * width + threadIdx.x] *= 2;\n"
      "  out[blockIdx.x * 8] = out[blockIdx.x * 8 + 1];\n"
      "}\n";
  std::string text = refactored(kernel);
  CHECK(text.find("const unsigned int idx_2 = blockIdx.x * blockDim.x + threadIdx.x;") != std::string::npos);
  CHECK(text.find("const unsigned int stride = gridDim.x * blockDim.x;") != std::string::npos);
  CHECK(text.find("const unsigned int index_term = (blockIdx.y * blockDim.y + threadIdx.y) * width + threadIdx.x;") !=
        std::string::npos);
  CHECK(text.find("i += stride") != std::string::npos);
  CHECK(text.find("j += stride") != std::string::npos);
  CHECK(text.find("out[index_term] = 0;") != std::string::npos);
  CHECK(text.find("out[index_term] += 1;") != std::string::npos);
  CHECK(text.find("out[index_term] *= 2;") != std::string::npos);
  CAPTURE(text);
  CHECK(text.find("out[blockIdx.x * 8] = out[blockIdx.x * 8 + 1];") != std::string::npos);  // would not pay off
}

TEST_CASE("refactor reuses a local already initialized to the index and never written") {
  std::string kernel =
      "__global__ void copy(int* out, const int* in) {\n"
      "  const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n"
      "  out[(int)(blockIdx.x * blockDim.x + threadIdx.x)] = in[i];\n"
      "}\n";
  RefactorResult result = refactor_cuda(kernel);
  CHECK(result.text ==
        "__global__ void copy(int* out, const int* in) {\n"
        "  const int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n"
        "  out[i] = in[i];\n"
        "}\n");
  CHECK(result.index_expressions_extracted == 1);
  CHECK(result.index_occurrences_replaced == 1);
}

TEST_CASE("refactor does not hoist what depends on a written value or lies outside kernels") {
  check_unchanged(
      "__global__ void k(int* out, int n) {\n"
      "  n = n * 2;\n"
      "  out[blockIdx.x * n] = out[blockIdx.x * n + 1];\n"
      "}\n");
  std::string written_local = refactored(
      "__global__ void k(int* out) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  i += 1;\n"
      "  out[blockIdx.x * blockDim.x + threadIdx.x] = i;\n"
      "}\n");
  CHECK(written_local.find("out[i]") == std::string::npos);
  CHECK(written_local.find("out[idx] = i;") != std::string::npos);
  check_unchanged("void host(int* out) { out[blockIdx.x * 2] = out[blockIdx.x * 2 + 1]; }\n");
  check_unchanged(
      "__global__ void k(int* out, int n) {\n"
      "  if (n > 0) out[threadIdx.x / n] = out[threadIdx.x / n + 1];\n"
      "}\n");
}

namespace {

// PtxDec's Fig. 7 in small: a loop body of unrolled statements whose subscripts repeat an index
// plus constant offsets, written with a code generator's parentheses.
const char* kUnrolledKernel =
    "__global__ void conv(float* out, const float* a, const float* b, int n) {\n"
    "  for (int k = 0; k < n; ++k) {\n"
    "    out[((((int)threadIdx.x >> 3) * 64) + k)] = (out[((((int)threadIdx.x >> 3) * 64) + k)] + "
    "(a[((k * 16) + ((int)threadIdx.x & 7))] * b[(k * 8)]));\n"
    "    out[(((((int)threadIdx.x >> 3) * 64) + k) + 1)] = (out[(((((int)threadIdx.x >> 3) * 64) + k) + 1)] + "
    "(a[(((k * 16) + ((int)threadIdx.x & 7)) + 8)] * b[((k * 8) + 1)]));\n"
    "  }\n"
    "}\n";

const char* kWrittenBetweenKernel =
    "__global__ void rows(float* out, int n) {\n"
    "  int row = (int)blockIdx.x;\n"
    "  out[row * 64 + ((int)threadIdx.x & 7) * 2] = 1.0f;\n"
    "  out[row * 64 + ((int)threadIdx.x & 7) * 2 + 1] = 1.0f;\n"
    "  row = row + n;\n"
    "  out[row * 64 + ((int)threadIdx.x & 7) * 2] = 2.0f;\n"
    "}\n";

const char* kTwoLoopsKernel =
    "__global__ void twice(float* out, const float* in) {\n"
    "  for (int i = 0; i < 4; ++i) {\n"
    "    out[i * 32 + ((int)threadIdx.x & 31) * 4] = in[i * 32 + ((int)threadIdx.x & 31) * 4] + "
    "in[i * 32 + ((int)threadIdx.x & 31) * 4 + 1];\n"
    "  }\n"
    "  for (int i = 0; i < 4; ++i) {\n"
    "    out[i * 32 + ((int)threadIdx.x & 31) * 4 + 2] = in[i * 32 + ((int)threadIdx.x & 31) * 4 + 2] * 2.0f;\n"
    "  }\n"
    "  for (int i = 0; i < 4; ++i) out[i * 32 + ((int)threadIdx.x & 31) * 4] += in[i * 32 + ((int)threadIdx.x & 31) * "
    "4];\n"
    "}\n";

}  // namespace

TEST_CASE("refactor hoists a repeated index into an int local and keeps its constant offsets") {
  RefactorResult result = refactor_cuda(kUnrolledKernel);
  CHECK(result.text ==
        "__global__ void conv(float* out, const float* a, const float* b, int n) {\n"
        "  for (int k = 0; k < n; ++k) {\n"
        "    int index0 = ((int)threadIdx.x >> 3) * 64 + k;\n"
        "    int index1 = k * 16 + ((int)threadIdx.x & 7);\n"
        "    out[index0] = out[index0] + a[index1] * b[k * 8];\n"
        "    out[index0 + 1] = out[index0 + 1] + a[index1 + 8] * b[k * 8 + 1];\n"
        "  }\n"
        "}\n");
  // Measured on the texts alone: the four index0 subscripts and the two index1 ones were
  // repeated arithmetic; what is left repeated is `index0 + 1` and `k * 8` (too short to name),
  // each written twice.
  CHECK(result.repeated_index_characters_before > 150);
  CHECK(result.repeated_index_characters_after == 2 * std::string("index0 + 1k * 8").size());
  CHECK(result.device_body_characters_after < result.device_body_characters_before);
}

TEST_CASE("refactor does not hoist an index across a write to one of its operands") {
  CHECK(refactored(kWrittenBetweenKernel) ==
        "__global__ void rows(float* out, int n) {\n"
        "  int row = (int)blockIdx.x;\n"
        "  int index0 = row * 64 + ((int)threadIdx.x & 7) * 2;\n"
        "  out[index0] = 1.0f;\n"
        "  out[index0 + 1] = 1.0f;\n"
        "  row = row + n;\n"
        "  out[row * 64 + ((int)threadIdx.x & 7) * 2] = 2.0f;\n"
        "}\n");
  // A call that may take the parameter by reference writes it too, for either pass.
  check_unchanged(
      "__device__ void step(int& j);\n"
      "__global__ void k(float* out, int j) {\n"
      "  out[j * 4096 + ((int)blockIdx.x >> 2) * 1024 + ((int)threadIdx.x & 7) * 2] = 1.0f;\n"
      "  step(j);\n"
      "  out[j * 4096 + ((int)blockIdx.x >> 2) * 1024 + ((int)threadIdx.x & 7) * 2] = 2.0f;\n"
      "}\n");
}

TEST_CASE("refactor defines a loop variable's index inside each loop body, never around the loop") {
  std::string text = refactored(kTwoLoopsKernel);
  CAPTURE(text);
  CHECK(text.find("  for (int i = 0; i < 4; ++i) {\n    int index0 = i * 32 + index_term;\n"
                  "    out[index0] = in[index0] + in[index0 + 1];\n  }\n") != std::string::npos);
  CHECK(text.find("  for (int i = 0; i < 4; ++i) {\n    int index1 = i * 32 + index_term;\n"
                  "    out[index1 + 2] = in[index1 + 2] * 2.0f;\n  }\n") != std::string::npos);
  // A body without braces has no place for a declaration: its indices stay written out.
  CHECK(text.find("for (int i = 0; i < 4; ++i) out[i * 32 + index_term] += in[i * 32 + index_term];") !=
        std::string::npos);
  CHECK(text.find("const int index_term = ((int)threadIdx.x & 31) * 4;") != std::string::npos);
  // The loop variable is written after the uses, in the loop's own body: each iteration
  // declares the local again.
  CHECK(refactored("__global__ void k(float* out) {\n"
                   "  int j = 0;\n"
                   "  while (j < 8) { out[j * 64 + ((int)threadIdx.x & 7) * 2] = out[j * 64 + ((int)threadIdx.x & 7) * "
                   "2 + 1]; ++j; }\n"
                   "}\n") ==
        "__global__ void k(float* out) {\n"
        "  int j = 0;\n"
        "  while (j < 8) { int index0 = j * 64 + ((int)threadIdx.x & 7) * 2; out[index0] = out[index0 + 1]; ++j; }\n"
        "}\n");
}

TEST_CASE("refactoring a refactored kernel changes nothing more") {
  for (const char* kernel : {kUnrolledKernel, kWrittenBetweenKernel, kTwoLoopsKernel, kTwoIndexKernel}) {
    std::string once = refactored(kernel);
    CHECK(refactored(once) == once);
  }
  auto catalog = load_default_generator_catalog(TAILFORGE_SOURCE_DIR);
  REQUIRE_MESSAGE(catalog.ok(), catalog.message());
  for (const std::string& domain : generator_domains()) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      GenerationRequest request;
      request.seed = seed;
      request.domain = domain;
      auto program = generate_program(*catalog, request);
      REQUIRE_MESSAGE(program.ok(), program.message());
      std::string once = refactored(program->source);
      CHECK_MESSAGE(refactored(once) == once, domain, " seed ", seed);
    }
  }
}

TEST_CASE("kernels with hoisted index locals compile with nvcc") {
  if (!testing::nvcc_here()) return;
  const std::string nvcc = testing::nvcc_path();
  fs::path dir =
      fs::temp_directory_path() /
      ("tailforge_refactor_c_" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  fs::create_directories(dir);
  std::string source = "__device__ void step(int& j) { ++j; }\n";
  for (const char* kernel : {kUnrolledKernel, kWrittenBetweenKernel, kTwoLoopsKernel, kTwoIndexKernel})
    source += refactored(kernel);
  std::ofstream(dir / "kernels.cu") << source;
  ProcessSpec spec;
  spec.argv = {nvcc, "-c", (dir / "kernels.cu").string(), "-o", (dir / "kernels.o").string()};
  spec.timeout_seconds = 300;
  ProcessResult built = run_process(spec);
  CHECK_MESSAGE(built.succeeded(), source, "\n", built.stderr_text);
  fs::remove_all(dir);
}

namespace {

ProcessResult run_command(std::vector<std::string> argv, double timeout_seconds) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout_seconds = timeout_seconds;
  return run_process(spec);
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_text(const fs::path& path) {
  std::ostringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("refactor keeps generated programs compiling and printing the same output") {
  if (!testing::nvcc_here()) return;
  const std::string nvcc = testing::nvcc_path();
  auto catalog = load_default_generator_catalog(TAILFORGE_SOURCE_DIR);
  REQUIRE_MESSAGE(catalog.ok(), catalog.message());
  fs::path dir = fs::temp_directory_path() /
                 ("tailforge_refactor_" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  fs::create_directories(dir);
  auto files = write_generated_programs(*catalog, 24, 3, dir.string());
  REQUIRE_MESSAGE(files.ok(), files.message());
  bool gpu = testing::nvidia_gpu_here("the programs compile; their outputs are not compared");
  size_t changed = 0;
  for (const std::string& file : *files) {
    std::string original = read_text(dir / file);
    RefactorResult result = refactor_cuda(original);
    if (result.text == original) continue;
    ++changed;
    fs::path stem = dir / fs::path(file).stem();
    write_text(stem.string() + ".refactored.cu", result.text);
    ProcessResult built =
        run_command({nvcc, "-arch=sm_90", "-o", stem.string() + ".refactored", stem.string() + ".refactored.cu"}, 300);
    CHECK_MESSAGE(built.succeeded(), file, ": ", built.stderr_text);
    if (!gpu || !built.succeeded()) continue;
    ProcessResult base_built = run_command({nvcc, "-arch=sm_90", "-o", stem.string(), (dir / file).string()}, 300);
    REQUIRE_MESSAGE(base_built.succeeded(), base_built.stderr_text);
    ProcessResult want = run_command({stem.string()}, 60);
    ProcessResult got = run_command({stem.string() + ".refactored"}, 60);
    CompareResult compared = compare_outputs(want.stdout_text, got.stdout_text);
    CHECK_MESSAGE(compared.equal, file, ": ", compared.message);
  }
  MESSAGE(changed, " of ", files->size(), " generated programs changed by the refactoring");
  fs::remove_all(dir);
}
