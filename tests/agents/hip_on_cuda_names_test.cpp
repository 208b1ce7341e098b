#include "agents/translate/hip_on_cuda_names.h"
#include "agents/translate/hipify_rules.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace tailforge;

#ifndef TAILFORGE_SOURCE_DIR
#define TAILFORGE_SOURCE_DIR TAILFORGE_TEST_DATA "/../.."
#endif

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("the shim's renames are the translator's table reversed") {
  auto rules = load_hipify_rules(TAILFORGE_SOURCE_DIR "/policies/hipify_rules.json");
  REQUIRE_MESSAGE(rules.ok(), rules.message());
  std::string shim_dir = TAILFORGE_SOURCE_DIR "/verifier/hip_on_cuda/hip";
  std::string generated = hip_on_cuda_names_header(*rules, read_text(shim_dir + "/hip_runtime.h"));
  std::string committed_path = shim_dir + "/hip_on_cuda_names.h";
  std::string libraries = hip_on_cuda_library_names_header(*rules);
  std::string libraries_path = shim_dir + "/hip_on_cuda_library_names.h";
  // Regenerating writes the files and fails: a test never passes on a golden file it just wrote.
  if (std::getenv("TAILFORGE_REGENERATE_SHIM")) {
    std::ofstream(committed_path, std::ios::binary) << generated;
    std::ofstream(libraries_path, std::ios::binary) << libraries;
    FAIL("regenerated " << committed_path << " and " << libraries_path
                        << "; review the diff, then run again without TAILFORGE_REGENERATE_SHIM");
  }
  CHECK_MESSAGE(read_text(libraries_path) == libraries,
                "verifier/hip_on_cuda/hip/hip_on_cuda_library_names.h is out of step with policies/hipify_rules.json; "
                "regenerate it with TAILFORGE_REGENERATE_SHIM=1 build/tests/agents_tests -tc='the shim*'");
  for (const char* name : {"hiprandCreateGenerator", "hiprand_init", "hiprandState", "HIPRAND_RNG_PSEUDO_DEFAULT",
                           "hipsparseCreate", "hipsparseSpMV"}) {
    CHECK_MESSAGE(libraries.find(std::string("#define ") + name + " ") != std::string::npos, name);
  }
  CHECK_MESSAGE(read_text(committed_path) == generated,
                "verifier/hip_on_cuda/hip/hip_on_cuda_names.h is out of step with policies/hipify_rules.json; "
                "regenerate it with TAILFORGE_REGENERATE_SHIM=1 build/tests/agents_tests -tc='the shim*'");

  // What real programs needed and the hand-written part does not declare.
  for (const char* name : {"hipFuncSetAttribute", "hipLaunchCooperativeKernel", "hipMemAdviseSetPreferredLocation", "hipCpuDeviceId",
                           "hipOccupancyMaxActiveBlocksPerMultiprocessor", "hipHostMallocWriteCombined", "make_hipExtent",
                           "make_hipPitchedPtr"})
    CHECK_MESSAGE(generated.find(std::string("#define ") + name + " ") != std::string::npos, name);
  // A name the hand-written shim declares with HIP's own signature is not renamed over it.
  CHECK(generated.find("#define hipHostMalloc ") == std::string::npos);
  CHECK(generated.find("#define hipMemAdvise ") == std::string::npos);
  // Library names stay out: the shim links no cuRAND or cuBLAS.
  CHECK(generated.find("hiprand") == std::string::npos);
  CHECK(generated.find("hipblas") == std::string::npos);
}
