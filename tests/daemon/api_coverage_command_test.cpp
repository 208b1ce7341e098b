// The CUDA API as the loop's target, end to end through the binary on a real store: `import` makes
// a tree's API names the usage prior, `coverage`, `status` and `tails` show it, and the next cycle
// synthesizes for an API tail of that tree, which `lineage` explains.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "store/database.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"

using namespace tailforge;
using nlohmann::json;

namespace {

// A program of the user's tree: pinned staging buffers, a pitched 2D copy, and an IPC handle,
// which the embedded generator never writes.
std::string users_program(int seed) {
  std::ostringstream out;
  out << "#include <cstdio>\n#include <cuda_runtime.h>\n\n"
      << "__global__ void blend" << seed << "(const float* a, float* b, int n) {\n"
      << "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      << "  if (i >= n) return;\n";
  // Each program computes something else, so that none is a near-duplicate of another.
  const char* bodies[] = {"  b[i] = a[i] * 2.5f + b[i];\n",
                          "  float x = a[i];\n  for (int k = 0; k < 4; ++k) x = x * 0.5f + 1.0f;\n  b[i] = x - a[n - 1 - i];\n",
                          "  int left = i > 0 ? i - 1 : i, right = i + 1 < n ? i + 1 : i;\n"
                          "  b[i] = (a[left] + 2.0f * a[i] + a[right]) * 0.25f;\n  if (b[i] > 100.0f) b[i] = 100.0f;\n"};
  out << bodies[(seed - 1) % 3] << "}\n\n"
      << "int main() {\n  const int n = " << 256 * seed << ";\n  float *host, *a, *b;\n"
      << "  cudaMallocHost(&host, n * sizeof(float));\n"
      << "  for (int i = 0; i < n; ++i) host[i] = i % " << 7 + seed << ";\n"
      << "  cudaMalloc(&a, n * sizeof(float));\n  cudaMalloc(&b, n * sizeof(float));\n"
      << "  cudaMemcpy2D(a, sizeof(float), host, sizeof(float), sizeof(float), n, cudaMemcpyHostToDevice);\n"
      << "  cudaIpcMemHandle_t handle;\n  cudaIpcGetMemHandle(&handle, a);\n"
      << "  cudaMemset(b, 0, n * sizeof(float));\n"
      << "  blend" << seed << "<<<(n + 255) / 256, 256>>>(a, b, n);\n"
      << "  cudaMemcpy(host, b, n * sizeof(float), cudaMemcpyDeviceToHost);\n"
      << "  printf(\"%f\\n\", host[n - 1]);\n"
      << "  cudaFree(a);\n  cudaFree(b);\n  cudaFreeHost(host);\n  return 0;\n}\n";
  return out.str();
}

std::string write_config(const TempDir& dir) {
  json config = {{"log_level", "info"},
                 {"daemon", {{"samples_per_cycle", 6}, {"fill_samples", 0}, {"progress", false}, {"compile_slots", 2}}},
                 {"agents", {{"generator", "builtin"}, {"translator", "builtin"}}},
                 {"eval", {{"enabled", false}}},
                 {"synth", {{"enabled", true}, {"top_k", 1}, {"multiplier", 3}, {"seeds_per_tail", 1}}},
                 {"retrain", {{"enabled", false}}},
                 {"verifier", {{"stages", {"translate"}}}}};
  std::string path = dir.file("config.json");
  std::ofstream(path) << config.dump(2);
  return path;
}

json run_json(const std::vector<std::string>& arguments) {
  ProcessResult run = run_tailforge(arguments);
  REQUIRE_MESSAGE(run.exit_code == 0, run.stderr_text);
  return json::parse(run.stdout_text);
}

}  // namespace

TEST_CASE("an imported tree's API names are the prior, and the next cycle synthesizes for one of its API tails, said in lineage") {
  TempDir dir;
  std::string tree = dir.file("users-kernels");
  for (int seed = 1; seed <= 3; ++seed) write_tree_file(tree + "/src/op" + std::to_string(seed) + ".cu", users_program(seed));
  std::string db = dir.file("store.db");
  std::string config = write_config(dir);

  // Before the import the shipped prior is the target.
  ProcessResult empty = run_tailforge({"coverage", "--db", db});
  CHECK(empty.exit_code == 2);  // no store yet
  json imported = run_json({"import", tree, "--db", db, "--json", "--no-progress", "--config", config});
  CHECK(imported["programs_kept"] == 3);
  CHECK(imported["api"]["api_files"] == 3);
  json coverage = run_json({"coverage", "--db", db, "--json", "--config", config, "--family", "memory"});
  CHECK(coverage["prior"]["from_imported_trees"] == true);
  CHECK(coverage["prior"]["trees"] == json::array({"users-kernels"}));
  CHECK(coverage["shared_names"].get<int>() >= 8);  // cudaMalloc, cudaMallocHost, cudaMemcpy2D, ...
  bool listed = false;
  for (const json& name : coverage["names"]) {
    if (name["name"] == "cudaMallocHost") {
      listed = true;
      CHECK(name["prior_files"] == 3);
      CHECK(name["target_share"] == 1.0);
    }
  }
  CHECK(listed);

  ProcessResult cycle = run_tailforge({"daemon", "--cycles", "1", "--db", db, "--config", config, "--no-progress"}, 600);
  REQUIRE_MESSAGE(cycle.exit_code == 0, cycle.stderr_text);
  // The bounded run's report shows the coverage after the cycle.
  CHECK(cycle.stdout_text.find("CUDA API coverage of the verified cuda2hip corpus, against the imported trees' usage prior") !=
        std::string::npos);

  json tails = run_json({"tails", "--db", db, "--json", "--config", config});
  std::map<std::string, int> rank;
  for (const json& entry : tails["entries"]) {
    rank[entry["dimension"].get<std::string>() + "/" + entry["name"].get<std::string>()] = entry["rank"].get<int>();
  }
  CHECK(rank.count("api/cudaIpcGetMemHandle"));  // the tree uses it, no template writes it: listed, passed over
  std::set<std::string> tree_names;  // what the tree uses, by the prior
  json with_names = run_json({"coverage", "--db", db, "--json", "--config", config, "--names"});
  for (const json& name : with_names["names"]) {
    if (name["prior_files"].get<int>() > 0) tree_names.insert(name["name"].get<std::string>());
  }
  CHECK(tree_names.count("cudaMallocHost") == 1);
  // The cycle's synthesis chose an API tail of the tree that the generator writes; each sample it
  // made uses the name and its lineage says why.
  Result<Database> store = Database::open(db);
  REQUIRE(store.ok());
  std::istringstream lines(query_text(
      *store,
      "SELECT l.child_id || ' ' || json_extract(l.reason, '$.name') FROM lineage l WHERE l.relation = 'synthesized_from'"
      " AND json_extract(l.reason, '$.dimension') = 'api'"));
  std::vector<std::pair<std::string, std::string>> made;  // sample, the tail's name
  for (std::string id, name; lines >> id >> name;) made.emplace_back(id, name);
  REQUIRE_MESSAGE(!made.empty(), cycle.stderr_text);
  for (const auto& [id, name] : made) {
    CHECK_MESSAGE(tree_names.count(name) == 1, name << " is no name of the tree");
    CHECK(rank.count("api/" + name) == 1);
    CHECK(query_int(*store, "SELECT count(*) FROM sample WHERE id = '" + id + "' AND text LIKE '%" + name + "(%'") == 1);
  }
  CHECK(query_int(*store, "SELECT count(*) FROM lineage WHERE relation = 'synthesized_from'"
                          " AND json_extract(reason, '$.name') = 'cudaIpcGetMemHandle'") == 0);
  ProcessResult lineage = run_tailforge({"lineage", made.front().first, "--db", db, "--config", config});
  REQUIRE_MESSAGE(lineage.exit_code == 0, lineage.stderr_text);
  CHECK(lineage.stdout_text.find("synthesized_from  by builtin-synthesizer  because api/" + made.front().second +
                                 " [corpus_share]") != std::string::npos);
  CHECK(cycle.stderr_text.find("api/" + made.front().second + " (corpus_share, +") != std::string::npos);
  CHECK(cycle.stderr_text.find("tails no program of the source writes (") != std::string::npos);
  CHECK(cycle.stderr_text.find("api/cudaIpcGetMemHandle") != std::string::npos);

  // status and the text report say the same.
  ProcessResult status = run_tailforge({"status", "--db", db, "--config", config});
  CHECK(status.stdout_text.find("API coverage: ") != std::string::npos);
  CHECK(status.stdout_text.find("(prior: imported trees)") != std::string::npos);
  ProcessResult table = run_tailforge({"coverage", "--db", db, "--config", config});
  REQUIRE(table.exit_code == 0);
  CHECK(table.stdout_text.find("prior: the imported trees users-kernels (3 files using the API)") != std::string::npos);
  CHECK(table.stdout_text.find("driver_module_launch") != std::string::npos);
  ProcessResult family = run_tailforge({"coverage", "--db", db, "--config", config, "--family", "memcpy"});
  CHECK(family.stdout_text.find("cudaMemcpy2D") != std::string::npos);
  ProcessResult unknown = run_tailforge({"coverage", "--db", db, "--config", config, "--family", "no_such"});
  CHECK(unknown.exit_code == 2);
}

TEST_CASE("api-prior writes the shipped prior's format from any tree, and coverage reads it") {
  TempDir dir;
  write_tree_file(dir.file("t/a.cu"), users_program(1));
  write_tree_file(dir.file("t/b.cu"), users_program(2));
  write_tree_file(dir.file("headers/cuda_runtime_api.h"), "cudaError_t cudaMalloc(void**, size_t);\n");
  write_tree_file(dir.file("headers/other.h"), "cudaError_t f(cudaStream_t);\n");
  ProcessResult run = run_tailforge({"api-prior", "--tree", dir.file("t"), "--headers", dir.file("headers"), "--out",
                                     dir.file("prior.json")});
  REQUIRE_MESSAGE(run.exit_code == 0, run.stderr_text);
  std::ifstream in(dir.file("prior.json"));
  json prior = json::parse(in);
  CHECK(prior["trees"] == json::array({"t"}));
  CHECK(prior["api_files"] == 2);
  CHECK(prior["header_api_files"] == 2);
  CHECK(prior["names"]["cudaMallocHost"] == json({{"files", 2}, {"uses", 2}}));
  CHECK(prior["names"]["cudaError_t"] == json({{"header_files", 2}}));
  CHECK(run_tailforge({"api-prior"}).exit_code == 2);
}
