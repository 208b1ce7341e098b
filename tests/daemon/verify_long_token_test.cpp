// `tailforge verify` on a program whose output is one token of a million characters: the CUDA
// run and its HIP translation's run on NVIDIA are compared without a crash, equal when they print
// the same token, a mismatch naming it when the HIP build changes one character.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/toolchains.h"

using namespace tailforge;

namespace {

// Prints "result " and a million-digit token; built as HIP on NVIDIA (the shim defines
// __HIP_PLATFORM_NVIDIA__), the last digit differs when `change_in_hip`.
std::string long_token_program(bool change_in_hip) {
  std::string source = R"(#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(int* out) { out[threadIdx.x] = 7; }

int main() {
  int* device = nullptr;
  int host[1] = {0};
  cudaMalloc(&device, sizeof(int));
  fill<<<1, 1>>>(device);
  cudaMemcpy(host, device, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(device);
  int last = host[0];
)";
  if (change_in_hip) source += "#ifdef __HIP_PLATFORM_NVIDIA__\n  last = 8;\n#endif\n";
  source += R"(  std::printf("result ");
  for (int i = 0; i < 999999; ++i) std::putchar('0' + host[0]);
  std::printf("%d\n", last);
  return 0;
}
)";
  return source;
}

std::string stage_field(const nlohmann::json& chain, const std::string& stage, const std::string& field) {
  for (const nlohmann::json& s : chain["stages"])
    if (s["name"] == stage) return s[field].get<std::string>();
  return "";
}

}  // namespace

TEST_CASE("verify compares a million-character token between CUDA and HIP runs without a crash") {
  if (!testing::nvcc_here() || !testing::nvidia_gpu_here("to run both programs")) return;
  TempDir dir;
  for (bool change : {false, true}) {
    std::string path = dir.file(change ? "changed.cu" : "same.cu");
    std::ofstream(path) << long_token_program(change);
    ProcessResult run = run_tailforge({"verify", path, "--json", "--db", dir.file("cache.db"), "--no-cache"}, 600);
    INFO(run.stderr_text.substr(0, 2000));
    REQUIRE(run.signal == 0);
    nlohmann::json chain = nlohmann::json::parse(run.stdout_text, nullptr, false);
    REQUIRE(chain.is_object());
    CHECK(stage_field(chain, "nvidia.run", "status") == "ok");
    CHECK(stage_field(chain, "hip_on_nvidia.run", "status") == "ok");
    if (!change) {
      CHECK(stage_field(chain, "compare", "status") == "ok");
    } else {
      CHECK(run.exit_code == 1);
      CHECK(stage_field(chain, "compare", "status") == "fail");
      CHECK(stage_field(chain, "compare", "reason").find("(1000000 characters)") != std::string::npos);
    }
  }
}
