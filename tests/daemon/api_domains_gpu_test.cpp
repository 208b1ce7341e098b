// The generator's CUDA API programs on an NVIDIA GPU: each family's program passes its own check,
// and breaking the call that family is about (removed, or given a wrong argument) makes that
// check fail. A name counts only where the result depends on it; these tests show it does.
#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "agents/generator/generator.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/chain.h"
#include "verifier/toolchains.h"

using namespace tailforge;
using nlohmann::json;

namespace {

struct Breakage {
  std::string domain;
  std::function<bool(const json& parameters)> fits;  // the variant the breakage applies to
  std::string from, to;                               // every occurrence of `from` becomes `to`
};

bool any(const json&) { return true; }

const std::vector<Breakage>& breakages() {
  static const std::vector<Breakage> list = {
      {"texture_sampling",
       [](const json& p) {
         return p["resource"] != "linear" && p["address"] == "clamp" && (p["shift"][0] != 0 || p["shift"][1] != 0);
       },
       "cudaAddressModeClamp", "cudaAddressModeBorder"},
      {"texture_sampling",  // normalized coordinates on all three axes of a 3D array
       [](const json& p) { return p["resource"] == "array3d" && p["address"] == "wrap" && p["shift"][0] != 0; },
       "cudaAddressModeWrap", "cudaAddressModeClamp"},
      {"surface_roundtrip", any, "surface, x * (int)sizeof(float), y);", "surface, 0, y);"},
      {"stream_pipeline", [](const json& p) { return p["host_function"] == true; },
       "cudaLaunchHostFunc(consumer, chunk_done, &finished)", "cudaSuccess"},
      {"stream_pipeline", [](const json& p) { return p["host_function"] == false; },
       "cudaStreamAddCallback(consumer, chunk_done, &finished, 0)", "cudaSuccess"},
      {"graph_replay", any, "cudaGraphLaunch(instance, run_stream)", "cudaSuccess"},
      {"occupancy_sizing", any,
       "cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_multiprocessor, weighted_square, block, shared_bytes)",
       "cudaSuccess"},
      {"host_memory", [](const json& p) { return p["host_memory"] == "mapped"; },
       "cudaHostGetDevicePointer((void**)&on_device, mapped, 0)", "cudaSuccess"},
      {"half_precision", [](const json& p) { return p["paired"] == false; }, "__hadd(", "__hsub("},
      {"random_numbers", [](const json& p) { return p["host_api"] == true && p["distribution"] == "uniform"; },
       "curandGenerateUniform(generator, d_out, n)", "curandGenerateUniform(generator, d_out, n / 2)"},
      {"random_numbers", [](const json& p) { return p["host_api"] == false; }, "curand_init(key, i, 0, &state)",
       "curand_init(key, 0, 0, &state)"},
      {"sparse_products", [](const json& p) { return p["alpha"] != p["beta"]; }, "&alpha, matrix", "&beta, matrix"},
      {"blas_products", any, "&alpha, d_a", "&beta, d_a"},
      {"cooperative_tiles", any, "tile.shfl_down(v, offset)", "tile.shfl_down(v, 0)"},
      {"streaming_hints", any, "(&in[i])", "(&in[0])"},
      {"driver_buffers", any, "(buffer, host.data(), n * sizeof(float)", "(copy, host.data(), n * sizeof(float)"},
      {"warp_votes", [](const json& p) { return p["mask"] == "0xffffffffu"; }, "__ballot_sync(0xffffffffu, vote)",
       "__ballot_sync(0xffffffffu, 1)"},
      {"runtime_queries", [](const json& p) { return p["symbols"] != "async"; },
       "cudaMemcpyToSymbol(device_offsets, offsets, sizeof(offsets))", "cudaSuccess"},
      {"runtime_queries", [](const json& p) { return p["symbols"] != "async"; },
       "cudaMemcpyFromSymbol(&positive, device_positive, sizeof(positive))", "cudaSuccess"},
      {"runtime_queries", [](const json& p) { return p["peer"] == true; },
       "cudaMemcpyPeer(d_in, device, d_staged, device, n * sizeof(float))", "cudaSuccess"},
      {"random_numbers", [](const json& p) { return p["distribution"] == "bits"; }, "curand(&state) >> 16",
       "curand(&state) >> 17"},
      {"runtime_compiled", any, "cuLaunchKernel(function, (n + ", "cuLaunchKernel(function, 0 * (n + "},
  };
  return list;
}

// The first program of the domain (seeds 1, 2, ...) whose variant fits.
std::optional<GeneratedProgram> program_for(const Breakage& breakage) {
  static const GeneratorCatalog catalog = load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value();
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    GenerationRequest request;
    request.seed = seed;
    request.domain = breakage.domain;
    Result<GeneratedProgram> program = generate_program(catalog, request);
    if (program && breakage.fits(program->variables["parameters"]) && program->source.find(breakage.from) != std::string::npos) {
      return std::move(*program);
    }
  }
  return std::nullopt;
}

ChainResult build_and_run(const std::string& path) {
  ChainOptions options;
  options.translate_cuda_to_hip = false;
  options.verifier.stages = {"nvidia.exe", "nvidia.run"};
  return verify_file(path, options);
}

std::string run_status(const ChainResult& result) {
  const StageResult* run = result.stage("nvidia.run");
  return run ? run->status : "<missing>";
}

}  // namespace

TEST_CASE("each CUDA API family's program passes on a GPU, and breaking its call fails the program's own check") {
  if (!testing::nvcc_here() || !testing::nvidia_gpu_here("to run the programs")) return;
  TempDir dir;
  for (const Breakage& breakage : breakages()) {
    CAPTURE(breakage.domain);
    CAPTURE(breakage.from);
    std::optional<GeneratedProgram> program = program_for(breakage);
    REQUIRE_MESSAGE(program.has_value(), "no program of " << breakage.domain << " fits the breakage");
    std::string whole = dir.file(breakage.domain + ".cu");
    std::ofstream(whole) << program->source;
    ChainResult intact = build_and_run(whole);
    CHECK_MESSAGE(run_status(intact) == "ok", chain_result_to_json(intact).dump().substr(0, 3000));

    std::string broken_source = program->source;
    for (size_t at = broken_source.find(breakage.from); at != std::string::npos;
         at = broken_source.find(breakage.from, at + breakage.to.size())) {
      broken_source.replace(at, breakage.from.size(), breakage.to);
    }
    std::string broken = dir.file(breakage.domain + "_broken.cu");
    std::ofstream(broken) << broken_source;
    ChainResult result = build_and_run(broken);
    const StageResult* built = result.stage("nvidia.exe");
    REQUIRE_MESSAGE((built && built->status == "ok"), chain_result_to_json(result).dump().substr(0, 3000));
    CHECK_MESSAGE(run_status(result) == "fail", chain_result_to_json(result).dump().substr(0, 3000));
  }
}
