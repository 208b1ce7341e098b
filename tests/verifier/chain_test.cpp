#include "verifier/chain.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "base/process.h"
#include "test_support/pretended_gpu.h"
#include "test_support/tools_here.h"
#include "verifier/amd.h"
#include "verifier/nvidia.h"
#include "verifier/stage_runner.h"

using namespace tailforge;

namespace {

const std::string data_dir = std::string(TAILFORGE_TEST_DATA) + "/verifier";

std::string slurp(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string status_of(const ChainResult& result, const std::string& name) {
  const StageResult* stage = result.stage(name);
  return stage ? stage->status : "<missing>";
}

std::string reason_of(const ChainResult& result, const std::string& name) {
  const StageResult* stage = result.stage(name);
  return stage ? stage->reason : "<missing>";
}

ChainOptions test_options() {
  ChainOptions options;
  options.verifier.sandbox.timeout_seconds = 5;
  return options;
}

// A translator callback as agents/ would pass one: here it hands back the kept HIP version.
TranslateOutcome translate_with_kept_hip(const std::string& cuda_source) {
  if (cuda_source.find("saxpy") == std::string::npos) return {false, "", "translate.unknown", "not saxpy"};
  return {true, slurp(data_dir + "/saxpy.hip"), "", ""};
}

// A compile cache shared by the slower CUDA tests of this process; cold or warm, they check the same.
Database* shared_cache() {
  static std::string path = "/tmp/tf-verifier-shared-cache-" + std::to_string(getpid()) + ".db";
  static Result<Database> db = [] {
    std::filesystem::remove(path);
    return Database::open(path);
  }();
  static const bool cleanup_registered = [] {
    std::atexit([] {
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
    });
    return true;
  }();
  (void)cleanup_registered;
  return db.ok() ? &db.value() : nullptr;
}

struct LaunchCounter {
  std::atomic<int> compilers{0};
  LaunchCounter() {
    set_process_launch_observer([this](const ProcessSpec& spec) {
      std::string tool = std::filesystem::path(spec.argv.front()).filename();
      for (const char* name : {"nvcc", "clang", "llvm-mc", "ld.lld", "gcc", "cuobjdump", "llvm-as", "llvm-dis"}) {
        if (tool.find(name) != std::string::npos) ++compilers;
      }
    });
  }
  ~LaunchCounter() { set_process_launch_observer(nullptr); }
};

// The AMD stages need clang with the AMDGPU backend, the device libraries and llvm-mc; a GPU host
// may have none of them (setup.sh installs them).
bool amd_stages_here() { return testing::amd_tools_here("the AMD stages"); }

}  // namespace

TEST_CASE("a CUDA program yields PTX, cubins for sm_80 and sm_90 and skips GPU runs with a reason") {
  if (!testing::nvcc_here()) return;
  ChainOptions options = test_options();
  options.cache_db = shared_cache();
  ChainResult result = verify_file(data_dir + "/saxpy.cu", options);
  CHECK(result.track == "cuda2hip");
  CHECK(status_of(result, "nvidia.ptx") == "ok");
  CHECK(status_of(result, "nvidia.cubin.sm_80") == "ok");
  CHECK(status_of(result, "nvidia.cubin.sm_90") == "ok");
  CHECK(status_of(result, "nvidia.exe") == "ok");
  CHECK(status_of(result, "nvidia.host_asm") == "ok");
  const StageResult* ptx = result.stage("nvidia.ptx");
  REQUIRE(ptx != nullptr);
  REQUIRE(ptx->artifact("ptx_kernel") != nullptr);
  CHECK(ptx->artifact("ptx_kernel")->name.find("saxpy") != std::string::npos);
  CHECK(ptx->artifact("ptx_kernel")->content.find(".entry") != std::string::npos);
  if (!detected_toolchains().has_gpu("nvidia")) {
    CHECK(status_of(result, "nvidia.run") == "skipped");
    CHECK(reason_of(result, "nvidia.run").find("no NVIDIA GPU") != std::string::npos);
  }
  if (!detected_toolchains().tool("cuobjdump").found() && !detected_toolchains().tool("nvdisasm").found()) {
    CHECK(status_of(result, "nvidia.sass") == "skipped");
  } else {
    CHECK(status_of(result, "nvidia.sass") == "ok");
  }
  CHECK(status_of(result, "translate.hip") == "skipped");
  CHECK(reason_of(result, "amd.asm.gfx1100") == "upstream: translate.hip");
  CHECK(status_of(result, "compare") == "skipped");
  CHECK(result.ok);
}

TEST_CASE("the HIP version yields gfx1100 assembly that llvm-mc assembles and a linked code object") {
  if (!amd_stages_here()) return;
  ChainResult result = verify_file(data_dir + "/saxpy.hip", test_options());
  CHECK(status_of(result, "amd.asm.gfx1100") == "ok");
  CHECK(status_of(result, "amd.assemble.gfx1100") == "ok");
  CHECK(status_of(result, "amd.codeobject.gfx1100") == "ok");
  CHECK(status_of(result, "amd.host_asm") == "ok");
  if (detected_toolchains().tool("nvcc").found()) {
    CHECK(status_of(result, "hip_on_nvidia.exe") == "ok");
  } else {
    CHECK(status_of(result, "hip_on_nvidia.exe") == "skipped");
    CHECK(reason_of(result, "hip_on_nvidia.exe") == "nvcc not found");
  }
  const StageResult* device_asm = result.stage("amd.asm.gfx1100");
  REQUIRE(device_asm != nullptr);
  REQUIRE(device_asm->artifact("rdna3_asm") != nullptr);
  CHECK(device_asm->artifact("rdna3_asm")->content.find("gfx1100") != std::string::npos);
  const StageResult* code_object = result.stage("amd.codeobject.gfx1100");
  REQUIRE(code_object->artifact("code_object") != nullptr);
  CHECK(code_object->artifact("code_object")->content.substr(1, 3) == "ELF");
  CHECK(status_of(result, "amd.run") == "skipped");
  if (!detected_toolchains().has_gpu("nvidia")) CHECK(status_of(result, "hip_on_nvidia.run") == "skipped");
  CHECK(result.ok);
}

TEST_CASE("HIP is compiled for AMD as C++17, the dialect nvcc compiles CUDA in") {
  if (!amd_stages_here()) return;
  ChainOptions options = test_options();
  options.verifier.stages = {"amd."};
  ChainResult result = verify_file(data_dir + "/cxx17.hip", options);
  const StageResult* device_asm = result.stage("amd.asm.gfx1100");
  REQUIRE(device_asm != nullptr);
  CHECK_MESSAGE(device_asm->status == "ok", device_asm->diagnostics);
  CHECK(status_of(result, "amd.host_asm") == "ok");
}

TEST_CASE("with a translator the CUDA chain runs through the AMD stages and HIP on NVIDIA") {
  if (!amd_stages_here() || !testing::nvcc_here("the CUDA program's stages")) return;
  ChainOptions options = test_options();
  std::thread::id translated_on;
  options.translate = [&translated_on](const std::string& cuda) {
    translated_on = std::this_thread::get_id();
    return translate_with_kept_hip(cuda);
  };
  options.cache_db = shared_cache();
  ChainResult result = verify_file(data_dir + "/saxpy.cu", options);
  CHECK(status_of(result, "translate.hip") == "ok");
  CHECK(status_of(result, "amd.codeobject.gfx1100") == "ok");
  CHECK(status_of(result, "hip_on_nvidia.exe") == "ok");
  // The branches ran at once, but the stages read as the chain's order; the translator, which
  // may use the caller's database, was called on the caller's thread.
  CHECK(translated_on == std::this_thread::get_id());
  std::vector<std::string> names;
  for (const StageResult& stage : result.stages) names.push_back(stage.name);
  const std::vector<std::string> expected = {
      "nvidia.ptx", "nvidia.cubin.sm_80", "nvidia.cubin.sm_90", "nvidia.exe", "nvidia.host_asm", "nvidia.sass",
      "nvidia.run", "translate.hip", "amd.asm.gfx1100", "amd.assemble.gfx1100", "amd.codeobject.gfx1100",
      "amd.host_asm", "amd.run", "hip_on_nvidia.exe", "hip_on_nvidia.run", "compare"};
  CHECK(names == expected);
  if (!detected_toolchains().has_gpu("nvidia")) {
    CHECK(reason_of(result, "compare") == "upstream: nvidia.run");
  } else {
    CHECK(status_of(result, "compare") == "ok");
  }
}

TEST_CASE("verifier.stages leaves out the stages that run a program, even where they could run") {
  ChainOptions c_options = test_options();
  c_options.verifier.stages = {"x86.asm", "x86.link"};
  ChainResult c_program = verify_file(data_dir + "/sum_squares.c", c_options);
  CHECK(status_of(c_program, "x86.link") == "ok");
  CHECK(status_of(c_program, "x86.run") == "skipped");
  CHECK(reason_of(c_program, "x86.run") == "disabled by verifier.stages");

  if (!testing::nvcc_here("the CUDA program's half")) return;
  // A host with an NVIDIA GPU, as far as the chain can tell: the runs are left out by the
  // configuration, not by the host.
  ChainOptions options = test_options();
  options.toolchains = &toolchains_with_pretended_nvidia_gpu();
  options.translate = translate_with_kept_hip;
  options.verifier.stages = {"translate", "nvidia.exe", "hip_on_nvidia.exe"};
  ChainResult result = verify_file(data_dir + "/saxpy.cu", options);
  CHECK(status_of(result, "nvidia.exe") == "ok");
  CHECK(status_of(result, "hip_on_nvidia.exe") == "ok");
  for (const char* name : {"nvidia.run", "hip_on_nvidia.run", "compare"}) {
    CAPTURE(name);
    CHECK(status_of(result, name) == "skipped");
    CHECK(reason_of(result, name) == "disabled by verifier.stages");
  }
}

TEST_CASE("a number that changes from run to run of the CUDA program is left out of the compare") {
  if (!testing::nvcc_here() || !testing::nvidia_gpu_here()) return;
  ChainOptions options = test_options();
  options.verifier.amd_targets = {};
  options.translate = [](const std::string&) { return TranslateOutcome{true, slurp(data_dir + "/timed_sum.hip"), "", ""}; };
  ChainResult result = verify_file(data_dir + "/timed_sum.cu", options);
  REQUIRE(status_of(result, "hip_on_nvidia.run") == "ok");
  const StageResult* compare = result.stage("compare");
  REQUIRE(compare != nullptr);
  CHECK_MESSAGE(compare->status == "ok", compare->reason);
  CHECK(compare->diagnostics.find("left out: 1 measurements (a number before a unit), 2 tokens that differ between two runs") != std::string::npos);
  REQUIRE(compare->artifact("stdout") != nullptr);
  CHECK(compare->artifact("stdout")->content.rfind("sum 24570 tag", 0) == 0);
  // The second run is the compare stage's work, so its seconds and CPU count there.
  CHECK(compare->seconds > 0.05);
  CHECK(compare->cpu_seconds > 0);
}

TEST_CASE("the HIP-on-CUDA header compiles a program using much of the HIP runtime subset") {
  if (!testing::nvcc_here()) return;
  ChainOptions options = test_options();
  options.verifier.sm_targets = {"sm_80"};
  options.verifier.amd_targets = {};
  StageContext context{options.verifier, detected_toolchains(), nullptr, nullptr, "/tmp", {}};
  char pattern[] = "/tmp/tf-hip-on-cuda-XXXXXX";
  context.scratch_dir = mkdtemp(pattern);
  run_hip_on_nvidia_stages(context, data_dir + "/hip_api.hip");
  const StageResult* exe = context.find("hip_on_nvidia.exe");
  REQUIRE(exe != nullptr);
  CHECK_MESSAGE(exe->status == "ok", exe->diagnostics);
  std::filesystem::remove_all(context.scratch_dir);
}

TEST_CASE("a failed translation skips what depends on it and fails the chain") {
  ChainOptions options = test_options();
  options.translate = [](const std::string&) { return TranslateOutcome{false, "", "translate.unsupported", "no"}; };
  options.cache_db = shared_cache();
  ChainResult result = verify_file(data_dir + "/saxpy.cu", options);
  CHECK(status_of(result, "translate.hip") == "fail");
  CHECK(reason_of(result, "hip_on_nvidia.exe") == "upstream: translate.hip");
  CHECK_FALSE(result.ok);
}

TEST_CASE("each of the six CASS appendix RDNA3 failures is rejected with llvm-mc's message verbatim") {
  if (!amd_stages_here()) return;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"register_alignment.s", "error: invalid register alignment"},
      {"vgpr_bank_conflict.s", "error: src0 operands must use different VGPR banks"},
      {"hallucinated_instruction.s", "error: invalid instruction"},
      {"multiple_literals.s", "error: only one unique literal operand is allowed"},
      {"undefined_label.s", "error: undefined label '.LBB0_missing'"},
      {"immediate_64bit.s", "error: invalid operand for instruction"},
  };
  for (const auto& [file, message] : cases) {
    ChainResult result = verify_file(data_dir + "/cass_asm/" + file, test_options());
    CHECK(result.track == "sass2rdna3");
    // Assemble fails; the code object and the run are skipped behind it.
    REQUIRE(result.stages.size() == 3);
    CHECK(result.stages[1].name == "amd.codeobject.gfx1100");
    CHECK(result.stages[1].status == "skipped");
    CHECK(result.stages[2].name == "amd.run");
    CHECK(result.stages[2].status == "skipped");
    const StageResult& stage = result.stages.front();
    CHECK(stage.name == "amd.assemble.gfx1100");
    CHECK_MESSAGE(stage.status == "fail", file);
    CHECK_MESSAGE(stage.diagnostics.find(message) != std::string::npos, file << ": " << stage.diagnostics);
    CHECK_FALSE(result.ok);
  }
}

TEST_CASE("verifying the same file twice runs no compiler the second time") {
  if (!amd_stages_here()) return;
  std::string db_path = "/tmp/tf-verifier-cache-" + std::to_string(getpid()) + ".db";
  {
    auto db = Database::open(db_path);
    REQUIRE(db.ok());
    ChainOptions options = test_options();
    options.cache_db = &db.value();
    (void)detected_toolchains();
    LaunchCounter counter;
    ChainResult cold = verify_file(data_dir + "/saxpy.hip", options);
    int cold_launches = counter.compilers.load();
    ChainResult warm = verify_file(data_dir + "/saxpy.hip", options);
    CHECK(cold_launches >= 4);
    CHECK(counter.compilers.load() == cold_launches);
    REQUIRE(cold.stages.size() == warm.stages.size());
    for (size_t i = 0; i < cold.stages.size(); ++i) {
      CHECK(cold.stages[i].status == warm.stages[i].status);
      if (warm.stages[i].status == "ok") CHECK_MESSAGE(warm.stages[i].cached, warm.stages[i].name);
      CHECK(cold.stages[i].artifacts.size() == warm.stages[i].artifacts.size());
    }
    const StageResult* code_object = warm.stage("amd.codeobject.gfx1100");
    REQUIRE(code_object != nullptr);
    CHECK(code_object->artifact("code_object")->content ==
          cold.stage("amd.codeobject.gfx1100")->artifact("code_object")->content);
  }
  std::filesystem::remove(db_path);
  std::filesystem::remove(db_path + "-wal");
  std::filesystem::remove(db_path + "-shm");
}

TEST_CASE("a changed header of the program's own is no compile cache hit") {
  if (!amd_stages_here()) return;
  std::string dir = "/tmp/tf-verifier-header-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::string db_path = dir + "/cache.db";
  auto write = [](const std::string& path, const std::string& text) { std::ofstream(path) << text; };
  write(dir + "/scale.h", "#define SCALE 2.0f\n");
  write(dir + "/scale.hip",
        "#include <hip/hip_runtime.h>\n#include \"scale.h\"\n"
        "__global__ void scale(float* x) { x[threadIdx.x] *= SCALE; }\n");
  {
    auto db = Database::open(db_path);
    REQUIRE(db.ok());
    ChainOptions options = test_options();
    options.cache_db = &db.value();
    options.include_dirs = {dir};  // as a bundle's: the program's own folder
    ChainResult cold = verify_file(dir + "/scale.hip", options);
    REQUIRE(status_of(cold, "amd.asm.gfx1100") == "ok");
    ChainResult warm = verify_file(dir + "/scale.hip", options);
    CHECK(warm.stage("amd.asm.gfx1100")->cached);
    write(dir + "/scale.h", "#define SCALE 3.0f\n");
    ChainResult changed = verify_file(dir + "/scale.hip", options);
    REQUIRE(status_of(changed, "amd.asm.gfx1100") == "ok");
    CHECK_FALSE(changed.stage("amd.asm.gfx1100")->cached);
    CHECK(changed.stage("amd.asm.gfx1100")->artifacts.front().content !=
          cold.stage("amd.asm.gfx1100")->artifacts.front().content);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a C program is compiled by gcc -O0, linked, run in the sandbox and checked against its expected output") {
  ChainResult result = verify_file(data_dir + "/sum_squares.c", test_options());
  CHECK(result.track == "c2x86");
  CHECK(status_of(result, "x86.asm") == "ok");
  CHECK(status_of(result, "x86.run") == "ok");
  CHECK(result.stage("x86.asm")->artifact("x86_asm")->content.find("main:") != std::string::npos);
  ChainOptions wrong = test_options();
  wrong.expected_stdout = "total 1 scaled 2.000\n";
  ChainResult mismatch = verify_file(data_dir + "/sum_squares.c", wrong);
  CHECK(status_of(mismatch, "x86.run") == "fail");
  CHECK(reason_of(mismatch, "x86.run").find("expected '1'") != std::string::npos);
  CHECK_FALSE(mismatch.ok);
}

TEST_CASE("an endless C program is a timeout stage, and several chains run at once") {
  std::string dir = "/tmp/tf-chain-test-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/spin.c") << "int main(void){ volatile int x = 0; for(;;) ++x; }\n";
  ChainOptions options = test_options();
  options.verifier.sandbox.timeout_seconds = 0.5;
  std::vector<ChainResult> results(3);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      results[i] = verify_file(i == 0 ? dir + "/spin.c" : data_dir + "/sum_squares.c", options);
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(status_of(results[0], "x86.run") == "timeout");
  CHECK(status_of(results[1], "x86.run") == "ok");
  CHECK(status_of(results[2], "x86.run") == "ok");
  std::filesystem::remove_all(dir);
}

TEST_CASE("the chain JSON has the agreed keys in order and unknown inputs are an error stage") {
  if (!testing::tools_here({"llvm_mc"})) return;
  ChainResult result = verify_file(data_dir + "/cass_asm/hallucinated_instruction.s", test_options());
  std::string json = chain_result_to_json(result).dump();
  CHECK(json.rfind(R"({"file":)", 0) == 0);
  CHECK(json.find(R"("track":"sass2rdna3","ok":false,"stages":[{"name":"amd.assemble.gfx1100","status":"fail","seconds":)") !=
        std::string::npos);
  CHECK(json.find(R"("category":null)") != std::string::npos);
  ChainResult unknown = verify_file(data_dir + "/nothing.txt", test_options());
  CHECK_FALSE(unknown.ok);
  CHECK(status_of(unknown, "chain") == "error");
}

TEST_CASE("isa version numbers follow the gfx name") {
  CHECK(isa_version_number("gfx1100") == 11000);
  CHECK(isa_version_number("gfx1030") == 10300);
  CHECK(isa_version_number("gfx90a") == 9010);
  CHECK(isa_version_number("gfx942") == 9402);
}

TEST_CASE("SASS is split per Function section") {
  auto functions = split_sass_functions("\tcode for sm_80\n\t\tFunction : _Z5saxpyifPKfPf\n  /*0000*/ MOV R1, c[0x0][0x28] ;\n"
                                        "\t\tFunction : _Z3fooPf\n  /*0000*/ EXIT ;\n");
  REQUIRE(functions.size() == 2);
  CHECK(functions[0].name == "_Z5saxpyifPKfPf");
  CHECK(functions[0].text.find("MOV R1") != std::string::npos);
  CHECK(functions[1].text.find("EXIT") != std::string::npos);
}

TEST_CASE("a file of a bundle compiles with the bundle's include directories; without main() it is compiled only") {
  if (!testing::nvcc_here()) return;
  auto root = std::filesystem::temp_directory_path() / ("tailforge-bundle-" + std::to_string(getpid()));
  std::filesystem::create_directories(root / "include");
  std::filesystem::create_directories(root / "kernels");
  std::ofstream(root / "include" / "twice.h") << "#pragma once\n__device__ inline float twice(float x) { return 2 * x; }\n";
  std::ofstream(root / "kernels" / "local.h") << "#pragma once\n#define SCALE 3.0f\n";
  std::ofstream(root / "kernels" / "scale.cu")
      << "#include \"twice.h\"\n#include \"local.h\"\n"
         "__global__ void scale(float* p) { p[threadIdx.x] = twice(p[threadIdx.x]) * SCALE; }\n";
  std::string program = (root / "kernels" / "scale.cu").string();

  ChainOptions options = test_options();
  options.translate = [](const std::string& cuda) {
    return TranslateOutcome{true, "#include <hip/hip_runtime.h>\n" + cuda, "", ""};
  };
  ChainResult without = verify_file(program, options);  // the chain compiles a copy: nothing is found
  CHECK(status_of(without, "nvidia.ptx") == "fail");

  options.include_dirs = {(root / "kernels").string(), (root / "include").string()};
  ChainResult result = verify_file(program, options);
  CHECK(status_of(result, "nvidia.ptx") == "ok");
  CHECK(status_of(result, "nvidia.cubin.sm_90") == "ok");
  CHECK(status_of(result, "nvidia.exe") == "skipped");
  CHECK(reason_of(result, "nvidia.exe") == kCompileOnlyReason);
  CHECK(reason_of(result, "nvidia.run") == kCompileOnlyReason);
  CHECK(reason_of(result, "hip_on_nvidia.run") == kCompileOnlyReason);
  if (detected_toolchains().tool("cuobjdump").found()) CHECK(status_of(result, "nvidia.sass") == "ok");
  if (detected_toolchains().tool("hip_clang").found()) {
    CHECK(status_of(result, "amd.asm.gfx1100") == "ok");
    CHECK(status_of(result, "amd.codeobject.gfx1100") == "ok");
    CHECK(reason_of(result, "amd.run") == kCompileOnlyReason);
  }
  CHECK(result.ok);  // compile-only stages are skipped, not failed
  std::filesystem::remove_all(root);
}

TEST_CASE("a program including a CUDA library header is linked with that library") {
  if (!testing::nvcc_here()) return;
  auto root = std::filesystem::temp_directory_path() / ("tailforge-libs-" + std::to_string(getpid()));
  std::filesystem::create_directories(root);
  std::ofstream(root / "blas.h") << "#pragma once\n#include <cublas_v2.h>\n";
  std::ofstream(root / "main.cu") << "#include \"blas.h\"\nint main() { cublasHandle_t h; return cublasCreate(&h) == "
                                     "CUBLAS_STATUS_SUCCESS ? 0 : 0; }\n";
  ChainOptions options = test_options();
  options.include_dirs = {root.string()};
  ChainResult result = verify_file((root / "main.cu").string(), options);
  CHECK(status_of(result, "nvidia.exe") == "ok");
  std::filesystem::remove_all(root);
}
