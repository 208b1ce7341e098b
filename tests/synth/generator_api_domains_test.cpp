// The generator's CUDA API domains (agents/generator/domains_api.cpp): each writes the names of
// its family, varies its programs from seed to seed, and is reachable by name for synthesis.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "agents/api_table.h"
#include "agents/generator/generator.h"
#include "synth/minhash.h"

using namespace tailforge;

namespace {

const GeneratorCatalog& catalog() {
  static const GeneratorCatalog loaded = load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value();
  return loaded;
}

const ApiTable& table() {
  static const ApiTable* loaded = load_api_table(std::string(TAILFORGE_SOURCE_DIR) + "/policies/hipify_rules.json",
                                                 std::string(TAILFORGE_SOURCE_DIR) + "/policies/api_families.json")
                                      .value();
  return *loaded;
}

GeneratedProgram program_of(const std::string& domain, uint64_t seed) {
  GenerationRequest request;
  request.seed = seed;
  request.domain = domain;
  Result<GeneratedProgram> program = generate_program(catalog(), request);
  REQUIRE_MESSAGE(program.ok(), domain << ": " << program.message());
  return std::move(*program);
}

// What every program of a domain uses, over a few seeds (a variant may leave some out).
std::set<std::string> names_over_seeds(const std::string& domain, int seeds) {
  std::set<std::string> names;
  for (int s = 1; s <= seeds; ++s) {
    for (const auto& [name, uses] : count_api_uses(program_of(domain, 100 + s).source, table())) names.insert(name);
  }
  return names;
}

// Names each domain must write, over its variants.
const std::map<std::string, std::vector<std::string>> kExpected = {
    {"texture_sampling", {"cudaTextureObject_t", "cudaCreateTextureObject", "cudaDestroyTextureObject", "cudaResourceDesc",
                          "cudaTextureDesc", "cudaResourceTypeArray", "cudaResourceTypePitch2D", "cudaResourceTypeLinear",
                          "cudaMallocArray", "cudaMalloc3DArray", "cudaMemcpy2DToArray", "cudaMemcpy3D", "make_cudaExtent",
                          "cudaAddressModeClamp", "cudaAddressModeBorder", "cudaAddressModeWrap", "cudaFilterModeLinear",
                          "cudaFilterModePoint", "tex2D", "tex3D", "tex1Dfetch", "cudaMallocPitch", "cudaMemcpy2D"}},
    {"surface_roundtrip", {"cudaSurfaceObject_t", "cudaCreateSurfaceObject", "surf2Dwrite", "surf2Dread",
                           "cudaArraySurfaceLoadStore", "cudaMemcpy2DFromArray"}},
    {"stream_pipeline", {"cudaStreamCreateWithPriority", "cudaDeviceGetStreamPriorityRange", "cudaStreamCreateWithFlags",
                         "cudaStreamNonBlocking", "cudaEventCreateWithFlags", "cudaEventDisableTiming", "cudaStreamWaitEvent",
                         "cudaLaunchHostFunc", "cudaStreamAddCallback", "cudaMemcpyDeviceToDevice", "cudaStreamQuery",
                         "cudaEventQuery"}},
    {"graph_replay", {"cudaGraph_t", "cudaGraphExec_t", "cudaStreamBeginCapture", "cudaStreamEndCapture",
                      "cudaGraphInstantiateWithFlags", "cudaGraphLaunch", "cudaGraphCreate", "cudaGraphAddKernelNode",
                      "cudaKernelNodeParams", "cudaGraphExecDestroy", "cudaGraphDestroy"}},
    {"occupancy_sizing", {"cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaOccupancyMaxPotentialBlockSize",
                          "cudaDeviceGetAttribute", "cudaDevAttrMultiProcessorCount", "cudaGetDeviceProperties"}},
    {"host_memory", {"cudaHostAlloc", "cudaHostAllocMapped", "cudaHostGetDevicePointer", "cudaHostRegister",
                     "cudaHostUnregister", "cudaMallocManaged", "cudaMemAdvise", "cudaMemPrefetchAsync", "cudaCpuDeviceId",
                     "cudaMemGetInfo"}},
    {"half_precision", {"__half", "__float2half", "__half2float", "__hadd", "__hmul", "__nv_bfloat16", "__float2bfloat16",
                        "__bfloat162float"}},
    {"random_numbers", {"curandGenerator_t", "curandCreateGenerator", "curandSetPseudoRandomGeneratorSeed",
                        "curandDestroyGenerator", "curandStatus_t", "CURAND_STATUS_SUCCESS", "curand_init", "curandState",
                        "curand_uniform", "curandGenerateUniform", "curand"}},
    {"sparse_products", {"cusparseHandle_t", "cusparseCreate", "cusparseCreateCsr", "cusparseCreateDnVec", "cusparseSpMV",
                         "cusparseSpMV_bufferSize", "cusparseDestroy", "CUSPARSE_STATUS_SUCCESS"}},
    {"blas_products", {"cublasHandle_t", "cublasCreate", "cublasDestroy", "cublasSetMathMode", "cublasSetStream",
                       "CUBLAS_OP_N", "CUBLAS_STATUS_SUCCESS", "cublasStatus_t"}},
    {"cooperative_tiles", {"thread_block", "this_thread_block", "tiled_partition", "thread_block_tile", "thread_rank",
                           "meta_group_rank", "meta_group_size"}},
    {"streaming_hints", {"__ldcs", "__stcs", "rsqrtf"}},
    {"driver_buffers", {"cuInit", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute", "cuDevicePrimaryCtxRetain",
                        "cuCtxSetCurrent", "cuMemAlloc", "cuMemcpyHtoD", "cuMemcpyDtoH", "cuMemFree", "CUdeviceptr",
                        "CUresult", "CUDA_SUCCESS", "cuStreamCreate", "cuEventCreate", "cuEventElapsedTime"}},
    {"runtime_compiled", {"nvrtcProgram", "nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetPTX", "nvrtcGetPTXSize",
                          "nvrtcDestroyProgram", "cuModuleLoadData", "cuModuleGetFunction", "cuLaunchKernel", "CUmodule",
                          "CUfunction", "cuModuleUnload"}},
    {"warp_votes", {"__ballot_sync", "__any_sync", "__all_sync", "__activemask", "__syncwarp", "__popc", "__ffs", "__clz",
                    "__reduce_add_sync", "__match_any_sync"}},
    {"runtime_queries", {"cudaDriverGetVersion", "cudaRuntimeGetVersion", "cudaMemGetInfo", "cudaChooseDevice",
                         "cudaSetDeviceFlags", "cudaGetDeviceFlags", "cudaDeviceScheduleBlockingSync",
                         "cudaFuncGetAttributes", "cudaFuncAttributes", "cudaFuncSetCacheConfig", "cudaDeviceSetCacheConfig",
                         "cudaDeviceGetLimit", "cudaLimitMallocHeapSize", "cudaPointerGetAttributes",
                         "cudaPointerAttributes", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol", "cudaMemcpyToSymbolAsync",
                         "cudaMemcpyFromSymbolAsync", "cudaGetSymbolAddress", "cudaPeekAtLastError", "cudaMemcpyPeer",
                         "cudaDeviceCanAccessPeer", "cudaDeviceEnablePeerAccess", "cudaDeviceReset"}},
};

}  // namespace

TEST_CASE("each CUDA API domain writes the names of its family, over its variants") {
  std::vector<std::string> domains = generator_domains();
  for (const auto& [domain, expected] : kExpected) {
    CAPTURE(domain);
    REQUIRE(std::find(domains.begin(), domains.end(), domain) != domains.end());
    std::set<std::string> names = names_over_seeds(domain, 24);
    for (const std::string& name : expected) CHECK_MESSAGE(names.count(name) == 1, domain << " never writes " << name);
  }
}

TEST_CASE("an API domain's programs differ from seed to seed: layout, sizes, kernels and host flow") {
  MinHashOptions options;  // the synthesizer's near-duplicate rule
  for (const auto& [domain, expected] : kExpected) {
    CAPTURE(domain);
    std::vector<std::vector<uint64_t>> shingles;
    std::set<std::string> texts, variants;
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      GeneratedProgram program = program_of(domain, seed * 7919);
      texts.insert(program.source);
      variants.insert(program.variables["parameters"].dump());
      shingles.push_back(shingle_hashes(program.source, options));
      // Each program checks itself and says so.
      CHECK(program.source.find("(passed);\n}") != std::string::npos);
    }
    CHECK(texts.size() >= 10);
    CHECK(variants.size() >= 4);
    // Not one shape: most pairs are below the near-duplicate threshold.
    int pairs = 0, near = 0;
    for (size_t i = 0; i < shingles.size(); ++i) {
      for (size_t j = i + 1; j < shingles.size(); ++j) {
        ++pairs;
        near += shingle_set_jaccard(shingles[i], shingles[j]) >= options.threshold;
      }
    }
    CHECK_MESSAGE(near * 2 < pairs, domain << ": " << near << " of " << pairs << " pairs are near-duplicates");
  }
}
