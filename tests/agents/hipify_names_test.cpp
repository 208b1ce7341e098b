#include "agents/translate/hipify_names.h"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "agents/translate/header_names.h"
#include "agents/translate/hipify_rules.h"
#include "base/files.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/stage_runner.h"

using namespace tailforge;

#ifndef TAILFORGE_SOURCE_DIR
#define TAILFORGE_SOURCE_DIR TAILFORGE_TEST_DATA "/../.."
#endif

namespace {

std::set<std::string> declared(const std::string& text) {
  std::set<std::string> names;
  scan_declared_names(text, names);
  return names;
}

std::string read_text(const std::string& path) { return read_text_file_or_empty(path); }

const char* kCudaInclude = "/usr/local/cuda/include";

}  // namespace

// ---------------------------------------------------------------- the scanner

TEST_CASE("the header scanner finds what a header declares, and not parameters, members or comments") {
  auto names = declared(R"(
#define HIP_VERSION_MAJOR 5
#define hipStreamPerThread ((hipStream_t)2)
#define hipLaunchKernelGGL(k, ...) k(__VA_ARGS__)
typedef struct ihipStream_t* hipStream_t;
typedef enum __HIP_NODISCARD hipError_t { hipSuccess = 0, hipErrorInvalidValue = (1 << 0), hipErrorOutOfMemory } hipError_t;
struct __device_builtin__ __builtin_align__(16) float4 { float x, y, z, w; };
typedef struct hipDeviceProp_t { int hipMember; char name[256]; } hipDeviceProp_t;
typedef void (CUDA_CB *hipHostFn_t)(void* hipUserData);
typedef unsigned int hipArrayFlags[4];
using hipAlias = int;
hipError_t hipMalloc(void** hipPointer, size_t size);
enum class hipScoped : int { hipFirst, hipSecond = hipFirst };
// hipInComment(int), /* hipInBlockComment() */
const char* s = "hipInString(";
)");
  for (const char* name :
       {"HIP_VERSION_MAJOR", "hipStreamPerThread", "hipLaunchKernelGGL", "hipStream_t", "ihipStream_t", "hipError_t",
        "hipSuccess", "hipErrorInvalidValue", "hipErrorOutOfMemory", "float4", "hipDeviceProp_t", "hipHostFn_t",
        "hipArrayFlags", "hipAlias", "hipMalloc", "hipScoped", "hipFirst", "hipSecond"})
    CHECK_MESSAGE(names.count(name), name);
  for (const char* name : {"hipMember", "hipUserData", "hipPointer", "hipInComment", "hipInBlockComment", "hipInString",
                           "__HIP_NODISCARD", "__device_builtin__", "CUDA_CB", "void", "int"})
    CHECK_MESSAGE(names.count(name) == 0, name);
}

TEST_CASE("a macro that declares types is expanded where it is used, ## pasting included") {
  auto names = declared(R"(
#define DEFINE_STATE(hip_name, base) \
    struct hip_name : public base { typedef base base_type; }; \
    typedef struct hip_name hip_name ## _t;
DEFINE_STATE(hiprandState, rocrand_state_xorwow)
DEFINE_STATE(hiprandStatePhilox4_32_10, rocrand_state_philox)
#undef DEFINE_STATE
#define PLAIN(x) ((x) + 1)
int y = PLAIN(hipNotDeclared);
)");
  for (const char* name : {"DEFINE_STATE", "hiprandState", "hiprandState_t", "hiprandStatePhilox4_32_10",
                           "hiprandStatePhilox4_32_10_t", "PLAIN"})
    CHECK_MESSAGE(names.count(name), name);
  CHECK(names.count("hipNotDeclared") == 0);
  CHECK(names.count("rocrand_state_xorwow") == 0);
}

TEST_CASE("the header scanner survives hostile text and stays linear") {
  auto started = std::chrono::steady_clock::now();
  std::string line;
  line.reserve(1 << 20);
  while (line.size() < (1 << 20)) line += "struct a(((enum{b,c=(d,e typedef (*f)(g) DECL(x,";
  std::set<std::string> names;
  scan_declared_names("#define DECL(n) struct n {}; typedef int n ## _t;\n" + line, names);
  CHECK(names.count("DECL"));
  std::string nested(1 << 20, '(');
  scan_declared_names(nested, names);
  scan_declared_names(std::string(1 << 20, '{') + std::string(1 << 19, '}') + "enum E { A", names);
  std::string many_macros;
  while (many_macros.size() < (1 << 20)) many_macros += "#define M(x) struct x {};\nM(a) M(b M(";
  scan_declared_names(many_macros, names);
  CHECK(declared("int before;\n/* never closed hipHidden() ").count("hipHidden") == 0);
  CHECK(declared("const char* s = \"never closed hipQuoted(\nhipAfter();").count("hipAfter"));
  CHECK(declared("#define").empty());
  CHECK(declared("#define X(").count("X"));
  CHECK(declared("\\\n#\\").empty());
  std::string binary;
  for (int i = 0; i < (1 << 16); ++i) binary += static_cast<char>(i * 131 % 256);
  scan_declared_names(binary, names);
  // A hang guard, not a speed claim: each input above is a megabyte, scanned in well under a second.
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(30));
}

// ---------------------------------------------------------------- the name rules

TEST_CASE("the name rules spell each CUDA family's HIP counterpart") {
  using V = std::vector<std::string>;
  CHECK(hip_name_candidates("cudaMalloc") == V{"hipMalloc", "hipMalloc_t"});
  CHECK(hip_name_candidates("CUDA_ERROR_NOT_INITIALIZED") == V{"hipErrorNotInitialized"});
  CHECK(hip_name_candidates("CUDA_ARRAY_DESCRIPTOR") == V{"HIP_ARRAY_DESCRIPTOR"});
  CHECK(hip_name_candidates("cuModuleLoad") == V{"hipModuleLoad"});
  CHECK(hip_name_candidates("CUstream") == V{"HIPstream", "hipStream_t", "hipStream"});
  CHECK(hip_name_candidates("CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X") ==
        V{"HIP_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X", "hipDeviceAttributeMaxBlockDimX"});
  CHECK(hip_name_candidates("curand_init") == V{"hiprand_init"});
  CHECK(hip_name_candidates("CURAND_STATUS_SUCCESS") == V{"HIPRAND_STATUS_SUCCESS"});
  CHECK(hip_name_candidates("cusparseCreate") == V{"hipsparseCreate"});
  CHECK(hip_name_candidates("CUSPARSE_INDEX_32I") == V{"HIPSPARSE_INDEX_32I"});
  CHECK(hip_name_candidates("make_float4").empty());
  CHECK(camel_case("MAXIMUM_TEXTURE1D_WIDTH") == "MaximumTexture1DWidth");
  CHECK(camel_case("L2_CACHE_SIZE") == "L2CacheSize");
  CHECK(cuda_name_kind("cudaMalloc") == "runtime_api");
  CHECK(cuda_name_kind("CUresult") == "driver_api");
  CHECK(cuda_name_kind("curandState") == "random");
  CHECK(is_cuda_family_name("CU_STREAM_DEFAULT"));
  CHECK_FALSE(is_cuda_family_name("cub"));
  CHECK_FALSE(is_cuda_family_name("custom"));
}

TEST_CASE("exceptions come first: unmapped, then renames, then prefix renames, then the rules") {
  NameExceptions exceptions;
  exceptions.renames = {{"cuMemAlloc", "hipMalloc", "", "r"}};
  exceptions.prefix_renames = {{"cudaDevAttr", "hipDeviceAttribute", "", "r"},
                               {"CU_MEMORYTYPE_", "hipMemoryType", "", "r"}};
  exceptions.unmapped = {{"cuMemcpy", false, "r"}, {"cuGraphics", true, "r"}};
  std::set<std::string> hip = {
      "hipMalloc",     "hipMemcpy", "hipGraphicsMapResources", "hipDeviceAttributeWarpSize", "hipMemoryTypeDevice",
      "hipDevAttrOdd", "hipLimit_t"};
  CHECK(hip_counterpart("cuMemAlloc", exceptions, hip) == "hipMalloc");
  CHECK(hip_counterpart("cuMemcpy", exceptions, hip) == "");
  CHECK(hip_counterpart("cuGraphicsMapResources", exceptions, hip) == "");
  CHECK(hip_counterpart("cudaDevAttrWarpSize", exceptions, hip) == "hipDeviceAttributeWarpSize");
  CHECK(hip_counterpart("cudaDevAttrOdd", exceptions, hip) == "hipDevAttrOdd");  // the prefix's result is not declared
  CHECK(hip_counterpart("CU_MEMORYTYPE_DEVICE", exceptions, hip) == "hipMemoryTypeDevice");
  CHECK(hip_counterpart("cudaLimit", exceptions, hip) == "hipLimit_t");
  CHECK(hip_counterpart("cudaUnknown", exceptions, hip) == "");
}

TEST_CASE("a table derived from header folders keeps the names HIP declares, and refuses an undeclared rename") {
  TempDir dir;
  write_tree_file(dir.file("cuda/cuda_runtime_api.h"),
                  "cudaError_t cudaMalloc(void** p, size_t n);\ncudaError_t cudaFrobnicate(int);\n"
                  "cudaError_t cudaMallocHost(void** p, size_t n);\n");
  write_tree_file(dir.file("cuda/cuda.h"),
                  "#define CUDA_VERSION 12040\ntypedef enum cudaError_enum { CUDA_SUCCESS = 0, "
                  "CUDA_ERROR_INVALID_VALUE = 1 } CUresult;\nCUresult cuMemAlloc(int* p, size_t n);\n");
  write_tree_file(dir.file("cuda/driver_types.h"),
                  "enum cudaError { cudaSuccess = 0 };\ntypedef enum cudaError cudaError_t;\n");
  write_tree_file(
      dir.file("rocm/hip/hip_runtime_api.h"),
      "typedef enum hipError_t { hipSuccess = 0, hipErrorInvalidValue = 1 } hipError_t;\n"
      "hipError_t hipMalloc(void** p, size_t n);\nhipError_t hipHostMalloc(void** p, size_t n, unsigned f);\n");
  write_tree_file(dir.file("rocm/hip/hip_version.h"),
                  "#define HIP_VERSION_MAJOR 6\n#define HIP_VERSION_MINOR 1\n#define HIP_VERSION_PATCH 3\n");
  write_tree_file(dir.file("rocm/hip/nvidia_detail/nvidia_hip_runtime_api.h"),
                  "#define hipFrobnicate cudaFrobnicate\n");
  write_tree_file(dir.file("rocm/hip/amd_detail/hip_prof_str.h"), "struct { int x; } hipFrobnicate;\n");
  std::string exceptions_path = dir.file("exceptions.json");
  write_tree_file(exceptions_path,
                  R"({"renames": [{"from": "cudaMallocHost", "to": "hipHostMalloc", "reason": "r"},
                                  {"from": "CUDA_SUCCESS", "to": "hipSuccess", "reason": "r"},
                                  {"from": "cuMemAlloc", "to": "hipMalloc", "reason": "r"},
                                  {"from": "cudaGone", "to": "hipMalloc", "reason": "r"}],
                      "prefix_renames": [], "unmapped": [{"from": "cudaSuccess", "reason": "r"}]})");
  HipifyTableSources sources{dir.file("cuda"), {dir.file("rocm")}, exceptions_path};
  Result<HipifyTable> table = derive_hipify_table(sources);
  REQUIRE_MESSAGE(table.ok(), table.message());
  CHECK(table->cuda_version == "12.4");
  CHECK(table->hip_version == "6.1.3");
  CHECK(table->hip_libraries == std::vector<std::string>{"hip"});
  CHECK(table->renames_not_declared == std::vector<std::string>{"cudaGone"});
  std::vector<std::string> mapped;
  for (const IdentifierRule& rule : table->identifiers) mapped.push_back(rule.from + "->" + rule.to + ":" + rule.kind);
  CHECK(mapped == std::vector<std::string>{"CUDA_ERROR_INVALID_VALUE->hipErrorInvalidValue:driver_api",
                                           "CUDA_SUCCESS->hipSuccess:driver_api", "cuMemAlloc->hipMalloc:driver_api",
                                           "cudaError->hipError_t:runtime_api", "cudaError_t->hipError_t:runtime_api",
                                           "cudaMalloc->hipMalloc:runtime_api",
                                           "cudaMallocHost->hipHostMalloc:runtime_api"});

  std::string json_text = hipify_table_json(*table);
  CHECK(json_text == hipify_table_json(*derive_hipify_table(sources)));
  std::string table_path = dir.file("names.json");
  std::ostringstream out, err;
  REQUIRE(run_hipify_table_command(sources, table_path, out, err) == 0);
  CHECK(read_text(table_path) == json_text);
  CHECK(out.str().find("7 of those names have a declared HIP counterpart") != std::string::npos);
  Result<std::vector<IdentifierRule>> loaded = load_generated_identifiers(table_path);
  REQUIRE_MESSAGE(loaded.ok(), loaded.message());
  CHECK(loaded->size() == table->identifiers.size());

  // On the command line, --hip-include is repeatable: a second folder brings hipRAND.
  if (std::filesystem::exists(TAILFORGE_BINARY)) {
    write_tree_file(dir.file("cuda/curand.h"), "typedef struct curandGenerator_st* curandGenerator_t;\n");
    write_tree_file(dir.file("rand/hiprand/hiprand.h"), "typedef struct hiprandGenerator_st* hiprandGenerator_t;\n");
    ProcessResult run = run_tailforge({"hipify-table", "--cuda-include", dir.file("cuda"), "--hip-include",
                                       dir.file("rocm"), "--hip-include", dir.file("rand"), "--exceptions",
                                       exceptions_path, "--out", dir.file("cli.json")});
    REQUIRE_MESSAGE(run.exit_code == 0, run.stderr_text);
    nlohmann::json written = nlohmann::json::parse(read_text(dir.file("cli.json")));
    CHECK(written["generated_from"]["hip_include"] == nlohmann::json({dir.file("rocm"), dir.file("rand")}));
    CHECK(written["generated_from"]["hip_libraries"] == nlohmann::json({"hip", "hiprand"}));
    CHECK(written.dump().find(R"({"from":"curandGenerator_t","kind":"random","to":"hiprandGenerator_t"})") !=
          std::string::npos);
  }

  write_tree_file(exceptions_path, R"({"renames": [{"from": "cudaMalloc", "to": "hipAllocate", "reason": "r"}],
                                       "prefix_renames": [], "unmapped": []})");
  Result<HipifyTable> refused = derive_hipify_table(sources);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.message().find(exceptions_path + ": renames[0].to: 'hipAllocate' is not declared") == 0);
  write_tree_file(exceptions_path, R"({"renames": [{"from": "cudaMalloc"}], "prefix_renames": [], "unmapped": []})");
  CHECK(load_name_exceptions(exceptions_path).message() == exceptions_path + ": renames[0].to: missing");
  CHECK(derive_hipify_table({dir.file("nowhere"), {dir.file("rocm")}, exceptions_path}).ok() == false);
  std::ostringstream no_out, no_err;
  CHECK(run_hipify_table_command({dir.file("nowhere"), {dir.file("rocm")}, exceptions_path}, table_path, no_out,
                                 no_err) == 1);
}

TEST_CASE("the loader merges the generated table after the hand-written rules, which it never shadows") {
  TempDir dir;
  write_tree_file(dir.file("names.json"), R"({"identifiers": [
    {"from": "cudaMalloc", "to": "hipGeneratedMalloc", "kind": "runtime_api"},
    {"from": "cudaMemcpyToSymbol", "to": "hipMemcpyToSymbol", "kind": "runtime_api"},
    {"from": "__shfl_sync", "to": "__shfl", "kind": "runtime_api"},
    {"from": "__syncwarp", "to": "__syncwarp", "kind": "runtime_api"},
    {"from": "cudaGraphicsMapResources", "to": "hipGraphicsMapResources", "kind": "runtime_api"},
    {"from": "cudaStreamQuery", "to": "hipStreamQuery", "kind": "runtime_api"}]})");
  // The shipped table with one hand-written identifier: its symbol calls, warp intrinsics, call
  // rewrites and unsupported rules (cudaMemcpyToSymbol, __shfl_sync, __syncwarp, cudaGraphics*) stay.
  nlohmann::json rules_json = nlohmann::json::parse(read_text(TAILFORGE_SOURCE_DIR "/policies/hipify_rules.json"));
  rules_json["identifiers"] =
      nlohmann::json::parse(R"([{"from": "cudaMalloc", "to": "hipMalloc", "kind": "runtime_api"}])");
  rules_json["generated_identifiers"] = "names.json";
  std::string rules_text = rules_json.dump(1);
  write_tree_file(dir.file("rules.json"), rules_text);
  Result<HipifyRules> rules = load_hipify_rules(dir.file("rules.json"));
  REQUIRE_MESSAGE(rules.ok(), rules.message());
  CHECK(rules->handwritten_identifiers == 1);
  REQUIRE(rules->identifiers.size() == 2);
  CHECK(rules->identifiers[0].to == "hipMalloc");
  CHECK(rules->identifiers[1].from == "cudaStreamQuery");
  CHECK(rules->generated_identifiers_path == dir.file("names.json"));
  TranslationResult translated = translate_cuda_to_hip(*rules, "void f(cudaStream_t s) { cudaStreamQuery(s); }\n");
  CHECK(translated.hip_source.find("hipStreamQuery(s)") != std::string::npos);

  write_tree_file(dir.file("names.json"), R"({"identifiers": [{"from": "cudaStreamQuery", "kind": "runtime_api"}]})");
  Result<HipifyRules> broken = load_hipify_rules(dir.file("rules.json"));
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.message().find(dir.file("rules.json") + ": generated_identifiers: ") == 0);
  CHECK(broken.message().find(dir.file("names.json") + ": identifiers[0].to: missing") != std::string::npos);
  write_tree_file(dir.file("names.json"),
                  R"({"identifiers": [{"from": "a", "to": "b", "kind": "k"}, {"from": "a", "to": "c", "kind": "k"}]})");
  CHECK(load_hipify_rules(dir.file("rules.json")).message().find("identifiers[1].from: a second entry for 'a'") !=
        std::string::npos);
  std::filesystem::remove(dir.file("names.json"));
  CHECK(load_hipify_rules(dir.file("rules.json")).message().find("cannot read generated identifier table") !=
        std::string::npos);
}

// ---------------------------------------------------------------- the shipped table and the real headers

TEST_CASE("mapped HIP names are declared, and the table maps at least 95% of the CUDA names with a HIP counterpart") {
  if (!std::filesystem::exists(std::string(kCudaInclude) + "/cuda_runtime_api.h")) {
    testing::skip(testing::Missing::cuda_toolkit, std::string("no CUDA headers in ") + kCudaInclude);
    return;
  }
  if (!std::filesystem::exists("/usr/include/hip/hip_runtime_api.h")) {
    testing::skip(testing::Missing::setup_tool, "no HIP headers in /usr/include/hip (hipcc installs them)");
    return;
  }
  Result<HipifyRules> rules = load_hipify_rules(TAILFORGE_SOURCE_DIR "/policies/hipify_rules.json");
  REQUIRE_MESSAGE(rules.ok(), rules.message());
  Result<NameExceptions> exceptions =
      load_name_exceptions(TAILFORGE_SOURCE_DIR "/policies/hipify_name_exceptions.json");
  REQUIRE_MESSAGE(exceptions.ok(), exceptions.message());
  Result<std::vector<std::string>> hip_files = hip_header_files({"/usr/include"});
  REQUIRE_MESSAGE(hip_files.ok(), hip_files.message());
  Result<std::set<std::string>> hip_names = declared_names(*hip_files);
  REQUIRE_MESSAGE(hip_names.ok(), hip_names.message());
  Result<std::set<std::string>> cuda_names = declared_names(cuda_api_header_files(kCudaInclude));
  REQUIRE_MESSAGE(cuda_names.ok(), cuda_names.message());

  // Every mapped HIP name is declared by HIP, or by tailforge's compatibility headers (cuBLAS's,
  // bf16's); a rule naming a compatibility header of its own is that header's business. The
  // generated part is checked only against the HIP libraries it was made with.
  std::set<std::string> declared_or_compat = *hip_names;
  for (const auto& entry : std::filesystem::directory_iterator(TAILFORGE_SOURCE_DIR "/verifier/hip_compat"))
    if (entry.path().extension() == ".h") scan_declared_names(read_text(entry.path().string()), declared_or_compat);
  nlohmann::json shipped = nlohmann::json::parse(read_text(TAILFORGE_SOURCE_DIR "/policies/hipify_names.json"));
  bool same_libraries =
      shipped["generated_from"]["hip_libraries"] == nlohmann::json(hip_header_libraries({"/usr/include"}));
  if (!same_libraries) MESSAGE("generated names not checked: the table was made with other HIP libraries installed");
  size_t undeclared = 0;
  for (size_t i = 0; i < rules->identifiers.size(); ++i) {
    const IdentifierRule& rule = rules->identifiers[i];
    if (!rule.header.empty() || rule.kind == "math" || (i >= rules->handwritten_identifiers && !same_libraries))
      continue;
    if (!declared_or_compat.count(rule.to)) ++undeclared;
    CHECK_MESSAGE(declared_or_compat.count(rule.to),
                  rule.from << " -> " << rule.to << " is not declared in the HIP headers");
  }
  for (const SymbolCallRule& rule : rules->symbol_calls) CHECK_MESSAGE(hip_names->count(rule.to), rule.to);
  CHECK(undeclared == 0);

  // Coverage: of the runtime and driver API names that have a HIP counterpart (by the rules and
  // the exceptions), the share the translator maps.
  std::set<std::string> mapped;
  for (const IdentifierRule& rule : rules->identifiers) mapped.insert(rule.from);
  for (const SymbolCallRule& rule : rules->symbol_calls) mapped.insert(rule.from);
  size_t names = 0, counterparts = 0, covered = 0, cuda_prefixed = 0, cuda_prefixed_counterparts = 0;
  std::vector<std::string> missing;
  for (const std::string& name : *cuda_names) {
    if (!is_cuda_family_name(name)) continue;
    ++names;
    bool runtime = name.rfind("cuda", 0) == 0;
    cuda_prefixed += runtime;
    if (hip_counterpart(name, *exceptions, *hip_names).empty()) continue;
    ++counterparts;
    cuda_prefixed_counterparts += runtime;
    if (mapped.count(name)) {
      ++covered;
    } else if (missing.size() < 20) {
      missing.push_back(name);
    }
  }
  double share = counterparts ? 100.0 * static_cast<double>(covered) / static_cast<double>(counterparts) : 0.0;
  MESSAGE("CUDA runtime+driver names: " << names << " (" << cuda_prefixed
                                        << " cuda*), with a declared HIP counterpart: " << counterparts << " ("
                                        << cuda_prefixed_counterparts << " cuda*), mapped: " << covered << ", share "
                                        << share << "%; identifiers " << rules->identifiers.size() << " ("
                                        << rules->handwritten_identifiers << " hand-written)");
  std::string unmapped;
  for (const std::string& name : missing) unmapped += " " + name;
  CHECK_MESSAGE(covered * 100 >= counterparts * 95, "not mapped, e.g.:" << unmapped);
}

TEST_CASE("tailforge hipify-table reproduces the checked-in policies/hipify_names.json byte for byte") {
  std::string shipped_path = TAILFORGE_SOURCE_DIR "/policies/hipify_names.json";
  std::string shipped = read_text(shipped_path);
  nlohmann::json from = nlohmann::json::parse(shipped)["generated_from"];
  std::string cuda_include = from["cuda_include"].get<std::string>();
  std::vector<std::string> hip_includes = from["hip_include"].get<std::vector<std::string>>();
  if (!std::filesystem::exists(cuda_include + "/cuda_runtime_api.h")) {
    testing::skip(testing::Missing::cuda_toolkit, "no CUDA headers in " + cuda_include);
    return;
  }
  if (hip_version(hip_includes) != from["hip_version"] ||
      nlohmann::json(hip_header_libraries(hip_includes)) != from["hip_libraries"]) {
    testing::skip(testing::Missing::setup_tool, "the installed HIP " + hip_version(hip_includes) +
                                                    " headers are not the ones the table was made from: " + from.dump());
    return;
  }
  if (cuda_version(cuda_include) != from["cuda_version"]) {
    testing::skip(testing::Missing::cuda_toolkit, "the installed CUDA " + cuda_version(cuda_include) +
                                                      " headers are not the ones the table was made from: " + from.dump());
    return;
  }
  TempDir dir;
  std::string exceptions = TAILFORGE_SOURCE_DIR "/policies/hipify_name_exceptions.json";
  std::ostringstream out, err;
  Result<HipifyRules> shipped_rules = load_hipify_rules(TAILFORGE_SOURCE_DIR "/policies/hipify_rules.json");
  REQUIRE_MESSAGE(shipped_rules.ok(), shipped_rules.message());
  HipifyTableSources sources{cuda_include, hip_includes, exceptions, &*shipped_rules,
                             TAILFORGE_SOURCE_DIR "/verifier/hip_compat"};
  REQUIRE_MESSAGE(run_hipify_table_command(sources, dir.file("in_process.json"), out, err) == 0, err.str());
  CHECK_MESSAGE(read_text(dir.file("in_process.json")) == shipped,
                "policies/hipify_names.json is out of step with the generator; regenerate it with "
                "`tailforge hipify-table --out policies/hipify_names.json`, then the shim (hip_on_cuda_names_test)");
  REQUIRE_MESSAGE(std::filesystem::exists(TAILFORGE_BINARY), "the tailforge binary is built before the tests");
  std::vector<std::string> arguments = {"hipify-table", "--cuda-include", cuda_include,        "--exceptions",
                                        exceptions,     "--out",          dir.file("cli.json")};
  for (const std::string& include : hip_includes) arguments.insert(arguments.end(), {"--hip-include", include});
  ProcessResult run = run_tailforge(arguments);
  REQUIRE_MESSAGE(run.exit_code == 0, run.stderr_text);
  CHECK(run.stdout_text.find("wrote " + dir.file("cli.json")) != std::string::npos);
  CHECK(read_text(dir.file("cli.json")) == shipped);

  // --rules names the rules whose header rules pair the headers: without the cuBLAS header rules,
  // cuBLAS's guard maps to no HIP guard (cuSOLVER's unsupported rule still reaches it).
  nlohmann::json rules = nlohmann::json::parse(read_text(TAILFORGE_SOURCE_DIR "/policies/hipify_rules.json"));
  rules.erase("generated_identifiers");
  nlohmann::json headers = nlohmann::json::array();
  for (const nlohmann::json& header : rules["headers"])
    if (header["from"].get<std::string>().rfind("cublas", 0) != 0) headers.push_back(header);
  rules["headers"] = headers;
  write_tree_file(dir.file("rules.json"), rules.dump());
  arguments.insert(arguments.end(), {"--rules", dir.file("rules.json"), "--out", dir.file("no_blas.json")});
  run = run_tailforge(arguments);
  REQUIRE_MESSAGE(run.exit_code == 0, run.stderr_text);
  std::string without_blas = read_text(dir.file("no_blas.json"));
  CHECK(shipped.find(R"({"from": "CUBLAS_API_H_", "to": "TAILFORGE_HIPBLAS_H")") != std::string::npos);
  CHECK(without_blas.find(R"({"from": "CUBLAS_API_H_", "header": "cublas_api.h"})") != std::string::npos);
  CHECK(nlohmann::json::parse(without_blas)["identifiers"] == nlohmann::json::parse(shipped)["identifiers"]);
}
