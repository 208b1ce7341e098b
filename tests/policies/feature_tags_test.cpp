#include "policies/feature_tags.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>

#include "test_support/temp_dir.h"

namespace tailforge {
namespace {

bool has(const std::vector<std::string>& tags, const std::string& tag) {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

const FeatureRules& shipped_features() {
  static const FeatureRules rules = [] {
    Result<FeatureRules> loaded = load_feature_rules(std::string(TAILFORGE_SOURCE_DIR) + "/policies/feature_rules.json");
    REQUIRE_MESSAGE(loaded.ok(), loaded.message());
    return std::move(loaded.value());
  }();
  return rules;
}

const DomainRules& shipped_domains() {
  static const DomainRules rules = [] {
    Result<DomainRules> loaded = load_domain_rules(std::string(TAILFORGE_SOURCE_DIR) + "/policies/domains.json");
    REQUIRE_MESSAGE(loaded.ok(), loaded.message());
    return std::move(loaded.value());
  }();
  return rules;
}

}  // namespace

TEST_CASE("CUDA feature tags find shared memory, atomics, shuffles, inline PTX and friends") {
  std::string cuda = R"(
template <int N>
__global__ void __launch_bounds__(256) k(double* out, const float* in) {
  __shared__ float tile[256];
  extern __shared__ float dyn[];
  float local[8];
  tile[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  #pragma unroll
  for (int i = 0; i < 8; ++i) local[i] = __shfl_down_sync(0xffffffff, tile[i], 1);
  unsigned lane; asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  switch (lane) { case 0: atomicAdd(out, (double)local[0]); break; default: break; }
})";
  std::vector<std::string> tags = feature_tags(shipped_features(), "cuda", cuda);
  for (const char* tag : {"shared_memory_static", "shared_memory_dynamic", "atomics", "syncthreads", "warp_shuffle",
                          "switch", "loops", "local_array", "inline_ptx", "templates", "launch_bounds",
                          "unroll_pragma", "double_precision"}) {
    INFO(std::string(tag));
    CHECK(has(tags, tag));
  }
  CHECK_FALSE(has(tags, "constant_memory"));
  CHECK_FALSE(has(tags, "streams"));
  std::vector<std::string> only_dynamic = feature_tags(shipped_features(), "hip", "extern __shared__ float s[];");
  CHECK(has(only_dynamic, "shared_memory_dynamic"));
  CHECK_FALSE(has(only_dynamic, "shared_memory_static"));
}

TEST_CASE("C feature tags find switch, float literals, structs, pointer arithmetic, recursion and intrinsics") {
  std::string c = R"(#include <immintrin.h>
struct point { int x, y; };
int fact(int n) { if (n < 2) return 1; return n * fact(n - 1); }
float scale(float v) { return v * 2.5f; }
int sum(int* p, int n) { int s = 0; while (n--) s += *p++; switch (s) { case 1: return 1; } return s; }
)";
  std::vector<std::string> tags = feature_tags(shipped_features(), "c", c);
  for (const char* tag : {"switch", "float_literal", "struct", "pointer_arithmetic", "recursion", "intrinsics"}) {
    INFO(std::string(tag));
    CHECK(has(tags, tag));
  }
  std::vector<std::string> plain = feature_tags(shipped_features(), "c", "int add(int a, int b) { return a + b; }");
  CHECK_FALSE(has(plain, "recursion"));
  CHECK_FALSE(has(plain, "float_literal"));
  CHECK_FALSE(has(plain, "switch"));
  CHECK(feature_tags(shipped_features(), "cobol", "anything").empty());
}

TEST_CASE("domains come from keyword sets, general compute by default") {
  CHECK(classify_domain(shipped_domains(), "softmax over attention logits of a transformer layer") == "machine learning");
  CHECK(classify_domain(shipped_domains(), "Generate a CUDA kernel for cloth simulation with a 64x64 grid") == "simulation");
  CHECK(classify_domain(shipped_domains(), "gaussian blur of an RGB image, one thread per pixel") == "graphics and image");
  CHECK(classify_domain(shipped_domains(), "SHA256 hashing of nonces, AES encrypt") == "cryptography and security");
  CHECK(classify_domain(shipped_domains(), "bitonic sort then a prefix sum scan") == "data structures and algorithms");
  CHECK(classify_domain(shipped_domains(), "jacobi stencil solver for the poisson equation") == "scientific computing");
  CHECK(classify_domain(shipped_domains(), "kernel k(int* a) { a[0] = 1; }") == "general compute");
}

TEST_CASE("broken rule files are refused with the file and the entry named") {
  TempDir dir;
  std::ofstream(dir.file("f.json")) << R"({"cuda": [{"tag": "x", "regex": ["(bad"]}]})";
  Result<FeatureRules> bad = load_feature_rules(dir.file("f.json"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message().find("cuda[0].regex") != std::string::npos);
  std::ofstream(dir.file("d.json")) << R"({"domains": [{"name": "x"}]})";
  Result<DomainRules> bad_domains = load_domain_rules(dir.file("d.json"));
  REQUIRE_FALSE(bad_domains.ok());
  CHECK(bad_domains.message().find("domains[0]") != std::string::npos);
}

}  // namespace tailforge
