#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>

#include "agents/api_table.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

const ApiTable& shipped_table() {
  static const ApiTable* table = [] {
    Result<const ApiTable*> loaded = load_api_table(std::string(TAILFORGE_SOURCE_DIR) + "/policies/hipify_rules.json",
                                                    std::string(TAILFORGE_SOURCE_DIR) + "/policies/api_families.json");
    REQUIRE_MESSAGE(loaded.ok(), loaded.message());
    return *loaded;
  }();
  return *table;
}

std::string family_of(const std::string& name) {
  const ApiIdentifier* identifier = shipped_table().find(name);
  REQUIRE_MESSAGE(identifier != nullptr, name);
  return shipped_table().family_name(*identifier);
}

const char* kFamilies = R"({
  "unmatched_family": "other",
  "families": [{"name": "memory"}, {"name": "other"}, {"name": "warp", "extra_identifiers": ["__match_any_sync"]}],
  "rules": [{"family": "memory", "names": ["cudaMalloc"]}, {"family": "memory", "prefixes": ["cudaFree"], "kinds": ["runtime_api"]}]
})";

}  // namespace

TEST_CASE("every name of the shipped table has one family, and every family has names") {
  const ApiTable& table = shipped_table();
  CHECK(table.identifiers().size() > 2000);
  std::vector<int> per_family(table.families().size(), 0);
  for (const ApiIdentifier& identifier : table.identifiers()) {
    REQUIRE(identifier.family < table.families().size());
    ++per_family[identifier.family];
  }
  for (size_t i = 0; i < per_family.size(); ++i) CHECK_MESSAGE(per_family[i] > 0, table.families()[i].name);
  CHECK(table.families().size() >= 25);
}

TEST_CASE("names land in the family a reader expects") {
  CHECK(family_of("cuLaunchKernel") == "driver_module_launch");
  CHECK(family_of("cuModuleLoadData") == "driver_module_launch");
  CHECK(family_of("cuCtxCreate") == "driver_context_device");
  CHECK(family_of("CUdeviceptr") == "driver_memory");
  CHECK(family_of("cuMemcpyHtoD") == "driver_memory");
  CHECK(family_of("cudaMemcpy2D") == "memcpy");
  CHECK(family_of("cudaMemcpyDeviceToDevice") == "memcpy");
  CHECK(family_of("cudaMemcpyToSymbol") == "memcpy");
  CHECK(family_of("cudaMalloc") == "memory");
  CHECK(family_of("cudaMallocManaged") == "memory");
  CHECK(family_of("cudaMemAdviseSetReadMostly") == "memory");
  CHECK(family_of("cudaCreateTextureObject") == "texture_surface_array");
  CHECK(family_of("cudaMallocArray") == "texture_surface_array");
  CHECK(family_of("cudaAddressModeClamp") == "texture_surface_array");
  CHECK(family_of("cudaThreadSynchronize") == "legacy");
  CHECK(family_of("cudaStreamBeginCapture") == "graph");
  CHECK(family_of("cudaGraphLaunch") == "graph");
  CHECK(family_of("cudaStreamCreateWithPriority") == "stream");
  CHECK(family_of("cudaEventElapsedTime") == "event");
  CHECK(family_of("cudaGetErrorString") == "error");
  CHECK(family_of("cudaOccupancyMaxActiveBlocksPerMultiprocessor") == "device_properties_occupancy");
  CHECK(family_of("cudaDeviceGetAttribute") == "device_properties_occupancy");
  CHECK(family_of("cudaSetDevice") == "device_management");
  CHECK(family_of("__shfl_down_sync") == "warp");
  CHECK(family_of("__ballot_sync") == "warp");
  CHECK(family_of("curand_init") == "curand_device");
  CHECK(family_of("curandCreateGenerator") == "curand_host");
  CHECK(family_of("cusparseCreate") == "cusparse");
  CHECK(family_of("cublasSgemm") == "cublas");
  CHECK(family_of("nvrtcCompileProgram") == "rtc");
  CHECK(family_of("__nv_bfloat16") == "half_bf16");
  // A family's extra names: real CUDA spells them as HIP does, so the table has no rule for them.
  CHECK(family_of("__half2float") == "half_bf16");
  CHECK(family_of("tex2D") == "texture_surface_array");
  CHECK(family_of("this_thread_block") == "launch_cooperative");
  CHECK_FALSE(shipped_table().find("__half2float")->in_table);
  CHECK(shipped_table().find("cudaMalloc")->in_table);
}

TEST_CASE("a families file is checked: unknown keys, unknown families, an extra name the table has") {
  std::vector<std::pair<std::string, std::string>> names = {{"cudaMalloc", "runtime_api"}, {"cudaFree", "runtime_api"},
                                                            {"cudaFreeHost", "memory"}, {"cuInit", "driver_api"}};
  Result<ApiTable> table = build_api_table(names, kFamilies, "families.json");
  REQUIRE_MESSAGE(table.ok(), table.message());
  CHECK(table->family_name(*table->find("cudaMalloc")) == "memory");
  CHECK(table->family_name(*table->find("cudaFree")) == "memory");
  CHECK(table->family_name(*table->find("cudaFreeHost")) == "other");  // a prefix with the wrong kind
  CHECK(table->family_name(*table->find("cuInit")) == "other");
  CHECK(table->family_name(*table->find("__match_any_sync")) == "warp");
  CHECK(table->members(table->family_index("memory")).size() == 2);

  Result<ApiTable> unknown_key = build_api_table(names, R"({"unmatched_family": "a", "families": [{"name": "a"}],
    "rules": [{"family": "a", "name": ["x"]}]})", "families.json");
  REQUIRE_FALSE(unknown_key.ok());
  CHECK(unknown_key.message().find("families.json: rules[0].name is not a known key") != std::string::npos);
  Result<ApiTable> unknown_family = build_api_table(names, R"({"unmatched_family": "a", "families": [{"name": "a"}],
    "rules": [{"family": "b", "names": ["x"]}]})", "families.json");
  REQUIRE_FALSE(unknown_family.ok());
  CHECK(unknown_family.message().find("rules[0].family names no family: 'b'") != std::string::npos);
  Result<ApiTable> both = build_api_table(names, R"({"unmatched_family": "a", "families": [{"name": "a"}],
    "rules": [{"family": "a", "names": ["x"], "prefixes": ["cu"]}]})", "families.json");
  CHECK_FALSE(both.ok());
  Result<ApiTable> duplicate = build_api_table(names, R"({"unmatched_family": "a",
    "families": [{"name": "a", "extra_identifiers": ["cudaMalloc"]}], "rules": []})", "families.json");
  REQUIRE_FALSE(duplicate.ok());
  CHECK(duplicate.message().find("'cudaMalloc' is in the translation table already") != std::string::npos);
  CHECK_FALSE(build_api_table(names, R"({"unmatched_family": "z", "families": [{"name": "a"}], "rules": []})", "f").ok());
  CHECK_FALSE(build_api_table(names, "not json", "f").ok());
}

TEST_CASE("API names count in code only: not in comments, strings or #include lines") {
  const ApiTable& table = shipped_table();
  std::string code = R"code(#include <curand.h>
  #  include "cuda_runtime.h"
#include_next <cusparse.h>
// cudaMalloc in a comment
/* cudaFree(p); cudaMemcpy2D */
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) puts(cudaGetErrorString(e)); } while (0)
const char* s = "cudaMallocManaged(&p, n)";
const char* r = R"x(cudaStreamCreate)x";
int main() {
  float* p;
  CHECK(cudaMalloc(&p, 4));
  cudaMalloc(&p, 8); curand(&state);
  cudaFree(p);
}
)code";
  ApiUses uses = count_api_uses(code, table);
  CHECK(uses["cudaMalloc"] == 2);
  CHECK(uses["cudaFree"] == 1);
  CHECK(uses["cudaError_t"] == 1);
  CHECK(uses["cudaSuccess"] == 1);
  CHECK(uses["cudaGetErrorString"] == 1);
  CHECK(uses["curand"] == 1);  // the call, not the header's name
  CHECK(uses.count("cudaMemcpy2D") == 0);
  CHECK(uses.count("cudaMallocManaged") == 0);
  CHECK(uses.count("cudaStreamCreate") == 0);
  CHECK(uses.count("cusparse") == 0);
  CHECK(uses.count("main") == 0);
}

TEST_CASE("counting survives hostile text: a megabyte on one line, NUL bytes, an open comment") {
  const ApiTable& table = shipped_table();
  std::string line(1 << 20, ' ');
  for (size_t i = 0; i < line.size(); i += 97) line.replace(i, 11, "cudaMalloc ");
  line += std::string("\0#include <a>\n/* cudaFree", 25);
  auto start = std::chrono::steady_clock::now();
  ApiUses uses = count_api_uses(line, table);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(uses["cudaMalloc"] > 5000);
  CHECK(uses.count("cudaFree") == 0);
  CHECK(seconds < 5);  // one pass; a per-character recursion or regex would not finish
  CHECK(count_api_uses("", table).empty());
  CHECK(count_api_uses("#", table).empty());
  CHECK(count_api_uses("#include", table).empty());
}

TEST_CASE("a tree's files are counted by name: files using each, uses, skipped folders and binaries") {
  TempDir dir;
  write_tree_file(dir.file("src/a.cu"), "int main() { cudaMalloc(0, 0); cudaMalloc(0, 0); cudaFree(0); }\n");
  write_tree_file(dir.file("src/util.cuh"), "inline void f() { cudaMalloc(0, 0); }\n");
  write_tree_file(dir.file("src/plain.cpp"), "int g() { return 1; }\n");
  write_tree_file(dir.file("notes.txt"), "cudaMalloc cudaMalloc\n");
  write_tree_file(dir.file(".git/objects/x.h"), "cudaMalloc\n");
  write_tree_file(dir.file("blob.h"), std::string("cudaFree\0binary", 15));
  std::filesystem::create_directory_symlink(dir.file("src"), dir.file("linked"));
  Result<TreeApiCount> count = count_tree_api_uses(dir.path(), shipped_table());
  REQUIRE_MESSAGE(count.ok(), count.message());
  CHECK(count->files == 3);
  CHECK(count->api_files == 2);
  CHECK(count->names["cudaMalloc"].files == 2);
  CHECK(count->names["cudaMalloc"].uses == 3);
  CHECK(count->names["cudaFree"].files == 1);
  CHECK_FALSE(count_tree_api_uses(dir.file("missing"), shipped_table()).ok());
}
