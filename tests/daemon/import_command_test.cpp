#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/process.h"
#include "store/bundles.h"
#include "store/database.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "verifier/stage_runner.h"
#include "verifier/toolchains.h"

using namespace tailforge;
namespace fs = std::filesystem;

namespace {

// A program whose statements depend on `seed`; `twist` changes one constant only.
std::string program(int seed, int twist = 0) {
  std::ostringstream out;
  out << "#include \"common.h\"\n__global__ void scale" << seed << "(const float* in, float* out, int n) {\n"
      << "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i >= n) return;\n  float acc = 0.0f;\n";
  for (int j = 0; j < 40; ++j) {
    int constant = (seed * 37 + j * 11) % 89 + (j == 20 ? twist : 0);
    out << "  acc += in[(i + " << (seed * 131 + j * 17) % 977 << ") % n] * " << constant << ".5f;\n";
  }
  out << "  out[i] = acc;\n}\n\nint main() {\n  float *in, *out;\n  cudaMalloc(&in, 4096);\n"
      << "  cudaMalloc(&out, 4096);\n  scale" << seed
      << "<<<4, 256>>>(in, out, 1024);\n  CHECK(cudaDeviceSynchronize());\n"
      << "  return 0;\n}\n";
  return out.str();
}

nlohmann::json import_json(const std::string& root, const std::string& db) {
  ProcessResult run = run_tailforge({"import", root, "--db", db, "--json", "--no-progress"});
  REQUIRE_MESSAGE(run.exit_code == 0, run.stderr_text);
  return nlohmann::json::parse(run.stdout_text);
}

}  // namespace

TEST_CASE("import stores pending bundles, skips near-duplicates and hello worlds, and a second run adds none") {
  TempDir dir;
  std::string root = dir.file("kernels");
  write_tree_file(root + "/common.h", "#define CHECK(x) (x)\n");
  for (int seed = 1; seed <= 3; ++seed) write_tree_file(root + "/ops/op" + std::to_string(seed) + ".cu", program(seed));
  write_tree_file(root + "/ops/op3_tweaked.cu", program(3, 1));
  write_tree_file(root + "/hello.cu",
        "#include <cstdio>\n__global__ void hi() {\n  printf(\"Hello, world\\n\");\n}\n"
        "int main() {\n  hi<<<1, 1>>>();\n  cudaDeviceSynchronize();\n  return 0;\n}\n\n\n");
  write_tree_file(root + "/README.md", "kernels\n");
  std::string db_path = dir.file("store.db");

  nlohmann::json first = import_json(root, db_path);
  CHECK(first["tree"] == "kernels");
  CHECK(first["commit"].is_null());
  CHECK(first["files_seen"] == 7);
  CHECK(first["programs_kept"] == 3);
  CHECK(first["new_samples"] == 3);
  CHECK(first["skipped"]["near_duplicate"] == 1);
  CHECK(first["skipped"]["hello_world"] == 1);
  CHECK(first["skipped"]["not_source"] == 2);

  Database db = std::move(Database::open(db_path).value());
  for (const auto& id : first["sample_ids"]) {
    Sample sample = find_sample(db, id.get<std::string>()).value().value();
    CHECK(sample.origin == "imported");
    CHECK(sample.status == "pending");
    Bundle bundle = read_bundle(db, sample.id).value().value();
    REQUIRE(bundle.headers.size() == 1);
    CHECK(bundle.headers[0].path == "common.h");
    CHECK(bundle.include_dirs == std::vector<std::string>{"."});
  }

  nlohmann::json second = import_json(root, db_path);
  CHECK(second["programs_kept"] == 0);
  CHECK(second["new_samples"] == 0);
  CHECK(second["skipped"]["already_present"] == 3);

  ProcessResult text = run_tailforge({"import", root, "--db", db_path, "--name", "again", "--no-progress"});
  CHECK(text.exit_code == 0);
  CHECK(text.stdout_text.find("imported again (") == 0);
  CHECK(text.stdout_text.find("7 files seen, 0 programs kept as new samples") != std::string::npos);
  CHECK(text.stdout_text.find("already_present 3") != std::string::npos);
  CHECK(text.stdout_text.find("  near_duplicate  ops/op3_tweaked.cu") != std::string::npos);
}

TEST_CASE("import names the filters file and key of a bad value, and refuses a missing folder") {
  TempDir dir;
  std::string filters = dir.file("filters.json");
  write_tree_file(filters, R"({"min_lines": "ten"})");
  write_tree_file(dir.file("tree/a.cu"), program(1));
  ProcessResult bad = run_tailforge({"import", dir.file("tree"), "--db", dir.file("s.db"), "--filters", filters});
  CHECK(bad.exit_code == 1);
  CHECK(bad.stderr_text == "tailforge: " + filters + ": key /min_lines has value \"ten\", expected an integer\n");

  ProcessResult missing = run_tailforge({"import", dir.file("nowhere"), "--db", dir.file("s.db")});
  CHECK(missing.exit_code == 1);
  CHECK(missing.stderr_text.find(dir.file("nowhere")) != std::string::npos);

  ProcessResult track = run_tailforge({"import", dir.file("tree"), "--db", dir.file("s.db"), "--track", "c2x86"});
  CHECK(track.exit_code == 2);
}

// The whole path a user takes with their own code: import a tree, run a bounded daemon, and find
// each program verified with its headers (translated together with them), a file without main()
// compiled only.
TEST_CASE("imported programs are queued and the daemon verifies them with their headers") {
  TempDir dir;
  std::string root = dir.file("tree");
  write_tree_file(root + "/include/check.cuh",
        "#pragma once\n#include <cuda_runtime.h>\n#include <cstdio>\n"
        "#define CUDA_CHECK(call) do { cudaError_t cudaStatus = (call); if (cudaStatus != cudaSuccess) {\\\n"
        "  printf(\"%s\\n\", cudaGetErrorString(cudaStatus)); return 1; } } while (0)\n");
  write_tree_file(root + "/apps/scale.cu", program(7));  // includes "common.h": give the tree one
  write_tree_file(root + "/apps/common.h", "#pragma once\n#include \"check.cuh\"\n#define CHECK(x) CUDA_CHECK(x)\n");
  std::ostringstream library;
  library << "#include \"check.cuh\"\n";
  for (int i = 0; i < 12; ++i) library << "__device__ float f" << i << "(float x) { return x * " << i + 2 << ".0f; }\n";
  library << "__global__ void apply(float* p, int n) {\n  int i = threadIdx.x;\n  if (i < n) p[i] = f3(p[i]) + f7(p[i]);\n}\n";
  write_tree_file(root + "/lib/apply.cu", library.str());
  std::string db = dir.file("import.db");
  nlohmann::json imported = import_json(root, db);
  REQUIRE(imported["new_samples"] == 2);

  nlohmann::json config = {{"daemon", {{"samples_per_cycle", 0}, {"progress", false}}},
                           {"eval", {{"enabled", false}}},
                           {"synth", {{"enabled", false}}},
                           {"retrain", {{"enabled", false}}}};
  std::string config_path = dir.file("config.json");
  std::ofstream(config_path) << config.dump();
  // Run from the folder with a relative database, as users do: the work folder is relative too.
  ProcessSpec spec;
  spec.argv = {TAILFORGE_BINARY, "daemon", "--cycles", "1", "--db", "import.db", "--config", config_path, "--no-progress"};
  spec.cwd = dir.path();
  spec.timeout_seconds = 300;
  ProcessResult daemon = run_process(spec);
  INFO(daemon.stderr_text);
  REQUIRE(daemon.exit_code == 0);

  auto opened = Database::open(db);
  REQUIRE(opened.ok());
  Database& database = opened.value();
  CHECK(query_int(database, "SELECT count(*) FROM job WHERE kind = 'verify' AND state = 'done'") == 2);
  auto stage_status = [&](const std::string& program, const std::string& stage) {
    std::string row = query_text(database, "SELECT v.status || ':' || coalesce(v.reason, '') FROM verification v JOIN "
                                           "sample s ON s.id = v.sample_id WHERE s.text LIKE '%" + program +
                                           "%' AND v.stage = '" + stage + "'");
    while (!row.empty() && row.back() == '\n') row.pop_back();
    return row;
  };
  CHECK(stage_status("scale7", "translate.hip") == "ok:");
  CHECK(stage_status("apply(float", "translate.hip") == "ok:");
  CHECK(stage_status("apply(float", "nvidia.exe").find(kCompileOnlyReason) != std::string::npos);
  if (detected_toolchains().tool("hip_clang").found()) {
    CHECK(stage_status("scale7", "amd.asm.gfx1100") == "ok:");
    CHECK(stage_status("apply(float", "amd.asm.gfx1100") == "ok:");
  }
  if (detected_toolchains().tool("nvcc").found()) {
    CHECK(stage_status("scale7", "nvidia.exe") == "ok:");
    CHECK(stage_status("scale7", "hip_on_nvidia.exe") == "ok:");  // the translated headers are found
    CHECK(query_int(database, "SELECT count(*) FROM sample WHERE origin = 'imported' AND track = 'cuda2hip' AND "
                              "status = 'verified'") == 2);
    // Their kernels' units compile alone with the bundles' headers: one ptx2cuda pair each.
    CHECK(query_int(database, "SELECT count(*) FROM sample WHERE origin = 'imported' AND track = 'ptx2cuda' AND "
                              "status = 'verified'") == 2);
    if (detected_toolchains().has_gpu("nvidia")) {
      // The program's kernel replays on its recorded launch in the sandbox, although the daemon's
      // work folder lies in a folder only its owner enters (the test's, mode 0700).
      CHECK(query_text(database, "SELECT v.status || ':' || coalesce(v.reason, '') FROM verification v JOIN sample s ON "
                                 "s.id = v.sample_id WHERE s.track = 'ptx2cuda' AND s.text LIKE '%scale7%' AND "
                                 "v.stage = 'ptx2cuda.launch'") == "ok:\n");
    }
  }
}
