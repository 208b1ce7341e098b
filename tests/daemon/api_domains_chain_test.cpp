// The generator's CUDA API programs through the whole verifier chain with the real toolchains of
// this machine: NVIDIA builds, the translation, the AMD compile, assemble and link for gfx1100,
// the HIP-on-NVIDIA build, and the runs and comparison where a GPU exists. Every stage that can
// run here passes, on both vendors.
#include <doctest/doctest.h>

#include <fstream>

#include "agents/generator/generator.h"
#include "test_support/temp_dir.h"
#include "verifier/chain.h"

using namespace tailforge;

TEST_CASE("every CUDA API domain's programs pass every stage this machine can run, on both vendors" *
          doctest::test_suite("long")) {
  const GeneratorCatalog catalog = load_default_generator_catalog(TAILFORGE_SOURCE_DIR).value();
  TempDir dir;
  int verified = 0;
  for (const std::string& domain : generator_api_domains()) {
    for (uint64_t seed : {3, 17}) {
      GenerationRequest request;
      request.seed = seed;
      request.domain = domain;
      Result<GeneratedProgram> program = generate_program(catalog, request);
      REQUIRE_MESSAGE(program.ok(), program.message());
      std::string path = dir.file(domain + "_" + std::to_string(seed) + ".cu");
      std::ofstream(path) << program->source;
      ChainResult result = verify_file(path, ChainOptions{});
      std::string failed;
      for (const StageResult& stage : result.stages) {
        if (stage.status != "ok" && stage.status != "skipped") failed += " " + stage.name + " (" + stage.category.value_or("") + ")";
      }
      CHECK_MESSAGE(result.ok, domain << " seed " << seed << ":" << failed);
      verified += result.ok;
    }
  }
  MESSAGE(verified << " API programs passed every stage that ran here");
}
