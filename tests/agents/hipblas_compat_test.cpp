// tailforge_hipblas.h through the translator: a CUDA program using the cuBLAS calls beyond fp32
// GEMM (tests/data/hip_compat/cublas_beyond_sgemm.cu, which checks its own results) translates
// with nothing left, compiles for gfx1100, and on an NVIDIA GPU computes what cuBLAS computes.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>

#include "agents/translate/hipify.h"
#include "base/process.h"
#include "test_support/read_whole_file.h"
#include "test_support/shipped_hipify_rules.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const std::string kProgram = std::string(TAILFORGE_TEST_DATA) + "/hip_compat/cublas_beyond_sgemm.cu";
const std::string kCompatDir = std::string(TAILFORGE_SOURCE_DIR) + "/verifier/hip_compat";
const std::string kHipOnCudaDir = std::string(TAILFORGE_SOURCE_DIR) + "/verifier/hip_on_cuda";

TranslationResult translated_program() {
  std::string cuda = read_whole_file(kProgram);
  REQUIRE_MESSAGE(!cuda.empty(), "cannot read " << kProgram);
  return translate_cuda_to_hip(shipped_hipify_rules(), cuda);
}

// The translated program, written as program.hip in `dir`; its path.
std::string write_translation(const TempDir& dir) {
  TranslationResult r = translated_program();
  REQUIRE_MESSAGE(r.ok, r.message);
  std::string hip = dir.file("program.hip");
  write_tree_file(hip, r.hip_source);
  return hip;
}

ProcessResult run_command(std::vector<std::string> argv, double timeout_seconds) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout_seconds = timeout_seconds;
  return run_process(spec);
}


}  // namespace

TEST_CASE("cuBLAS transfers, level 1, pointer modes, fp64 products and status strings translate with nothing left") {
  TranslationResult r = translated_program();
  CHECK_MESSAGE(r.ok, r.message);
  CHECK(r.issues.empty());
  CHECK(r.untranslated.empty());
  CHECK(r.hip_source.find("#include <tailforge_hipblas.h>") != std::string::npos);
  for (const char* name : {"hipblasSetMatrixAsync", "hipblasGetVector", "hipblasSetPointerMode",
                           "HIPBLAS_POINTER_MODE_DEVICE", "hipblasPointerMode_t", "hipblasSdot", "hipblasIdamin",
                           "hipblasDnrm2", "hipblasSswap", "hipblasDgemv", "hipblasDger", "hipblasDgemm",
                           "hipblasDgemmStridedBatched", "hipblasStatusToString", "tailforge_hipblasGetStatusName"})
    CHECK_MESSAGE(std::regex_search(r.hip_source, std::regex(std::string("\\b") + name + "\\b")), name);
  // Only the program's own CHECK_CUBLAS macro still says cuBLAS.
  CHECK_FALSE(std::regex_search(r.hip_source, std::regex("\\b(cublas\\w*|CUBLAS_\\w+)")));
}

TEST_CASE("a cuBLAS _v2 spelling translates to the name its plain spelling does") {
  const HipifyRules& rules = shipped_hipify_rules();
  int spellings = 0;
  for (const IdentifierRule& rule : rules.identifiers) {
    if (rule.from.rfind("cublas", 0) != 0 || rule.from.size() < 4 || rule.from.substr(rule.from.size() - 3) != "_v2")
      continue;
    CAPTURE(rule.from);
    ++spellings;
    std::string plain = rule.from.substr(0, rule.from.size() - 3);
    TranslationResult r = translate_cuda_to_hip(rules, "void f() { " + plain + "(h); " + rule.from + "(h); }\n");
    CHECK(r.ok);
    CHECK(r.hip_source.find("void f() { " + rule.to + "(h); " + rule.to + "(h); }") != std::string::npos);
  }
  CHECK(spellings >= 25);
}

TEST_CASE("the translated cuBLAS program compiles for gfx1100 with the same clang") {
  if (!testing::tools_here({"hip_clang"})) return;
  if (!fs::exists("/usr/include/hip")) {
    testing::skip(testing::Missing::setup_tool, "the HIP headers are not in /usr/include/hip (hipcc installs them)");
    return;
  }
  TempDir dir;
  std::string hip = write_translation(dir);
  ProcessResult compiled =
      run_command({detected_toolchains().tool("hip_clang").path, "-x", "hip", "-std=c++17", "--rocm-path=/usr", "--cuda-device-only", "-S", "-nogpulib",
                   "--offload-arch=gfx1100", "-I", kCompatDir, hip, "-o", dir.file("program.s")},
                  300);
  CHECK_MESSAGE(compiled.succeeded(), compiled.stderr_text);
}

// HIP on NVIDIA (verifier/hip_on_cuda, as the verifier's hip_on_nvidia stages build it): the
// translation compiles wherever nvcc is; with a GPU it runs, checks its own results, and prints
// what the CUDA original prints with cuBLAS.
TEST_CASE("the translated cuBLAS program computes cuBLAS's results on an NVIDIA GPU through HIP on NVIDIA") {
  if (!testing::nvcc_here()) return;
  const std::string nvcc = testing::nvcc_path();
  TempDir dir;
  std::string hip = write_translation(dir);
  ProcessResult compiled = run_command(
      {nvcc, "-I", kHipOnCudaDir, "-I", kCompatDir, "-x", "cu", hip, "-o", dir.file("hip_on_nvidia")}, 300);
  REQUIRE_MESSAGE(compiled.succeeded(), compiled.stderr_text);
  if (!testing::nvidia_gpu_here("the translation compiled but did not run")) return;
  ProcessResult translation = run_command({dir.file("hip_on_nvidia")}, 120);
  CHECK_MESSAGE(translation.succeeded(), translation.stdout_text, translation.stderr_text);
  CHECK(translation.stdout_text.find("all results right") != std::string::npos);

  ProcessResult original_built = run_command({nvcc, kProgram, "-o", dir.file("original"), "-lcublas"}, 300);
  REQUIRE_MESSAGE(original_built.succeeded(), original_built.stderr_text);
  ProcessResult original = run_command({dir.file("original")}, 120);
  CHECK_MESSAGE(original.succeeded(), original.stdout_text, original.stderr_text);
  CHECK(translation.stdout_text == original.stdout_text);
}
