// The translator on code people write: a file is always translated as far as it goes, what stays
// CUDA is named, and a shared helper header's sections for libraries the program does not use
// (inactive under HIP) never fail the programs that include it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/translate/hipify.h"
#include "agents/translate/tree_translate.h"
#include "base/files.h"
#include "base/process.h"
#include "test_support/run_tailforge.h"
#include "test_support/shipped_hipify_rules.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/stage_runner.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const HipifyRules& rules() { return shipped_hipify_rules(); }

std::string read(const fs::path& path) { return read_text_file_or_empty(path.string()); }

// A helper header the way sample collections write one: an error check for every library, each
// behind the guard macro that library's header defines, plus dead code and a version check.
const char* kHelperHeader =
    "#pragma once\n"
    "#include <cuda_runtime.h>\n"
    "#include <cstdio>\n"
    "#include <cstdlib>\n"
    "#ifdef __cuda_cuda_h__\n"
    "static const char* errorName(CUresult error) { const char* s = nullptr; cuGetErrorName(error, &s); return s; }\n"
    "#endif\n"
    "#ifdef CUBLAS_API_H_\n"
    "static const char* errorName(cublasStatus_t error) {\n"
    "  switch (error) { case CUBLAS_STATUS_SUCCESS: return \"CUBLAS_STATUS_SUCCESS\"; default: return \"?\"; }\n"
    "}\n"
    "#endif\n"
    "#ifdef _CUFFT_H_\n"
    "static const char* errorName(cufftResult error) { return error == CUFFT_SUCCESS ? \"ok\" : \"?\"; }\n"
    "#endif\n"
    "#ifdef CUSPARSEAPI\n"
    "static const char* errorName(cusparseStatus_t error) { return cusparseGetErrorString(error); }\n"
    "#endif\n"
    "#if 0\n"
    "__device__ void old_wait() { __nanosleep(100); }\n"
    "#endif\n"
    "#if CUDART_VERSION >= 12000\n"
    "static void newest() { cudaFrobnicateWidgets(0); }\n"
    "#endif\n"
    "static const char* errorName(cudaError_t error) { return cudaGetErrorName(error); }\n"
    "template <typename T> void check(T result, const char* what, const char* file, int line) {\n"
    "  if (result) {\n"
    "    fprintf(stderr, \"error at %s:%d '%s': %s\\n\", file, line, what, errorName(result));\n"
    "    exit(EXIT_FAILURE);\n"
    "  }\n"
    "}\n"
    "#define checkErrors(val) check((val), #val, __FILE__, __LINE__)\n"
    "inline int pickDevice() { int n = 0; checkErrors(cudaGetDeviceCount(&n)); checkErrors(cudaSetDevice(0)); return 0; }\n";

void make_tree(const fs::path& root) {
  write_tree_file((root / "common/check_helpers.h").string(), kHelperHeader);
  write_tree_file((root / "add/add.cu").string(),
                  "#include \"../common/check_helpers.h\"\n"
                  "__global__ void add(const float* a, float* b, int n) {\n"
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] += a[i];\n}\n"
                  "int main() {\n  pickDevice(); float *a, *b;\n"
                  "  checkErrors(cudaMalloc(&a, 256 * sizeof(float))); checkErrors(cudaMalloc(&b, 256 * sizeof(float)));\n"
                  "  add<<<1, 256>>>(a, b, 256); checkErrors(cudaGetLastError());\n"
                  "  checkErrors(cudaDeviceSynchronize()); cudaFree(a); cudaFree(b); return 0;\n}\n");
  write_tree_file((root / "scale/scale.cu").string(),
                  "#include <common/check_helpers.h>\n#include <helper_timer.h>\n"
                  "__global__ void scale(float* p, float f) { p[threadIdx.x] *= f; }\n"
                  "int main() {\n  StopWatchInterface* timer = nullptr; sdkCreateTimer(&timer);\n"
                  "  float* p; checkErrors(cudaMalloc(&p, 128 * sizeof(float)));\n"
                  "  scale<<<1, 128>>>(p, 2.0f); checkErrors(cudaDeviceSynchronize());\n"
                  "  printf(\"%f\\n\", sdkGetTimerValue(&timer)); cudaFree(p); return 0;\n}\n");
}

// Compiles a HIP file's device code for gfx1100 with hipcc and only the given include folders.
ProcessResult compile_for_gfx1100(const fs::path& file, const std::vector<std::string>& include_dirs) {
  ProcessSpec spec;
  spec.argv = {"hipcc", "-x", "hip", "-std=c++17", "--offload-arch=gfx1100", "--cuda-device-only", "-S", "-nogpulib"};
  for (const std::string& dir : include_dirs) spec.argv.insert(spec.argv.end(), {"-I", dir});
  spec.argv.insert(spec.argv.end(), {file.string(), "-o", file.string() + ".s"});
  spec.timeout_seconds = 300;
  return run_process(spec);
}

// hipcc for the gfx1100 compile (and hipSPARSE's headers where asked): installed by setup.sh.
bool have_hipcc(bool with_hipsparse = false) {
  if (!testing::tools_here({"hipcc"}, "compiling for gfx1100")) return false;
  if (!with_hipsparse || fs::exists("/usr/include/hipsparse/hipsparse.h")) return true;
  testing::skip(testing::Missing::setup_tool, "hipSPARSE's headers not found (libhipsparse-dev)");
  return false;
}

}  // namespace

TEST_CASE("a helper header's inactive library sections are translated where they can be and never fail a file") {
  TranslationContext context;
  TranslationResult header = translate_cuda_to_hip(rules(), kHelperHeader, context);
  INFO(header.message);
  CHECK(header.ok);
  CHECK(header.untranslated.empty());
  std::string warnings;
  for (const std::string& warning : header.warnings) warnings += warning + "\n";
  CAPTURE(warnings);
  // What stays is said, with the directive that leaves it out of the HIP compile.
  CHECK(warnings.find("cufftResult kept, in #ifdef _CUFFT_H_ at line 13") != std::string::npos);
  CHECK(warnings.find("(translate.unsupported.nanosleep): kept, in #if 0 at line 19") != std::string::npos);
  CHECK(warnings.find("cudaFrobnicateWidgets kept, in #if CUDART_VERSION >= 12000 at line 22") != std::string::npos);
  CHECK(header.hip_source.find("hipGetErrorName(error)") != std::string::npos);
  CHECK(header.hip_source.find("hipSetDevice(0)") != std::string::npos);
  // The same constructs where the HIP compile sees them are failures, as before.
  TranslationResult active = translate_cuda_to_hip(rules(), "__device__ void wait() { __nanosleep(100); }\n", context);
  CHECK_FALSE(active.ok);
  CHECK(active.category == "translate.unsupported.nanosleep");
}

TEST_CASE("every program including the helper header translates, and compiles for gfx1100 with no tailforge path") {
  TempDir dir;
  fs::path source = dir.file("src"), out = dir.file("out");
  make_tree(source);
  TreeTranslateOptions options;
  options.compat_dir = std::string(TAILFORGE_SOURCE_DIR) + "/verifier/hip_compat";
  Result<TreeTranslation> tree = translate_tree(rules(), source.string(), out.string(), options);
  REQUIRE_MESSAGE(tree.ok(), tree.message());
  CHECK(tree->translated == 3);
  CHECK(tree->with_issues == 0);
  for (const TreeFileReport& file : tree->files) {
    CAPTURE(file.path);
    CHECK(file.ok);
    CHECK(file.untranslated.empty());
  }
  // The compatibility header the timer needs is in the output and included by relative path.
  CHECK(fs::exists(out / kCompatSubdir / "tailforge_samples_helpers.h"));
  CHECK(read(out / "scale/scale.cu").find("#include \"../tailforge_compat/tailforge_samples_helpers.h\"") !=
        std::string::npos);
  if (!have_hipcc()) return;
  for (const char* program : {"add/add.cu", "scale/scale.cu"}) {
    CAPTURE(program);
    // The tree's own include root, as its build has it (-I src for <common/check_helpers.h>); nothing of tailforge's.
    ProcessResult compiled = compile_for_gfx1100(out / program, {out.string()});
    CHECK_MESSAGE(compiled.exit_code == 0, compiled.stderr_text.substr(0, 4000));
  }
}

TEST_CASE("translate writes a file with one unsupported construct, everything else translated, and exits 1") {
  TempDir dir;
  std::string file = dir.file("lane.cu");
  write_tree_file(file,
                  "#include <cuda_runtime.h>\n"
                  "__device__ int lane() { int r; asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(r)); return r; }\n"
                  "__global__ void k(int* out) { out[threadIdx.x] = lane(); }\n"
                  "int main() { int* d; cudaMalloc(&d, 128); k<<<1, 32>>>(d); cudaDeviceSynchronize(); cudaFree(d); }\n");
  ProcessResult run = run_tailforge({"translate", file});
  CHECK(run.exit_code == 1);
  CHECK(run.stdout_text.find("#include <hip/hip_runtime.h>") != std::string::npos);
  CHECK(run.stdout_text.find("hipMalloc(&d, 128)") != std::string::npos);
  CHECK(run.stdout_text.find("hipDeviceSynchronize()") != std::string::npos);
  CHECK(run.stdout_text.find("asm volatile(\"mov.u32 %0, %%laneid;\"") != std::string::npos);  // kept as it was
  CHECK(run.stderr_text.find(file + ":2: translate.unsupported.inline_ptx") != std::string::npos);

  // A CUDA identifier with no HIP counterpart is left and named: exit 1 as well.
  std::string left = dir.file("left.cu");
  write_tree_file(left, "#include <cuda_runtime.h>\nint main() { cudaFrobnicateWidgets(0); return 0; }\n");
  run = run_tailforge({"translate", left});
  CHECK(run.exit_code == 1);
  CHECK(run.stdout_text.find("cudaFrobnicateWidgets(0)") != std::string::npos);
  CHECK(run.stderr_text.find("untranslated CUDA identifier, line 2: cudaFrobnicateWidgets") != std::string::npos);

  // Nothing left: exit 0, nothing on stderr but warnings.
  std::string clean = dir.file("clean.cu");
  write_tree_file(clean, "#include <cuda_runtime.h>\nint main() { float* d; cudaMalloc(&d, 4); cudaFree(d); return 0; }\n");
  run = run_tailforge({"translate", clean});
  CHECK(run.exit_code == 0);
  CHECK(run.stdout_text.find("hipFree(d)") != std::string::npos);
}

TEST_CASE("a library this ROCm lacks is named in the category; cuSPARSE becomes hipSPARSE") {
  TranslationResult blas = translate_cuda_to_hip(
      rules(), "#include <cublas_v2.h>\nint main() { cublasHandle_t h; cublasCreate(&h);\n"
               "  double a = 1; cublasDtrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,\n"
               "    CUBLAS_DIAG_UNIT, 1, 1, &a, nullptr, 1, nullptr, 1); return 0; }\n");
  CHECK_FALSE(blas.ok);
  CHECK(blas.category == "translate.unsupported.library.cublas");
  CHECK(blas.message.find("cublasDtrsm") != std::string::npos);
  CHECK(blas.issues.size() == 1);  // one issue per library, however many of its names are left

  std::string cusparse =
      "#include <cusparse.h>\n#include <cstdio>\n"
      "int main() {\n  cusparseHandle_t handle; cusparseMatDescr_t descr;\n"
      "  if (cusparseCreate(&handle) != CUSPARSE_STATUS_SUCCESS) return 1;\n"
      "  cusparseCreateMatDescr(&descr); cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO);\n"
      "  cusparseDestroyMatDescr(descr); cusparseDestroy(handle); printf(\"ok\\n\"); return 0;\n}\n";
  TranslationResult sparse = translate_cuda_to_hip(rules(), cusparse);
  INFO(sparse.message);
  REQUIRE(sparse.ok);
  CHECK(sparse.untranslated.empty());
  CHECK(sparse.hip_source.find("#include <hipsparse/hipsparse.h>") != std::string::npos);
  CHECK(sparse.hip_source.find("hipsparseSetMatIndexBase(descr, HIPSPARSE_INDEX_BASE_ZERO)") != std::string::npos);
  if (!have_hipcc(true)) return;
  TempDir dir;
  write_tree_file(dir.file("sparse.hip"), sparse.hip_source);
  ProcessResult compiled = compile_for_gfx1100(dir.file("sparse.hip"), {});
  CHECK_MESSAGE(compiled.exit_code == 0, compiled.stderr_text.substr(0, 4000));
}

// ---------------------------------------------------------------- helper headers and library glue

namespace {

// A tree the way people's collections write one: a helper header that defines its macros only
// when CUDA's own headers were included (their include guards and API macros), a program using
// them with the make_cuda* helpers and a cache config on a template kernel, and a file saved with
// a byte-order mark and Windows line ends.
void make_glue_tree(const fs::path& root) {
  write_tree_file((root / "inc/glue_helpers.h").string(),
                  "#pragma once\n#include <cstdio>\n#include <cstdlib>\n"
                  "#ifdef __DRIVER_TYPES_H__\n"
                  "#define checkCuda(val) glue_check((val), #val, __FILE__, __LINE__)\n"
                  "template <typename T> void glue_check(T result, const char* what, const char* file, int line) {\n"
                  "  if (result) { std::fprintf(stderr, \"%s:%d: %s\\n\", file, line, what); std::exit(1); }\n}\n"
                  "#endif\n"
                  "#if defined(CUDART_VERSION)\n#define lastCudaError() checkCuda(cudaGetLastError())\n#endif\n"
                  "#ifdef __cuda_cuda_h__\n"
                  "static const char* glueName(CUresult r) { const char* s = nullptr; cuGetErrorName(r, &s); return s; }\n"
                  "#endif\n"
                  "#ifdef CUSPARSEAPI\n"
                  "#define checkSparse(x) do { cusparseStatus_t s_ = (x); if (s_ != CUSPARSE_STATUS_SUCCESS) "
                  "{ std::printf(\"%s\\n\", cusparseGetErrorString(s_)); std::exit(2); } } while (0)\n"
                  "#endif\n"
                  "#ifdef _CUFFT_H_\n#define checkFft(x) (x)\n#endif\n");
  write_tree_file((root / "apps/volume.cu").string(),
                  "#include <cuda_runtime.h>\n#include <cusparse.h>\n#include \"../inc/glue_helpers.h\"\n"
                  "template <int N> __global__ void scaled(float* x) { x[threadIdx.x] *= N; }\n"
                  "int main() {\n"
                  "  cudaExtent extent = make_cudaExtent(4 * sizeof(float), 4, 4);\n"
                  "  cudaPitchedPtr volume; checkCuda(cudaMalloc3D(&volume, extent));\n"
                  "  cudaPos origin = make_cudaPos(0, 0, 0); (void)origin;\n"
                  "  checkCuda(cudaFuncSetCacheConfig(scaled<2>, cudaFuncCachePreferL1));\n"
                  "  cudaFuncAttributes attributes; checkCuda(cudaFuncGetAttributes(&attributes, scaled<3>));\n"
                  "  scaled<2><<<1, 4>>>(static_cast<float*>(volume.ptr)); lastCudaError();\n"
                  "  cusparseHandle_t handle; checkSparse(cusparseCreate(&handle)); cusparseDestroy(handle);\n"
                  "  checkCuda(cudaFree(volume.ptr)); return 0;\n}\n");
  write_tree_file((root / "apps/windows.cu").string(),
                  "\xEF\xBB\xBF#include <cuda_runtime.h>\r\n#include \"../inc/glue_helpers.h\"\r\n"
                  "__global__ void fill(int* p) { p[threadIdx.x] = 7; }\r\n"
                  "int main() { int* d; checkCuda(cudaMalloc(&d, 64)); fill<<<1, 16>>>(d); lastCudaError();\r\n"
                  "  checkCuda(cudaDeviceSynchronize()); return 0; }\r\n");
}

}  // namespace

TEST_CASE("a helper header gating its macros on CUDA's header guards compiles for gfx1100 after translate --tree") {
  TempDir dir;
  fs::path source = dir.file("src"), out = dir.file("out");
  make_glue_tree(source);
  TreeTranslateOptions options;
  options.compat_dir = std::string(TAILFORGE_SOURCE_DIR) + "/verifier/hip_compat";
  Result<TreeTranslation> tree = translate_tree(rules(), source.string(), out.string(), options);
  REQUIRE_MESSAGE(tree.ok(), tree.message());
  for (const TreeFileReport& file : tree->files) {
    CAPTURE(file.path);
    CHECK(file.ok);
    CHECK(file.untranslated.empty());
  }
  std::string helper = read(out / "inc/glue_helpers.h");
  // The runtime's guard and version macro become the HIP runtime headers' guards; cuSPARSE's API
  // macro hipSPARSE's guard. cuda.h's guard has no exact HIP answer (cuda_runtime.h becomes
  // hip_runtime.h too) and cuFFT has no HIP header here: both tests stay, false under HIP.
  CHECK(helper.find("#ifdef HIP_INCLUDE_HIP_DRIVER_TYPES_H\n") != std::string::npos);
  CHECK(helper.find("#if defined(HIP_INCLUDE_HIP_HIP_RUNTIME_API_H)\n") != std::string::npos);
  CHECK(helper.find("#ifdef _HIPSPARSE_H_\n") != std::string::npos);
  CHECK(helper.find("#ifdef __cuda_cuda_h__\n") != std::string::npos);
  CHECK(helper.find("#ifdef _CUFFT_H_\n") != std::string::npos);
  CHECK(helper.find("hipsparseGetErrorString(s_)") != std::string::npos);
  std::string volume = read(out / "apps/volume.cu");
  CHECK(volume.find("make_hipExtent(4 * sizeof(float), 4, 4)") != std::string::npos);
  CHECK(volume.find("make_hipPos(0, 0, 0)") != std::string::npos);
  CHECK(volume.find("hipFuncSetCacheConfig(reinterpret_cast<const void*>(scaled<2>), hipFuncCachePreferL1)") !=
        std::string::npos);
  // The byte-order mark stays first and every line keeps its Windows ending, added lines too.
  std::string windows = read(out / "apps/windows.cu");
  CHECK(windows.rfind("\xEF\xBB\xBF#include <", 0) == 0);
  CHECK(windows.find("#include <hip/hip_runtime.h>\r\n") != std::string::npos);
  size_t bare = 0;
  for (size_t at = windows.find('\n'); at != std::string::npos; at = windows.find('\n', at + 1))
    bare += at == 0 || windows[at - 1] != '\r';
  CHECK(bare == 0);
  if (!have_hipcc(true)) return;
  for (const char* program : {"apps/volume.cu", "apps/windows.cu"}) {
    CAPTURE(program);
    ProcessResult compiled = compile_for_gfx1100(out / program, {out.string()});  // the tree's own root only
    CHECK_MESSAGE(compiled.exit_code == 0, compiled.stderr_text.substr(0, 4000));
  }
}

TEST_CASE("every CUDA name left in code says why: a library, no HIP declaration installed, or not in the table") {
  TranslationResult r = translate_cuda_to_hip(
      rules(), "#include <cuda.h>\n#include <cufft.h>\n"
               "int main() { CUresult e = CUDA_SUCCESS; const char* s = nullptr; cuGetErrorName(e, &s);\n"
               "  cufftHandle plan; cudaFrobnicateWidgets(0);\n"
               "#if CUDART_VERSION >= 99000\n  cudaFrobnicateGadgets(1);\n#endif\n  return 0; }\n");
  std::string left;
  for (const std::string& name : r.untranslated) left += name + "\n";
  CAPTURE(left);
  CHECK(left.find("line 3: cuGetErrorName (no HIP declaration in the installed ROCm)") != std::string::npos);
  CHECK(left.find("line 4: cufftHandle (a cuFFT name: hipFFT is not packaged in Debian 12)") != std::string::npos);
  CHECK(left.find("line 4: cudaFrobnicateWidgets (not in the translation table)") != std::string::npos);
  std::string categories;
  for (const TranslationIssue& issue : r.issues) categories += issue.category + "\n";
  CHECK(categories.find("translate.unsupported.no_hip_declaration") != std::string::npos);
  CHECK(categories.find("translate.unsupported.library.cufft") != std::string::npos);
  std::string warnings;
  for (const std::string& warning : r.warnings) warnings += warning + "\n";
  CHECK(warnings.find("cudaFrobnicateGadgets kept, in #if CUDART_VERSION >= 99000 at line 5") != std::string::npos);
}

TEST_CASE("a guard test is rewritten only where it asks about inclusion alone") {
  TranslationResult r = translate_cuda_to_hip(
      rules(), "#include <cusparse.h>\n"
               "#if defined(CUDART_VERSION) && CUDART_VERSION >= 11000\nint modern;\n#endif\n"
               "#if defined(CUSPARSEAPI) || defined __DRIVER_TYPES_H__\nint sparse;\n#endif\n"
               "#ifndef CUSPARSE_H_\n#error no cusparse\n#endif\n");
  CHECK(r.hip_source.find("#if defined(CUDART_VERSION) && CUDART_VERSION >= 11000\n") != std::string::npos);
  CHECK(r.hip_source.find("#if defined(_HIPSPARSE_H_) || defined HIP_INCLUDE_HIP_DRIVER_TYPES_H\n") != std::string::npos);
  CHECK(r.hip_source.find("#ifndef _HIPSPARSE_H_\n") != std::string::npos);
  // A file that defines the macro itself tests its own definition.
  TranslationResult own = translate_cuda_to_hip(rules(), "#define CUSPARSEAPI\n#ifdef CUSPARSEAPI\nint x;\n#endif\n");
  CHECK(own.hip_source.find("#ifdef CUSPARSEAPI\n") != std::string::npos);
}
