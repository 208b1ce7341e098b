#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "agents/generator/generator.h"
#include "base/sha256.h"
#include "test_support/tools_here.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

const GeneratorCatalog& shipped_catalog() {
  static const GeneratorCatalog catalog = [] {
    auto loaded = load_default_generator_catalog(TAILFORGE_SOURCE_DIR);
    REQUIRE_MESSAGE(loaded.ok(), loaded.message());
    return *loaded;
  }();
  return catalog;
}

fs::path fresh_directory(const std::string& name) {
  fs::path dir = fs::temp_directory_path() /
                 ("tailforge_" + name + "_" +
                  std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

bool has(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

TEST_CASE("the same seed and request give a byte-identical program") {
  GenerationRequest request;
  request.seed = 42;
  auto first = generate_program(shipped_catalog(), request);
  auto second = generate_program(shipped_catalog(), request);
  REQUIRE_MESSAGE(first.ok(), first.message());
  REQUIRE(second.ok());
  CHECK(sha256_hex(first->source) == sha256_hex(second->source));
  CHECK(first->variables == second->variables);
  CHECK(first->prompt_text == second->prompt_text);

  request.seed = 43;
  auto other = generate_program(shipped_catalog(), request);
  REQUIRE(other.ok());
  CHECK(sha256_hex(other->source) != sha256_hex(first->source));
}

TEST_CASE("sixty programs from seed 1 cover at least eighteen domains") {
  std::set<std::string> domains;
  for (size_t index = 0; index < 60; ++index) {
    auto program = generate_program(shipped_catalog(), batch_request(1, index));
    REQUIRE_MESSAGE(program.ok(), program.message());
    domains.insert(program->domain);
  }
  CHECK(generator_domains().size() >= 18);
  CHECK(domains.size() >= 18);
}

TEST_CASE("a generated program names no template, seed, domain label or tailforge: those are its lineage") {
  std::set<std::string> templates;
  for (size_t index = 0; index < 200; ++index) {
    auto program = generate_program(shipped_catalog(), batch_request(7, index));
    REQUIRE_MESSAGE(program.ok(), program.message());
    templates.insert(program->template_id);
    CAPTURE(program->template_id);
    CHECK(program->source.find("tailforge") == std::string::npos);
    CHECK(program->source.find("seed") == std::string::npos);
    CHECK(program->source.find(program->template_id) == std::string::npos);
  }
  CHECK(templates.size() >= 10);
}

TEST_CASE("every feature tag appears in some program of a seed range, and tags match the source") {
  std::map<std::string, int> seen;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    GenerationRequest request;
    request.seed = seed;
    auto program = generate_program(shipped_catalog(), request);
    REQUIRE_MESSAGE(program.ok(), program.message());
    for (const std::string& feature : program->features) seen[feature] += 1;
    const std::string& source = program->source;
    CHECK(has(program->features, "inline_ptx") == (source.find("asm volatile(") != std::string::npos));
    CHECK(has(program->features, "dynamic_shared") ==
          (source.find("extern __shared__") != std::string::npos));
    CHECK(source.find("int main()") != std::string::npos);
    CHECK(source.find("check: %s") != std::string::npos);
  }
  for (const std::string& feature : generator_features()) {
    CHECK_MESSAGE(seen[feature] > 0, "feature never generated: " << feature);
  }
  // The untranslatable knobs stay a minority.
  CHECK(seen["inline_ptx"] < 400 / 5);
  CHECK(seen["grid_sync"] < 400 / 5);
}

TEST_CASE("required and forbidden features steer the program, and impossible requests fail") {
  GenerationRequest request;
  request.seed = 7;
  request.domain = "reduction";
  request.required_features = {"warp_shuffle", "grid_sync", "hardcoded_warp_size"};
  request.forbidden_features = {"templates"};
  auto program = generate_program(shipped_catalog(), request);
  REQUIRE_MESSAGE(program.ok(), program.message());
  CHECK(program->domain == "reduction");
  CHECK(has(program->features, "warp_shuffle"));
  CHECK(has(program->features, "grid_sync"));
  CHECK(has(program->features, "hardcoded_warp_size"));
  CHECK_FALSE(has(program->features, "templates"));
  CHECK(program->source.find("cudaLaunchCooperativeKernel") != std::string::npos);

  GenerationRequest any_domain;
  any_domain.seed = 8;
  any_domain.required_features = {"switch"};
  auto with_switch = generate_program(shipped_catalog(), any_domain);
  REQUIRE_MESSAGE(with_switch.ok(), with_switch.message());
  CHECK(has(with_switch->features, "switch"));

  GenerationRequest impossible;
  impossible.domain = "graph_bfs";
  impossible.required_features = {"warp_shuffle"};
  auto none = generate_program(shipped_catalog(), impossible);
  REQUIRE_FALSE(none.ok());
  CHECK(none.message().find("graph_bfs") != std::string::npos);

  GenerationRequest inherent;
  inherent.domain = "histogram";
  inherent.forbidden_features = {"atomics"};
  auto no_atomics = generate_program(shipped_catalog(), inherent);
  REQUIRE_FALSE(no_atomics.ok());
  CHECK(no_atomics.message().find("forbidden feature 'atomics' present") != std::string::npos);
}

// Guards the host-API knobs of the prelude: each writes its runtime calls (and is tagged from
// them), and a program without them calls none of them.
TEST_CASE("pinned staging, managed memory and a device query are host-API features of any domain") {
  GenerationRequest request;
  request.seed = 11;
  request.domain = "stencil_2d";
  request.required_features = {"pinned_host_memory", "managed_memory", "device_query"};
  auto program = generate_program(shipped_catalog(), request);
  REQUIRE_MESSAGE(program.ok(), program.message());
  for (const char* call : {"cudaMallocHost(", "cudaFreeHost(", "cudaMallocManaged(", "cudaGetDeviceProperties(",
                           "cudaGetDeviceCount(", "cudaSetDevice("}) {
    CHECK_MESSAGE(program->source.find(call) != std::string::npos, call);
  }
  for (const char* feature : {"pinned_host_memory", "managed_memory", "device_query"}) {
    CHECK_MESSAGE(has(program->features, feature), feature);
  }

  request.required_features = {};
  request.forbidden_features = {"pinned_host_memory", "managed_memory", "device_query"};
  auto plain = generate_program(shipped_catalog(), request);
  REQUIRE_MESSAGE(plain.ok(), plain.message());
  for (const char* call : {"cudaMallocHost(", "cudaMallocManaged(", "cudaGetDeviceProperties("}) {
    CHECK_MESSAGE(plain->source.find(call) == std::string::npos, call);
  }
  CHECK(plain->source.find("CHECK(cudaMalloc(&pointer, bytes));") != std::string::npos);
}

TEST_CASE("unknown domains, features, templates and personas are named in the error") {
  GenerationRequest request;
  request.domain = "quantum_chromodynamics";
  CHECK(generate_program(shipped_catalog(), request).message() ==
        "generate: unknown domain 'quantum_chromodynamics'");
  request = {};
  request.required_features = {"tensor_cores"};
  CHECK(generate_program(shipped_catalog(), request).message() ==
        "generate: unknown feature 'tensor_cores'");
  request = {};
  request.template_id = "nope.template";
  CHECK(generate_program(shipped_catalog(), request).message() ==
        "generate: unknown template 'nope.template'");
  request = {};
  request.persona_id = "nobody";
  CHECK(generate_program(shipped_catalog(), request).message() ==
        "generate: unknown persona 'nobody'");
}

TEST_CASE("persona, template and placeholder values steer the program and give its prompt") {
  GenerationRequest request;
  request.seed = 11;
  request.template_id = "simulation.cloth";
  request.persona_id = "hpc_engineer";
  auto program = generate_program(shipped_catalog(), request);
  REQUIRE_MESSAGE(program.ok(), program.message());
  CHECK(program->template_id == "simulation.cloth");
  CHECK(program->persona.id == "hpc_engineer");
  CHECK((program->domain == "stencil_2d" || program->domain == "heat_diffusion"));
  std::string size = program->variables["placeholders"]["size"];
  CHECK(program->prompt_text.find("cloth simulation with a " + size + "x" + size + " grid") !=
        std::string::npos);
  CHECK(program->prompt_text.find("HPC performance engineer") != std::string::npos);
  CHECK(program->prompt_text.find('{') == std::string::npos);
  // The grid side follows the {size} placeholder (nearest option the domain offers).
  int side = program->variables["parameters"]["side"];
  CHECK(side >= std::stoi(size) / 2);
  CHECK(side <= std::max(std::stoi(size) * 2, 128));

  GenerationRequest double_precision;
  double_precision.seed = 5;
  double_precision.template_id = "science.matmul";
  bool saw_double = false;
  for (uint64_t seed = 1; seed <= 12 && !saw_double; ++seed) {
    double_precision.seed = seed;
    auto matmul = generate_program(shipped_catalog(), double_precision);
    REQUIRE(matmul.ok());
    if (matmul->variables["placeholders"]["precision"] == "double precision") {
      saw_double = true;
      CHECK(matmul->variables["parameters"]["element_type"] == "double");
      CHECK(matmul->source.find("typedef double value_t;") != std::string::npos);
    }
  }
  CHECK(saw_double);
}

TEST_CASE("a batch is written as numbered .cu files with one manifest line per file") {
  fs::path dir = fresh_directory("batch");
  auto files = write_generated_programs(shipped_catalog(), 5, 3, dir.string());
  REQUIRE_MESSAGE(files.ok(), files.message());
  REQUIRE(files->size() == 5);
  std::ifstream manifest(dir / "manifest.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(manifest, line)) {
    auto entry = nlohmann::json::parse(line);
    CHECK(entry["file"] == (*files)[lines]);
    CHECK(entry["file"].get<std::string>().rfind(std::to_string(lines) + "_" +
                                                     entry["domain"].get<std::string>(),
                                                 0) == 0);
    for (const char* key : {"domain", "template", "persona", "features", "seed"}) {
      CHECK_MESSAGE(entry.contains(key), key);
    }
    std::ifstream source(dir / entry["file"].get<std::string>());
    std::stringstream text;
    text << source.rdbuf();
    CHECK(sha256_hex(text.str()) == entry["source_sha256"]);
    auto again = generate_program(shipped_catalog(), batch_request(3, lines));
    REQUIRE(again.ok());
    CHECK(again->source == text.str());
    ++lines;
  }
  CHECK(lines == 5);
  fs::remove_all(dir);
}

TEST_CASE("a generated program of every domain compiles with the real nvcc") {
  if (!testing::nvcc_here()) return;
  const std::string nvcc = testing::nvcc_path();
  fs::path dir = fresh_directory("nvcc");
  // One program per domain, device code to PTX (the front end also checks the host code);
  // full host+device builds of a whole batch are measured outside the unit tests.
  std::vector<std::string> names;
  std::vector<std::string> domains = generator_domains();
  for (size_t k = 0; k < domains.size(); ++k) {
    GenerationRequest request;
    request.seed = 1000 + k;
    request.domain = domains[k];
    auto program = generate_program(shipped_catalog(), request);
    REQUIRE_MESSAGE(program.ok(), program.message());
    std::string name = std::to_string(k) + "_" + program->domain;
    std::ofstream(dir / (name + ".cu")) << program->source;
    names.push_back(name);
  }
  std::string command = "cd '" + dir.string() +
                        "' && ls *.cu | sed 's/\\.cu$//' | xargs -P 2 -I{} sh -c "
                        "'timeout 120 " + nvcc + " -arch=sm_80 -ptx {}.cu -o {}.ptx > {}.log 2>&1'";
  int status = std::system(command.c_str());
  (void)status;
  for (const std::string& name : names) {
    std::ifstream log(dir / (name + ".log"));
    std::stringstream text;
    text << log.rdbuf();
    CHECK_MESSAGE(fs::exists(dir / (name + ".ptx")), name << ": " << text.str());
  }
  fs::remove_all(dir);
}
