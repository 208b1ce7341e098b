// Model evaluation on the ptx2cuda track from the store alone: pairs of a real program stored as
// samples, a `command` model that reads each pair's Rolled-PTX and answers one kernel right, one
// with an off-by-one bound and one that does not compile; `tailforge eval` compiles each answer
// and, on a GPU, replays it on the launch recorded with the pair (its __constant__ included).
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "agents/ptx2cuda/ptx_pairs.h"
#include "base/files.h"
#include "daemon/verify/ptx_pairs_store.h"
#include "test_support/ptx_pairs_fixture.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"

namespace tailforge {
namespace {

const char* kProgram = R"(#include <cstdio>
#define N 2048
__constant__ float bias[4];

__global__ void shift(const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = x[i] + bias[i % 4];
}

__global__ void square(float* data) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) data[i] = data[i] * data[i];
}

__global__ void halve(int* values) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) values[i] = values[i] / 2;
}

int main() {
  float host_bias[4] = {0.5f, -1.0f, 2.0f, 0.25f};
  cudaMemcpyToSymbol(bias, host_bias, sizeof host_bias);
  float *x, *y;
  int* v;
  cudaMalloc(&x, N * sizeof(float));
  cudaMalloc(&y, N * sizeof(float));
  cudaMalloc(&v, N * sizeof(int));
  float xs[N];
  int vs[N];
  for (int i = 0; i < N; ++i) {
    xs[i] = 1.0f + i % 7;
    vs[i] = 3 * i + 1;
  }
  cudaMemcpy(x, xs, sizeof xs, cudaMemcpyHostToDevice);
  cudaMemcpy(v, vs, sizeof vs, cudaMemcpyHostToDevice);
  shift<<<N / 256, 256>>>(x, y);
  square<<<N / 256, 256>>>(y);
  halve<<<N / 256, 256>>>(v);
  cudaMemcpy(xs, y, sizeof xs, cudaMemcpyDeviceToHost);
  cudaMemcpy(vs, v, sizeof vs, cudaMemcpyDeviceToHost);
  printf("%.3f %.3f %d\n", xs[0], xs[N - 1], vs[N - 1]);
  return 0;
}
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "'" << from << "' not in:\n" << text);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("ptx2cuda eval: a model reads Rolled-PTX; its kernels are compiled and replayed on the stored launch") {
  const Toolchains& toolchains = detected_toolchains();
  if (!testing::nvcc_here()) return;
  bool gpu = toolchains.has_gpu("nvidia");
  TempDir dir;
  PtxPairing pairing = pair_test_program(dir, kProgram);
  REQUIRE(pairing.pairs.size() == 3);

  std::string db_path = dir.file("eval.db");
  std::string answers = dir.file("answers");
  std::filesystem::create_directories(answers);
  std::map<std::string, std::string> rolled_ptx;
  {
    Database db = Database::open(db_path).value();
    Sample parent{.track = "cuda2hip", .origin = "template", .language = "cuda", .text = kProgram, .status = "verified"};
    parent.id = insert_sample_if_absent(db, parent).value().id;
    Taxonomy taxonomy = load_taxonomy(data_path("policies/taxonomy.json")).value();
    Result<StoredDerivedSamples> stored = store_ptx_pairs(db, parent, pairing, taxonomy, "test-host");
    REQUIRE_MESSAGE(stored.ok(), stored.message());
    REQUIRE(stored->verified == 3);
    // Only shift's unit declares bias: its pair alone keeps the variable's recorded contents.
    CHECK(query_int(db, "SELECT count(*) FROM sample_artifact WHERE name = 'launch_global_input:bias'") == (gpu ? 1 : 0));
    CHECK(query_int(db, "SELECT count(*) FROM sample_artifact WHERE name = 'launch'") == (gpu ? 3 : 0));
  }
  // The answers, by kernel: the stored kernel, an off-by-one bound, and an undeclared name.
  for (const PtxPair& pair : pairing.pairs) {
    std::string answer = pair.cuda;
    if (pair.kernel == "_Z6squarePf") answer = replaced(answer, "if (i < N)", "if (i < N - 1)");
    if (pair.kernel == "_Z5halvePi") answer = replaced(answer, "values[i] / 2", "values[i] / divisor");
    std::ofstream(answers + "/" + pair.kernel + ".cu") << answer;
    rolled_ptx[pair.kernel] = pair.rolled_ptx;
  }
  // The model: reads the question, keeps it for the test, answers by the .entry it names.
  ProcessResult added = run_tailforge(
      {"model", "add", "--no-check", "--db", db_path, "--name", "decompiler-v1", "--kind", "command", "--track", "ptx2cuda",
       "--", "sh", "-c",
       "q=$(cat); k=$(printf '%s\\n' \"$q\" | grep -o '\\.entry [A-Za-z0-9_]*' | head -n1 | cut -d' ' -f2); "
       "printf '%s\\n' \"$q\" > DIR/$k.question; cat DIR/$k.cu"});
  REQUIRE_MESSAGE(added.exit_code == 0, added.stderr_text);
  {
    Database db = Database::open(db_path).value();
    Statement& update = db.cached("UPDATE model SET parameters = replace(parameters, 'DIR', ?1)");
    update.bind(1, answers);
    REQUIRE(update.run().ok());
  }
  std::string config = dir.file("config.json");
  std::ofstream(config) << R"({"eval": {"fraction": 1.0}, "verifier": {"sm_targets": ["sm_90"]}})";
  ProcessResult evaluated =
      run_tailforge({"eval", "--db", db_path, "--config", config, "--model", "decompiler-v1", "--json"}, 300);
  REQUIRE_MESSAGE(evaluated.exit_code == 0, evaluated.stderr_text);

  for (const auto& [kernel, rolled] : rolled_ptx) {
    std::ifstream question(answers + "/" + kernel + ".question");
    std::string asked((std::istreambuf_iterator<char>(question)), std::istreambuf_iterator<char>());
    // The shell's $(cat) drops trailing newlines; the rest is the artifact byte for byte.
    auto trimmed = [](std::string text) { return text.erase(text.find_last_not_of('\n') + 1); };
    CHECK_MESSAGE(trimmed(asked) == trimmed(rolled), kernel << ": the model was not asked the pair's Rolled-PTX");
  }
  std::map<std::string, std::string> outcome;  // kernel -> "ok <checked>" or the category
  {
    Database db = Database::open(db_path).value();
    Statement& rows = db.cached(
        "SELECT json_extract(s.variables, '$.kernel'), e.ok, coalesce(e.category, ''), e.checked,"
        " (SELECT group_concat(st.stage || ' ' || st.status || ' ' || coalesce(st.message, ''), '; ')"
        "  FROM evaluation_stage st WHERE st.evaluation_id = e.id)"
        " FROM evaluation e JOIN sample s ON s.id = e.sample_id");
    while (rows.step()) {
      outcome[rows.text(0)] = rows.int64(1) ? "ok " + rows.text(3) : rows.text(2);
      MESSAGE(rows.text(0) << ": " << rows.text(4));
    }
  }
  REQUIRE(outcome.size() == 3);
  CHECK(outcome["_Z5shiftPKfPf"] == (gpu ? "ok compare" : "ok compile"));
  CHECK(outcome["_Z6squarePf"] == (gpu ? "ptx2cuda.mismatch.numeric" : "ok compile"));
  CHECK(outcome["_Z5halvePi"] == "ptx2cuda.compile.undeclared_identifier");

  ProcessResult models = run_tailforge({"models", "--db", db_path, "--track", "ptx2cuda", "--json"});
  REQUIRE(models.exit_code == 0);
  nlohmann::json listed = nlohmann::json::parse(models.stdout_text);
  REQUIRE(listed["models"].size() == 1);
  CHECK(listed["models"][0]["evaluation"]["items"] == 3);
  CHECK(listed["models"][0]["evaluation"]["accuracy"].get<double>() == doctest::Approx(gpu ? 1.0 / 3 : 2.0 / 3));
}

}  // namespace tailforge
