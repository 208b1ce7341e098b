#include "agents/translate/tree_translate.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/files.h"
#include "test_support/run_tailforge.h"
#include "test_support/shipped_hipify_rules.h"
#include "test_support/temp_dir.h"
#include "verifier/stage_runner.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const HipifyRules& rules() { return shipped_hipify_rules(); }

std::string read(const fs::path& path) { return read_text_file_or_empty(path.string()); }

// A small tree as people write them: a shared helper header with an error-check macro and its own
// cudaError_t-named helper, programs that include it, a library the ROCm lacks, and non-source files.
void make_tree(const fs::path& root) {
  write_tree_file((root / "common/check.cuh").string(),
        "#pragma once\n#include <cuda_runtime.h>\n#include <cstdio>\n"
        "#define CUDA_CHECK(call) do { cudaError_t cudaStatus = (call); if (cudaStatus != cudaSuccess) "
        "printf(\"%s\\n\", cudaGetErrorString(cudaStatus)); } while (0)\n");
  write_tree_file((root / "apps/scale.cu").string(),
        "#include \"../common/check.cuh\"\n__global__ void scale(float* p) { p[threadIdx.x] *= 2.0f; }\n"
        "int main() { float* d; CUDA_CHECK(cudaMalloc(&d, 128)); scale<<<1, 32>>>(d);\n"
        "  CUDA_CHECK(cudaDeviceSynchronize()); cudaFree(d); return 0; }\n");
  write_tree_file((root / "apps/fft.cu").string(), "#include <cufft.h>\nint main() { cufftHandle plan; return 0; }\n");
  write_tree_file((root / "apps/timing.cu").string(),
        "#include <helper_timer.h>\nint main() { StopWatchInterface* t; sdkCreateTimer(&t); return 0; }\n");
  write_tree_file((root / "README.md").string(), "# a tree\n");
  write_tree_file((root / "data.bin").string(), std::string("\x7f" "ELF\0\0binary", 12));
}

}  // namespace

TEST_CASE("a tree is translated once: programs and headers together, with one report for all") {
  TempDir dir;
  fs::path source = dir.file("src"), out = dir.file("out");
  make_tree(source);
  fs::create_symlink(source / "apps", source / "loop");  // a link back into the tree is skipped, named
  TreeTranslateOptions options;
  options.compat_dir = std::string(TAILFORGE_SOURCE_DIR) + "/verifier/hip_compat";
  Result<TreeTranslation> t = translate_tree(rules(), source.string(), out.string(), options);
  REQUIRE_MESSAGE(t.ok(), t.message());
  CHECK(t->translated == 4);
  CHECK(t->with_issues == 1);
  CHECK(t->copied == 2);
  CHECK(t->skipped == 1);

  std::string header = read(out / "common/check.cuh");
  CHECK(header.find("hip/hip_runtime.h") != std::string::npos);
  CHECK(header.find("hipError_t cudaStatus") != std::string::npos);  // the program's own name is kept
  CHECK(header.find("hipGetErrorString") != std::string::npos);
  std::string program = read(out / "apps/scale.cu");
  CHECK(program.find("hipMalloc") != std::string::npos);
  CHECK(program.find("#include \"../common/check.cuh\"") != std::string::npos);
  CHECK(read(out / "README.md") == "# a tree\n");
  CHECK(read(out / "data.bin").size() == 12);
  CHECK(fs::exists(out / kCompatSubdir / "tailforge_samples_helpers.h"));

  auto report = nlohmann::json::parse(read(out / "tailforge_translate.json"));
  CHECK(report["compat_headers"] == nlohmann::json::array({"tailforge_samples_helpers.h"}));
  bool fft_named = false, loop_named = false;
  for (const auto& file : report["files"]) {
    if (file["path"] == "apps/fft.cu") {
      CHECK(file["ok"] == false);
      CHECK(file["issues"][0]["category"] == "translate.unsupported.library.cufft");
      CHECK(file["issues"][0]["line"] == 1);
      CHECK(file["untranslated"].dump().find("cufftHandle") != std::string::npos);
      fft_named = true;
    }
    if (file["path"] == "loop") {
      CHECK(file["action"] == "skipped");
      CHECK(file["reason"] == "symlink");
      loop_named = true;
    }
    if (file["path"] == "common/check.cuh") CHECK(file["untranslated"].empty());
  }
  CHECK(fft_named);
  CHECK(loop_named);
}

TEST_CASE("translate refuses an output folder inside the tree and a missing tree") {
  TempDir dir;
  make_tree(dir.file("src"));
  TreeTranslateOptions options;
  options.compat_dir = std::string(TAILFORGE_SOURCE_DIR) + "/verifier/hip_compat";
  auto inside = translate_tree(rules(), dir.file("src"), dir.file("src/out"), options);
  REQUIRE_FALSE(inside.ok());
  CHECK(inside.message().find("inside the tree") != std::string::npos);
  CHECK_FALSE(translate_tree(rules(), dir.file("missing"), dir.file("out"), options).ok());
}

TEST_CASE("tailforge translate --tree writes the tree and names what it left untranslated") {
  TempDir dir;
  make_tree(dir.file("src"));
  ProcessResult run = run_tailforge({"translate", "--tree", dir.file("src"), "--out", dir.file("out")});
  CHECK(run.exit_code == 1);  // one file keeps an untranslatable construct
  CHECK(run.stdout_text.find("translated 4 files (1 with constructs left untranslated), copied 2, skipped 0") !=
        std::string::npos);
  CHECK(run.stdout_text.find("compatibility headers copied into " + dir.file("out") + "/tailforge_compat") !=
        std::string::npos);
  CHECK(run.stderr_text.find("apps/fft.cu:1: translate.unsupported.library.cufft") != std::string::npos);
  CHECK(run.stderr_text.find("apps/fft.cu: untranslated CUDA identifier, line 2: cufftHandle") != std::string::npos);
  CHECK(fs::exists(dir.file("out") + "/apps/scale.cu"));

  run = run_tailforge({"translate", "--tree", dir.file("src")});
  CHECK(run.exit_code == 2);
  CHECK(run.stderr_text.find("--tree SRC --out DST") != std::string::npos);
}
