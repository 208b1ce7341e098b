#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "store/bundles.h"
#include "store/samples.h"
#include "store/workers.h"
#include "synth/export.h"
#include "synth/split_leakage.h"
#include "test_support/read_whole_file.h"
#include "test_support/temp_dir.h"
#include "test_support/varied_programs.h"

using namespace tailforge;

namespace {


const char* kImported = R"(#include <cstdio>
__global__ void fill_rows(int* grid, int width, int height, int value) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < width && y < height) grid[y * width + x] = value + y;
}
int main() {
  int width = 40, height = 3, *grid;
  cudaMallocManaged(&grid, width * height * sizeof(int));
  fill_rows<<<dim3(1, height), 64>>>(grid, width, height, 5);
  cudaDeviceSynchronize();
  printf("%d %d\n", grid[0], grid[width * height - 1]);
}
)";

const char* kImportedBare = R"(#include <cstdio>
__global__ void negate_all(long long* values, unsigned count) {
  for (unsigned k = threadIdx.x; k < count; k += blockDim.x) values[k] = -values[k] ^ 3;
}
int main() {
  unsigned count = 77;
  long long* values;
  cudaMallocManaged(&values, count * sizeof(long long));
  for (unsigned k = 0; k < count; ++k) values[k] = k * 11;
  negate_all<<<1, 32>>>(values, count);
  cudaDeviceSynchronize();
  printf("%lld\n", values[count - 1]);
}
)";

// An imported cuda2hip sample of tree `tree`, verified, with or without a recorded licence.
std::string store_imported(Database& db, const std::string& text, const std::string& tree,
                           std::optional<BundleLicense> license) {
  Bundle bundle{tree, std::string("0123456789abcdef0123"), "src/" + tree + ".cu", text};
  bundle.license = std::move(license);
  Sample sample;
  sample.track = "cuda2hip";
  sample.origin = "imported";
  sample.language = "cuda";
  sample.domain = "elementwise";
  sample.status = "verified";
  Result<InsertOutcome> stored = store_bundle(db, bundle, sample);
  REQUIRE_MESSAGE(stored.ok(), stored.message());
  REQUIRE(insert_artifact(db, stored->id, {"translate.hip", "hip", "hip", "// hip\n" + text}).ok());
  return stored->id;
}

// A store of verified pairs: the varied programs (one with a near-duplicate twin), two imported
// ones, each with its stage results on a host whose worker reported a GPU.
struct CardStore {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  std::vector<std::string> ids;

  CardStore() {
    const std::vector<std::string>& programs = varied_programs();
    for (size_t i = 0; i < programs.size(); ++i) {
      std::vector<std::string> features;
      if (i == 2 || i == 3) features = {"atomics"};
      if (i == 6) features = {"switch"};
      ids.push_back(store_verified_pair(db, programs[i], i % 3 == 0 ? "synthesized" : "template",
                                        i < 2 ? "linear_algebra" : "elementwise", features));
    }
    ids.push_back(store_verified_pair(db, "// the same kernel again\n" + programs[4] + "\n\n", "synthesized"));
    ids.push_back(store_imported(db, kImported, "licensed-tree", BundleLicense{"LICENSE", "MIT License", "ab12"}));
    ids.push_back(store_imported(db, kImportedBare, "bare-tree", std::nullopt));
    for (const std::string& id : ids) {
      VerificationRecord compiled{0, id, "nvidia.compile", "ok"};
      compiled.host = "gpu-box";
      compiled.toolchain_version = "nvcc 12.4";
      REQUIRE(upsert_verification(db, compiled).ok());
      VerificationRecord ran{0, id, "amd.run", "skipped"};
      ran.reason = "no AMD GPU";
      REQUIRE(upsert_verification(db, ran).ok());
    }
    WorkerRecord worker;
    worker.name = "local";
    worker.host = "gpu-box";
    worker.capabilities = {{"stages", {"nvidia.compile"}}, {"gpus", {{{"vendor", "NVIDIA"}, {"name", "H100"}}}}};
    REQUIRE(upsert_worker(db, worker).ok());
  }
};

// The exact largest similarity of an eval input to a train input, by comparing every pair.
double brute_force_largest(const std::vector<std::string>& train, const std::vector<std::string>& eval,
                           const MinHashOptions& options) {
  double largest = 0;
  for (const std::string& e : eval) {
    for (const std::string& t : train) largest = std::max(largest, shingle_jaccard(e, t, options));
  }
  return largest;
}

}  // namespace

TEST_CASE("every export writes the leakage figure and the card, and both read back true") {
  CardStore store;
  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  policy.eval_fraction = 0.4;
  policy.resampling.target_fraction_of_head = 1.0;  // every tracked value lifted to the head
  write_tree_file(store.dir.file("bench/unrelated.cu"), "__global__ void nothing_alike(double* q) { q[0] = 1.0; }\n");
  for (const char* format : {"alpaca", "sharegpt", "jsonl"}) {
    CAPTURE(format);
    ExportOptions options{"cuda2hip", format, store.dir.file(std::string("out-") + format), policy};
    options.decontaminate = {store.dir.file("bench")};
    Result<ExportSummary> summary = export_dataset(store.db, options);
    REQUIRE_MESSAGE(summary.ok(), summary.message());
    REQUIRE(summary->eval_samples > 0);
    REQUIRE(summary->train_samples > 0);
    CHECK(std::count(summary->files.begin(), summary->files.end(), "README.md") == 1);

    // The leakage figure, recomputed here by comparing every eval input with every train input.
    nlohmann::json manifest = nlohmann::json::parse(read_whole_file(summary->manifest_path));
    const nlohmann::json& leakage = manifest["leakage"];
    std::string extension = std::string(format) == "jsonl" ? ".jsonl" : ".json";
    std::string instruction = policy.export_pairs.at("cuda2hip").instruction;
    std::vector<std::string> train = written_inputs(options.out_dir + "/train" + extension, format,
                                                    std::string(format) == "sharegpt" ? instruction : "")
                                         .value();
    std::vector<std::string> eval = written_inputs(options.out_dir + "/eval" + extension, format,
                                                   std::string(format) == "sharegpt" ? instruction : "")
                                        .value();
    CHECK(leakage["train_rows"] == train.size());
    CHECK(leakage["train_rows"] == summary->train_rows);
    CHECK(leakage["eval_rows"] == eval.size());
    CHECK(leakage["eval_rows_with_near_duplicate"] == 0);
    CHECK(leakage["threshold"] == policy.dedup.threshold);
    double largest = brute_force_largest(train, eval, policy.dedup);
    MESSAGE("largest eval/train similarity: " << largest);
    CHECK(largest < policy.dedup.threshold);
    if (largest >= leakage["compared_from"].get<double>()) {
      CHECK(leakage["largest_similarity"].get<double>() == doctest::Approx(largest));
      CHECK(summary->largest_eval_train_similarity.value() == doctest::Approx(largest));
    } else {
      CHECK(leakage["largest_similarity"].is_null());
      CHECK_FALSE(summary->largest_eval_train_similarity.has_value());
    }
    for (const std::string& input : train) CHECK(input.find("Translate the following") == std::string::npos);

    // The card.
    std::string card = read_whole_file(options.out_dir + "/README.md");
    CHECK(manifest["files"]["card"] == "README.md");
    CHECK(card.rfind("# tailforge dataset: cuda2hip\n", 0) == 0);
    CHECK(card.find("| store | " + store.db.path()) != std::string::npos);
    CHECK(card.find("| snapshot | " + summary->snapshot_hash) != std::string::npos);
    CHECK(card.find("| train | " + std::to_string(summary->train_samples) + " | " +
                    std::to_string(summary->train_rows)) != std::string::npos);
    CHECK(card.find("| eval | " + std::to_string(summary->eval_samples) + " | ") != std::string::npos);
    int64_t imported_train = 0, imported_eval = 0;
    for (const nlohmann::json& sample : manifest["samples"]) {
      if (sample["origin"] == "imported") ++(sample["split"] == "eval" ? imported_eval : imported_train);
    }
    CHECK(card.find("| imported | " + std::to_string(imported_train) + " | " + std::to_string(imported_eval) + " |") !=
          std::string::npos);
    CHECK(card.find("| linear\\_algebra | ") != std::string::npos);
    CHECK(card.find("| atomics | ") != std::string::npos);
    CHECK(card.find("| nvidia.compile | " + std::to_string(summary->samples) +
                    " | 0 | gpu-box (NVIDIA H100) | nvcc 12.4 |") != std::string::npos);
    CHECK(card.find("| amd.run | 0 | " + std::to_string(summary->samples) + " | - | - |") != std::string::npos);
    CHECK(card.find(std::to_string(summary->clusters) + " clusters for " + std::to_string(summary->samples) +
                    " samples, 1 of them with more than one sample") != std::string::npos);
    CHECK(card.find("Eval rows with a near-duplicate (0.80 or more) among the train rows: 0.") != std::string::npos);
    CHECK(card.find("Checked against " + store.dir.file("bench") + " (1 files, 1 texts)") != std::string::npos);
    CHECK(card.find("Left out: 0.") != std::string::npos);
    CHECK(card.find("| feature/switch | 2.00 | ") != std::string::npos);  // a tail that weighted the resampling
    CHECK(card.find("| licensed-tree | 0123456789ab | LICENSE | MIT License |") != std::string::npos);
    CHECK(card.find("| bare-tree | 0123456789ab | - | unknown (no LICENSE file recorded) |") != std::string::npos);
  }
}

TEST_CASE("an export without benchmarks or imports says so in its card") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  for (const std::string& program : varied_programs()) store_verified_pair(db, program);
  ExportOptions options{"cuda2hip", "alpaca", dir.file("out"), load_default_synth_policy(TAILFORGE_SOURCE_DIR).value()};
  Result<ExportSummary> summary = export_dataset(db, options);
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  std::string card = read_whole_file(summary->card_path);
  CHECK(card.find("No benchmark was given") != std::string::npos);
  CHECK(card.find("No row was imported") != std::string::npos);
  CHECK(card.find("The store records no stage result for these rows.") != std::string::npos);
  nlohmann::json manifest = nlohmann::json::parse(read_whole_file(summary->manifest_path));
  CHECK(manifest["decontamination"]["benchmarks"].empty());
  CHECK(manifest["decontamination"]["left_out_count"] == 0);
  CHECK(manifest["leakage"]["eval_rows_with_near_duplicate"] == 0);
}

TEST_CASE("the leakage check reads the written files: an eval row copied into train is counted") {
  TempDir dir;
  MinHashOptions options;
  const std::vector<std::string>& programs = varied_programs();
  nlohmann::json train = nlohmann::json::array(), eval = nlohmann::json::array();
  for (size_t i = 0; i < 4; ++i)
    train.push_back({{"instruction", "Translate."}, {"input", programs[i]}, {"output", "x"}});
  eval.push_back({{"instruction", "Translate."}, {"input", programs[5]}, {"output", "x"}});
  eval.push_back({{"instruction", "Translate."}, {"input", programs[2] + "\n// a comment\n"}, {"output", "x"}});
  std::ofstream(dir.file("train.json")) << train.dump();
  std::ofstream(dir.file("eval.json")) << eval.dump();
  Result<SplitLeakage> leakage =
      measure_split_leakage(dir.file("train.json"), dir.file("eval.json"), "alpaca", "", options);
  REQUIRE_MESSAGE(leakage.ok(), leakage.message());
  CHECK(leakage->train_rows == 4);
  CHECK(leakage->eval_rows == 2);
  CHECK(leakage->eval_rows_with_near_duplicate == 1);
  CHECK(leakage->largest_similarity.value() == doctest::Approx(1.0));

  // Without the copy: the most similar pair is the first two thirds of program 1 and program 1,
  // below the threshold and above 0.5, so the figure is exact.
  std::string part = programs[1].substr(0, programs[1].size() * 2 / 3);
  eval[1]["input"] = part;
  std::ofstream(dir.file("eval.json")) << eval.dump();
  double expected = shingle_jaccard(part, programs[1], options);
  REQUIRE(expected >= 0.5);
  REQUIRE(expected < options.threshold);
  Result<SplitLeakage> partial =
      measure_split_leakage(dir.file("train.json"), dir.file("eval.json"), "alpaca", "", options);
  REQUIRE(partial.ok());
  CHECK(partial->eval_rows_with_near_duplicate == 0);
  CHECK(partial->largest_similarity.value() == doctest::Approx(expected));

  nlohmann::json conversation = {
      {"conversations",
       {{{"from", "human"}, {"value", "Translate.\n\n" + programs[2]}}, {{"from", "gpt"}, {"value", "x"}}}}};
  std::ofstream(dir.file("train-sharegpt.json")) << nlohmann::json::array({conversation}).dump();
  std::vector<std::string> inputs = written_inputs(dir.file("train-sharegpt.json"), "sharegpt", "Translate.").value();
  CHECK(inputs == std::vector<std::string>{programs[2]});
  std::ofstream(dir.file("broken.json")) << R"([{"instruction": "x"}])";
  Result<std::vector<std::string>> broken = written_inputs(dir.file("broken.json"), "alpaca", "");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.message().find("broken.json row 0") != std::string::npos);
}
