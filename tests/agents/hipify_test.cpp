#include "agents/translate/hipify.h"

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "agents/translate/hipify_rules.h"
#include "test_support/tools_here.h"

using namespace tailforge;

#ifndef TAILFORGE_SOURCE_DIR
#define TAILFORGE_SOURCE_DIR TAILFORGE_TEST_DATA "/../.."
#endif

namespace {

const HipifyRules& shipped_rules() {
  static HipifyRules rules = [] {
    auto loaded = load_hipify_rules(std::string(TAILFORGE_SOURCE_DIR) + "/policies/hipify_rules.json");
    REQUIRE_MESSAGE(loaded.ok(), loaded.message());
    return loaded.value();
  }();
  return rules;
}

bool has_rule(const TranslationResult& r, const std::string& rule) {
  return std::find(r.applied_rules.begin(), r.applied_rules.end(), rule) != r.applied_rules.end();
}

bool contains_word(const std::string& text, const std::string& word) {
  return std::regex_search(text, std::regex("(^|[^A-Za-z0-9_])" + word + "($|[^A-Za-z0-9_])"));
}

std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tailforge-hipify-" + name + "-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

std::string write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace

TEST_CASE("the shipped hipify rules load and every header rule fires") {
  const HipifyRules& rules = shipped_rules();
  CHECK(rules.identifiers.size() > 100);
  for (const HeaderRule& rule : rules.headers) {
    CAPTURE(rule.from);
    auto r = translate_cuda_to_hip(rules, "#include <" + rule.from + ">\nint main() { return 0; }\n");
    if (rule.unsupported_construct.empty()) {
      REQUIRE(r.ok);
      CHECK(r.hip_source.find("#include <" + rule.to + ">") != std::string::npos);
      CHECK(has_rule(r, "header:" + rule.from));
    } else {
      CHECK_FALSE(r.ok);
      CHECK(r.category == "translate.unsupported." + rule.unsupported_construct);
      CHECK(r.line == 1);
    }
  }
}

// The per-rule cases below check that the translator applies each rule of the table; these check
// the table itself: it is not empty, and the translations a reader knows come out as written here.
TEST_CASE("the shipped tables are whole, and well-known constructs translate to what is written here") {
  const HipifyRules& rules = shipped_rules();
  CHECK(rules.headers.size() >= 40);
  CHECK(rules.handwritten_identifiers >= 400);
  CHECK(rules.identifiers.size() >= 1500);
  CHECK(rules.symbol_calls.size() >= 4);
  CHECK(rules.warp_intrinsics.size() >= 6);
  CHECK(rules.full_warp_masks.size() >= 4);
  CHECK(rules.call_rewrites.size() >= 6);
  CHECK(rules.unsupported.size() >= 8);
  CHECK(rules.libraries.size() >= 6);
  CHECK(rules.guards.size() >= 100);
  CHECK(rules.without_hip.size() >= 1000);
  const std::pair<const char*, const char*> expected[] = {
      {"#include <cuda_runtime.h>\n", "#include <hip/hip_runtime.h>\n"},
      {"#include <cusparse.h>\n", "#include <hipsparse/hipsparse.h>\n"},
      {"cudaMalloc(&p, n);", "hipMalloc(&p, n);"},
      {"cudaMemcpy(d, h, n, cudaMemcpyHostToDevice);", "hipMemcpy(d, h, n, hipMemcpyHostToDevice);"},
      {"cudaMemcpyToSymbol(table, src, 16);", "hipMemcpyToSymbol(HIP_SYMBOL(table), src, 16);"},
      {"v = __shfl_down_sync(0xffffffff, v, 16);", "v = __shfl_down(v, 16);"},
      {"__syncwarp();", "__builtin_amdgcn_wave_barrier();"},
      {"cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);", "hipStreamCreateWithFlags(&s, hipStreamNonBlocking);"},
      {"CUresult r = cuInit(0);", "hipError_t r = hipInit(0);"},
      {"curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);", "hiprandCreateGenerator(&g, HIPRAND_RNG_PSEUDO_DEFAULT);"},
      {"cudaExtent e = make_cudaExtent(4, 4, 4);", "hipExtent e = make_hipExtent(4, 4, 4);"},
      {"#ifdef CUBLAS_API_H_\n#endif\n", "#ifdef TAILFORGE_HIPBLAS_H\n#endif\n"},
  };
  for (const auto& [cuda, hip] : expected) {
    CAPTURE(cuda);
    TranslationResult r = translate_cuda_to_hip(rules, std::string("void f() {\n") + cuda + "\n}\n");
    CHECK(r.hip_source.find(hip) != std::string::npos);
  }
}

TEST_CASE("every identifier rule renames its identifier at word boundaries") {
  const HipifyRules& rules = shipped_rules();
  for (const IdentifierRule& rule : rules.identifiers) {
    CAPTURE(rule.from);
    auto r = translate_cuda_to_hip(rules, "void f() { auto x = " + rule.from + "; auto y = my" + rule.from + "_2; }\n");
    REQUIRE(r.ok);
    CHECK(contains_word(r.hip_source, rule.to));
    CHECK(r.hip_source.find("my" + rule.from + "_2") != std::string::npos);
    CHECK(has_rule(r, "identifier:" + rule.from));
  }
}

TEST_CASE("every target name of a renaming rule exists in the HIP 5.2 headers") {
  if (!std::filesystem::exists("/usr/include/hip/hip_runtime_api.h")) {
    testing::skip(testing::Missing::setup_tool, "HIP headers not installed (hipcc installs them)");
    return;
  }
  // HIP itself, hipRAND (Debian's libhiprand-dev), and tailforge's own compatibility headers.
  std::string all;
  for (std::string dir : {"/usr/include/hip", "/usr/include/hiprand", TAILFORGE_SOURCE_DIR "/verifier/hip_compat"}) {
    if (!std::filesystem::exists(dir)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      if (entry.path().string().find("nvidia") != std::string::npos || !entry.is_regular_file()) continue;
      std::ifstream in(entry.path());
      all += std::string(std::istreambuf_iterator<char>(in), {});
    }
  }
  if (!std::filesystem::exists("/usr/include/hiprand/hiprand.h")) {
    testing::skip(testing::Missing::setup_tool, "hipRAND headers not installed (libhiprand-dev)");
    return;
  }
  const HipifyRules& rules = shipped_rules();
  // The generated identifiers (hipify_names.json) are checked against the headers they were made
  // from, declaration by declaration, in hipify_names_test.
  for (size_t i = 0; i < rules.handwritten_identifiers; ++i) {
    const IdentifierRule& rule = rules.identifiers[i];
    CAPTURE(rule.to);
    if (rule.kind != "math") CHECK(all.find(rule.to) != std::string::npos);
  }
  for (const auto& rule : rules.symbol_calls) CHECK(all.find(rule.to) != std::string::npos);
  for (const auto& rule : rules.warp_intrinsics) CHECK(all.find(rule.to + "(") != std::string::npos);
}

TEST_CASE("every symbol-call rule wraps its symbol argument") {
  const HipifyRules& rules = shipped_rules();
  for (const SymbolCallRule& rule : rules.symbol_calls) {
    CAPTURE(rule.from);
    std::string args = rule.symbol_argument == 0 ? "table, src, 16" : "dst, table, 16";
    auto r = translate_cuda_to_hip(rules, "void f() { " + rule.from + "(" + args + "); }\n");
    REQUIRE(r.ok);
    CHECK(r.hip_source.find(rule.to + "(") != std::string::npos);
    CHECK(r.hip_source.find(rule.wrapper + "(table)") != std::string::npos);
  }
}

TEST_CASE("every warp intrinsic drops a full mask, and a partial mask is a named failure") {
  const HipifyRules& rules = shipped_rules();
  for (const WarpIntrinsicRule& rule : rules.warp_intrinsics) {
    CAPTURE(rule.from);
    auto r = translate_cuda_to_hip(rules, "__device__ int f(int v) { return " + rule.from + "(0xffffffff, v, 1); }\n");
    REQUIRE(r.ok);
    CHECK(r.hip_source.find(rule.to + "(v, 1)") != std::string::npos);
    CHECK(has_rule(r, "warp_intrinsic:" + rule.from));
    auto partial = translate_cuda_to_hip(rules, "__device__ int f(int v) {\n  return " + rule.from + "(0x0000ffff, v, 1);\n}\n");
    CHECK_FALSE(partial.ok);
    CHECK(partial.category == "translate.unsupported.partial_warp_mask");
    CHECK(partial.line == 2);
  }
  for (const std::string& mask : rules.full_warp_masks) {
    CAPTURE(mask);
    auto r = translate_cuda_to_hip(rules, "__device__ int f(int v) { return __shfl_xor_sync(" + mask + ", v, 4); }\n");
    REQUIRE(r.ok);
    CHECK(r.hip_source.find("__shfl_xor(v, 4)") != std::string::npos);
  }
}

TEST_CASE("a full mask defined by a #define is recognised") {
  auto r = translate_cuda_to_hip(shipped_rules(),
                                 "#define FULL_MASK 0xffffffff\n__device__ int f(int v) { return __shfl_down_sync(FULL_MASK, v, 16); }\n");
  REQUIRE(r.ok);
  CHECK(r.hip_source.find("__shfl_down(v, 16)") != std::string::npos);
}

TEST_CASE("every call rewrite replaces the whole call, its arguments where the rule places them") {
  const HipifyRules& rules = shipped_rules();
  for (const CallRewriteRule& rule : rules.call_rewrites) {
    auto r = translate_cuda_to_hip(rules, "__device__ void f() { " + rule.from + "(p0, p1); }\n");
    REQUIRE(r.ok);
    std::string expected = std::regex_replace(std::regex_replace(rule.to, std::regex("\\{0\\}"), "p0"),
                                              std::regex("\\{1\\}"), "p1");
    CHECK(r.hip_source.find(expected + ";") != std::string::npos);
    CHECK(r.hip_source.find(rule.from) == std::string::npos);
  }
}

TEST_CASE("every unsupported rule fires on its example with its category and line") {
  const HipifyRules& rules = shipped_rules();
  for (const UnsupportedRule& rule : rules.unsupported) {
    CAPTURE(rule.construct);
    auto r = translate_cuda_to_hip(rules, "// a comment\n" + rule.example + "\n");
    CHECK_FALSE(r.ok);
    CHECK(r.category == "translate.unsupported." + rule.construct);
    CHECK(r.line == 2);
    CHECK(r.message.find("line 2") != std::string::npos);
  }
}

TEST_CASE("strings, char literals and comments are never rewritten") {
  std::string cuda =
      "#include <cstdio>\n"
      "int main() {\n"
      "  // cudaMalloc is called below; asm(\"x\") in a comment is fine\n"
      "  /* cudaMemcpy __shfl_down_sync(0x1, v, 1) */\n"
      "  printf(\"cudaMalloc failed\\n\");\n"
      "  fprintf(stderr, \"cudaError_t: %s\\n\", \"cudaSuccess\");\n"
      "  const char* raw = R\"(cudaFree \"quoted\" __nanosleep(1))\";\n"
      "  char c = 'c'; int big = 1'000;\n"
      "  float* d; cudaMalloc(&d, 4); return 0;\n"
      "}\n";
  auto r = translate_cuda_to_hip(shipped_rules(), cuda);
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(r.hip_source.find("printf(\"cudaMalloc failed\\n\");") != std::string::npos);
  CHECK(r.hip_source.find("fprintf(stderr, \"cudaError_t: %s\\n\", \"cudaSuccess\");") != std::string::npos);
  CHECK(r.hip_source.find("// cudaMalloc is called below; asm(\"x\") in a comment is fine") != std::string::npos);
  CHECK(r.hip_source.find("/* cudaMemcpy __shfl_down_sync(0x1, v, 1) */") != std::string::npos);
  CHECK(r.hip_source.find("R\"(cudaFree \"quoted\" __nanosleep(1))\"") != std::string::npos);
  CHECK(r.hip_source.find("hipMalloc(&d, 4)") != std::string::npos);
  CHECK(r.hip_source.rfind("#include <hip/hip_runtime.h>\n", 0) == 0);
}

TEST_CASE("raw strings with any prefix are never rewritten, and a digit separator opens no char literal") {
  std::string cuda =
      "const char* a = u8R\"(\" cudaMalloc \")\";\n"
      "const wchar_t* b = LR\"x(\" cudaFree )\" \")x\";\n"
      "int main() { int mask = 0xFF'FF; float* d; cudaMalloc(&d, 4); return mask; }\n";
  auto r = translate_cuda_to_hip(shipped_rules(), cuda);
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(r.hip_source.find("u8R\"(\" cudaMalloc \")\"") != std::string::npos);
  CHECK(r.hip_source.find("LR\"x(\" cudaFree )\" \")x\"") != std::string::npos);
  CHECK(r.hip_source.find("int mask = 0xFF'FF; float* d; hipMalloc(&d, 4);") != std::string::npos);
}

TEST_CASE("launch bounds keep only the thread count and launches stay as they are") {
  auto r = translate_cuda_to_hip(shipped_rules(),
                                 "__global__ void __launch_bounds__(256, 2) k(float* x) {}\n"
                                 "int main() { k<<<4, 256, 0, 0>>>(nullptr); }\n");
  REQUIRE(r.ok);
  CHECK(r.hip_source.find("__launch_bounds__(256) k") != std::string::npos);
  CHECK(r.hip_source.find("k<<<4, 256, 0, 0>>>(nullptr)") != std::string::npos);
  CHECK(has_rule(r, "launch_bounds:drop_min_blocks"));
}

TEST_CASE("a hard-coded 32 in warp-level code is kept and reported") {
  auto r = translate_cuda_to_hip(shipped_rules(),
                                 "__device__ float warp_sum(float v) {\n"
                                 "  for (int o = 32 / 2; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);\n"
                                 "  int32_t keep = 0; float f = 32.0f; return v + keep + f;\n}\n");
  REQUIRE(r.ok);
  CHECK(r.hip_source.find("int o = 32 / 2") != std::string::npos);
  REQUIRE(r.features == std::vector<std::string>{"hardcoded_warp_size"});
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("line 2") == 0);
  auto plain = translate_cuda_to_hip(shipped_rules(), "int a[32];\n");
  CHECK(plain.features.empty());
}

TEST_CASE("unmapped cuda identifiers are kept and reported, not silently") {
  auto r = translate_cuda_to_hip(shipped_rules(), "void f() { cudaGraphMagic(g, s); }\n");
  REQUIRE(r.ok);
  REQUIRE(r.untranslated.size() == 1);
  CHECK(r.untranslated[0] == "line 1: cudaGraphMagic (not in the translation table)");
}

TEST_CASE("cuda_runtime.h brings math.h along, as CUDA's does for host code, unless a math header is there") {
  auto bare = translate_cuda_to_hip(shipped_rules(), "#include <cuda_runtime.h>\nbool f(float x) { return isfinite(x); }\n");
  CHECK(bare.hip_source.rfind("#include <math.h>\n#include <hip/hip_runtime.h>\n", 0) == 0);
  auto with_cmath = translate_cuda_to_hip(shipped_rules(), "#include <cuda_runtime.h>\n#include <cmath>\n");
  CHECK(with_cmath.hip_source.find("math.h") == std::string::npos);
}

TEST_CASE("a malformed rule table is refused naming the file and the JSON path") {
  auto dir = temp_dir("rules");
  std::string bad_header = write_file(dir / "bad_header.json",
                                      R"({"headers":[{"from":"a.h","to":"b.h"},{"from":"c.h"}],"identifiers":[],"symbol_calls":[],)"
                                      R"("warp_intrinsics":[],"call_rewrites":[],"full_warp_masks":[],"launch_bounds":{"name":"x","keep_arguments":1},)"
                                      R"("warp_size":{"literals":[],"warp_code_markers":[]},"unsupported":[]})");
  auto r = load_hipify_rules(bad_header);
  REQUIRE_FALSE(r.ok());
  CHECK(r.message().find(bad_header) != std::string::npos);
  CHECK(r.message().find("headers[1]") != std::string::npos);
  std::string bad_regex = write_file(dir / "bad_regex.json",
                                     R"({"headers":[],"identifiers":[],"symbol_calls":[],"warp_intrinsics":[],"call_rewrites":[],)"
                                     R"("full_warp_masks":[],"launch_bounds":{"name":"x","keep_arguments":1},)"
                                     R"("warp_size":{"literals":[],"warp_code_markers":[]},)"
                                     R"("unsupported":[{"construct":"x","message":"m","example":"e","patterns":["(unclosed"]}]})");
  r = load_hipify_rules(bad_regex);
  REQUIRE_FALSE(r.ok());
  CHECK(r.message().find("unsupported[0].patterns[0]") != std::string::npos);
  CHECK_FALSE(load_hipify_rules((dir / "absent.json").string()).ok());
  CHECK(load_hipify_rules(write_file(dir / "broken.json", "{not json")).message().find("broken.json") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("translate prints HIP, and exits 1 naming a construct it left, with its category") {
  auto dir = temp_dir("cli");
  std::ostringstream out, err;
  std::string good = write_file(dir / "good.cu", "__global__ void k() {}\nint main() { cudaDeviceSynchronize(); }\n");
  CHECK(run_translate_command(good, shipped_rules(), out, err) == 0);
  CHECK(out.str().find("hipDeviceSynchronize();") != std::string::npos);
  std::ostringstream out2, err2;
  std::string bad = write_file(dir / "bad.cu", "__global__ void k() {\n  asm volatile(\"trap;\");\n}\n");
  CHECK(run_translate_command(bad, shipped_rules(), out2, err2) == 1);
  CHECK(out2.str().find("asm volatile(\"trap;\");") != std::string::npos);  // printed, the construct kept
  CHECK(err2.str().find(bad + ":2: translate.unsupported.inline_ptx") == 0);
  std::ostringstream out3, err3;
  CHECK(run_translate_command((dir / "missing.cu").string(), shipped_rules(), out3, err3) == 1);
  CHECK(err3.str().find("missing.cu") != std::string::npos);
  std::filesystem::remove_all(dir);
}

// gfx90a, not gfx1100: hipcc 5.2 here lacks the gfx1100 device-library bitcode (the verifier handles it).
TEST_CASE("a translated CUDA program compiles to AMDGPU device assembly with hipcc") {
  if (!testing::tools_here({"hipcc"})) return;
  std::string cuda = R"(#include <cstdio>
#include <cuda_runtime.h>
#define FULL_MASK 0xffffffff
__constant__ float scale;
__global__ void __launch_bounds__(256, 2) reduce(const float* in, float* out, int n) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i] * scale;
  for (int o = warpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(FULL_MASK, v, o);
  __syncwarp();
  if ((threadIdx.x % warpSize) == 0) atomicAdd(out, __fdividef(v, 1.0f));
}
int main() {
  const int n = 1024; float *in, *out; float s = 2.0f;
  cudaError_t err = cudaMalloc(&in, n * sizeof(float));
  if (err != cudaSuccess) { fprintf(stderr, "cudaMalloc failed: %s\n", cudaGetErrorString(err)); return 1; }
  cudaMalloc(&out, sizeof(float));
  cudaMemcpyToSymbol(scale, &s, sizeof(float));
  cudaStream_t stream; cudaStreamCreate(&stream);
  cudaEvent_t start, stop; cudaEventCreate(&start); cudaEventCreate(&stop);
  cudaEventRecord(start, stream);
  reduce<<<4, 256, 0, stream>>>(in, out, n);
  cudaEventRecord(stop, stream); cudaEventSynchronize(stop);
  float ms = 0; cudaEventElapsedTime(&ms, start, stop);
  float h = 0; cudaMemcpy(&h, out, sizeof(float), cudaMemcpyDeviceToHost);
  cudaDeviceProp prop; cudaGetDeviceProperties(&prop, 0);
  printf("sum %f on %s\n", h, prop.name);
  cudaFree(in); cudaFree(out); cudaStreamDestroy(stream);
  return 0;
}
)";
  auto r = translate_cuda_to_hip(shipped_rules(), cuda);
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(r.hip_source.find("fprintf(stderr, \"cudaMalloc failed: %s\\n\", hipGetErrorString(err))") != std::string::npos);
  auto dir = temp_dir("hipcc");
  std::string hip = write_file(dir / "program.hip", r.hip_source);
  std::string device = (dir / "program.s").string();
  std::string command = "timeout 120 hipcc -x hip --offload-arch=gfx90a --cuda-device-only -S " + hip + " -o " + device +
                        " > " + (dir / "log.txt").string() + " 2>&1";
  int status = std::system(command.c_str());
  std::ifstream log(dir / "log.txt");
  std::string log_text(std::istreambuf_iterator<char>(log), {});
  CHECK_MESSAGE(WIFEXITED(status), log_text);
  CHECK_MESSAGE(WEXITSTATUS(status) == 0, log_text);
  CHECK(std::filesystem::exists(device));
  std::string host = (dir / "program.host.o").string();
  command = "timeout 120 hipcc -x hip --offload-arch=gfx90a -c " + hip + " -o " + host + " >> " +
            (dir / "log.txt").string() + " 2>&1";
  CHECK(std::system(command.c_str()) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("every construct that cannot be translated is named at its line, and the rest is still translated") {
  const HipifyRules& rules = shipped_rules();
  std::string cuda =
      "#include <cufft.h>\n"                                   // 1
      "__global__ void k(float* p) {\n"                        // 2
      "  asm volatile(\"membar.gl;\");\n"                      // 3
      "  p[0] = 1.0f;\n"                                       // 4
      "}\n"                                                    // 5
      "int main() { float* d; cudaMalloc(&d, 4);\n"            // 6
      "  thrust::sort(d, d + 1); return 0; }\n";               // 7
  auto r = translate_cuda_to_hip(rules, cuda);
  CHECK_FALSE(r.ok);
  REQUIRE(r.issues.size() == 3);
  CHECK(r.issues[0].category == "translate.unsupported.library.cufft");
  CHECK(r.issues[0].line == 1);
  CHECK(r.issues[1].category == "translate.unsupported.inline_ptx");
  CHECK(r.issues[1].line == 3);
  CHECK(r.issues[2].category == "translate.unsupported.library.thrust");
  CHECK(r.issues[2].line == 7);
  CHECK(r.category == "translate.unsupported.library.cufft");  // the first issue, for one-line reports
  CHECK(contains_word(r.hip_source, "hipMalloc"));      // best effort: the rest is translated
}

TEST_CASE("a kernel launching a kernel is named as dynamic parallelism at the launch's line") {
  auto r = translate_cuda_to_hip(shipped_rules(),
                                 "__global__ void child() {}\n__global__ void parent() {\n  if (threadIdx.x == 0)\n"
                                 "    child<<<1, 1>>>();\n}\nint main() { parent<<<1, 1>>>(); }\n");
  REQUIRE(r.issues.size() == 1);
  CHECK(r.issues[0].category == "translate.unsupported.dynamic_parallelism");
  CHECK(r.issues[0].line == 4);
}

TEST_CASE("CUDA identifiers left in the output are reported; the program's own look-alike names are not") {
  auto r = translate_cuda_to_hip(shipped_rules(),
                                 "#define cuDNNCheck(x) (x)\n"
                                 "int main() {\n"
                                 "  cudaError_t cudaStatus = cudaSuccess;\n"
                                 "  cudaFooBar(1);\n"
                                 "  cufftHandle plan;\n"
                                 "  cuDNNCheck(cudaStatus);\n"
                                 "  return 0;\n}\n");
  // A cuFFT name left names its library (an issue); an unknown cuda* name is only reported.
  REQUIRE(r.issues.size() == 1);
  CHECK(r.issues[0].category == "translate.unsupported.library.cufft");
  CHECK(r.issues[0].line == 5);
  REQUIRE(r.untranslated.size() == 2);
  CHECK(r.untranslated[0] == "line 4: cudaFooBar (not in the translation table)");
  CHECK(r.untranslated[1] == "line 5: cufftHandle (a cuFFT name: hipFFT is not packaged in Debian 12)");
}

TEST_CASE("code rewrites fix launch spacing, callbacks and tile indices, but never a stream insertion") {
  auto r = translate_cuda_to_hip(shipped_rules(),
                                 "void CUDART_CB done(cudaStream_t s, cudaError_t e, void* p) {}\n"
                                 "__global__ void k() {\n"
                                 "  auto warp = cg::tiled_partition<32>(cg::this_thread_block());\n"
                                 "  int w = warp.meta_group_rank(), n = warp.meta_group_size();\n}\n"
                                 "int main() { std::cout << \"x\" << 1; k<< < 1, 32 >> >(); }\n");
  REQUIRE(r.ok);
  CHECK(r.hip_source.find("void done(hipStream_t s") != std::string::npos);
  CHECK(r.hip_source.find("k<<< 1, 32 >>>()") != std::string::npos);
  CHECK(r.hip_source.find("std::cout << \"x\" << 1") != std::string::npos);
  CHECK(r.hip_source.find("/ warp.size())") != std::string::npos);
  CHECK(r.hip_source.find("meta_group") == std::string::npos);
}

TEST_CASE("a kernel passed to the function-attribute calls becomes the const void* HIP 5.2 takes, in its place") {
  auto r = translate_cuda_to_hip(shipped_rules(),
                                 "__global__ void k(float* p) {}\n"
                                 "int main() {\n"
                                 "  cudaFuncAttributes a;\n"
                                 "  cudaFuncGetAttributes(&a, k);\n"
                                 "  cudaFuncSetCacheConfig(k, cudaFuncCachePreferL1);\n"
                                 "  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n}\n");
  REQUIRE(r.ok);
  CHECK(r.hip_source.find("hipFuncGetAttributes(&a, reinterpret_cast<const void*>(k))") != std::string::npos);
  CHECK(r.hip_source.find("hipFuncSetCacheConfig(reinterpret_cast<const void*>(k), hipFuncCachePreferL1)") != std::string::npos);
  CHECK(r.hip_source.find("hipFuncSetAttribute(reinterpret_cast<const void*>(k), hipFuncAttributeMaxDynamicSharedMemorySize") !=
        std::string::npos);
}

TEST_CASE("call rewrites rebuild a call from its arguments, and printf gets integer coordinates") {
  auto r = translate_cuda_to_hip(shipped_rules(),
                                 "__global__ void k(float* out, const float* in) {\n"
                                 "  __stcs(out + 1, __ldcs(&in[2]));\n"
                                 "  printf(\"%d %d\\n\", threadIdx.x, blockIdx.y);\n}\n");
  REQUIRE(r.ok);
  CHECK(r.hip_source.find("(void)(*(out + 1) = ((*(&in[2]))));") != std::string::npos);
  CHECK(r.hip_source.find("(unsigned int)threadIdx.x, (unsigned int)blockIdx.y") != std::string::npos);
}

TEST_CASE("library headers map to HIP or to tailforge's compatibility headers, unless the tree has its own") {
  const HipifyRules& rules = shipped_rules();
  auto alone = translate_cuda_to_hip(rules, "#include <helper_cuda.h>\n#include <cublas_v2.h>\n"
                                            "__nv_bfloat16 x;\nint main() { curandState s; }\n");
  REQUIRE(alone.ok);
  CHECK(alone.hip_source.find("#include <tailforge_samples_helpers.h>") != std::string::npos);
  CHECK(alone.hip_source.find("#include <tailforge_hipblas.h>") != std::string::npos);
  CHECK(alone.hip_source.find("#include <tailforge_bf16.h>") != std::string::npos);  // the type needs it
  CHECK(contains_word(alone.hip_source, "hiprandState"));
  CHECK(alone.compat_headers.size() == 3);
  TranslationContext tree;
  tree.tree_has_header = [](const std::string& name) { return name == "helper_cuda.h"; };
  auto with_tree = translate_cuda_to_hip(rules, "#include <helper_cuda.h>\nint main() {}\n", tree);
  CHECK(with_tree.hip_source.find("#include <helper_cuda.h>") != std::string::npos);
  CHECK(with_tree.compat_headers.empty());
}

TEST_CASE("programs using the compatibility headers compile for gfx1100 with the same clang") {
  if (!testing::tools_here({"hip_clang"})) return;
  if (!std::filesystem::exists("/usr/include/hip")) {
    testing::skip(testing::Missing::setup_tool, "the HIP headers are not in /usr/include/hip (hipcc installs them)");
    return;
  }
  std::string cuda =
      "#include <cuda_runtime.h>\n#include <cublas_v2.h>\n#include <cooperative_groups.h>\n"
      "#include <cooperative_groups/reduce.h>\n#include <cuda_bf16.h>\n#include <helper_cuda.h>\n"
      "#include <helper_timer.h>\n#include <nvtx3/nvToolsExt.h>\n#include <curand_kernel.h>\n"
      "namespace cg = cooperative_groups;\n"
      "__global__ void sum(const float* in, float* out, curandState* states) {\n"
      "  cg::thread_block block = cg::this_thread_block();\n"
      "  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);\n"
      "  float v = cg::reduce(warp, in[threadIdx.x], cg::plus<float>{});\n"
      "  __nv_bfloat16 b = __float2bfloat16(v);\n"
      "  curand_init(1, threadIdx.x, 0, &states[threadIdx.x]);\n"
      "  if (warp.thread_rank() == 0) out[warp.meta_group_rank()] = __bfloat162float(b) + curand_uniform(&states[0]);\n}\n"
      "int main(int argc, char** argv) {\n  findCudaDevice(argc, (const char**)argv);\n"
      "  StopWatchInterface* timer; sdkCreateTimer(&timer); sdkStartTimer(&timer);\n"
      "  nvtxRangePushA(\"gemm\");\n  cublasHandle_t handle; checkCudaErrors(cudaSuccess);\n"
      "  cublasCreate(&handle); float one = 1, *a = nullptr;\n"
      "  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, 4, 4, 4, &one, a, 4, a, 4, &one, a, 4);\n"
      "  nvtxRangePop(); sdkStopTimer(&timer); printf(\"%f %d\\n\", sdkGetTimerValue(&timer), isfinite(one));\n"
      "  return 0;\n}\n";
  auto r = translate_cuda_to_hip(shipped_rules(), cuda);
  REQUIRE_MESSAGE(r.ok, r.message);
  CHECK(r.untranslated.empty());
  auto dir = temp_dir("compat");
  std::string hip = write_file(dir / "program.hip", r.hip_source);
  std::string command = "timeout 300 '" + detected_toolchains().tool("hip_clang").path + "' -x hip -std=c++17 --rocm-path=/usr --cuda-device-only -S -nogpulib "
                        "--offload-arch=gfx1100 -I " TAILFORGE_SOURCE_DIR "/verifier/hip_compat " + hip +
                        " -o " + (dir / "program.s").string() + " 2> " + (dir / "errors.txt").string();
  int status = std::system(command.c_str());
  std::ifstream errors(dir / "errors.txt");
  CHECK_MESSAGE(status == 0, std::string(std::istreambuf_iterator<char>(errors), {}));
  std::filesystem::remove_all(dir);
}
