#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "store/cycles.h"
#include "store/samples.h"
#include "store/evaluations.h"
#include "synth/export.h"
#include "synth/retrain.h"
#include "synth/minhash.h"
#include "test_support/temp_dir.h"
#include "test_support/varied_programs.h"

using namespace tailforge;

namespace {

std::string program(int index) {
  // Distinct programs: each draws its statements from a different slice of a varied pool.
  static const char* statements[] = {
      "out[i] = in[i] * 2.0f;", "out[i] += in[(i + 1) % n];", "if (in[i] > 0.5f) out[i] = 0.0f;",
      "out[i] = sqrtf(fabsf(in[i]));", "for (int k = 0; k < 4; ++k) out[i] += in[(i + k) % n];",
      "switch (i & 3) { case 0: out[i] = 1.0f; break; default: out[i] = in[i]; }", "atomicAdd(&out[0], in[i]);",
      "out[i] = in[i] > out[i] ? in[i] : out[i];", "out[i] = __expf(-in[i]);", "out[n - 1 - i] = in[i];"};
  std::string body;
  for (int k = 0; k < 4; ++k) body += std::string(statements[(index * 7 + k * 3 + index / 10) % 10]) + "\n    ";
  return "#include <cstdio>\n__global__ void kernel_" + std::to_string(index) +
         "(float* out, const float* in, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) {\n    " +
         body + "}\n}\nint main() { printf(\"" + std::to_string(index * 31) + "\\n\"); return 0; }\n";
}

std::string add_pair(Database& db, const std::string& text, const std::string& domain,
                     std::vector<std::string> features, const std::string& origin = "template") {
  return store_verified_pair(db, text, origin, domain, std::move(features));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("export splits train and eval with no shared sample and no near-duplicate across them") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  policy.eval_fraction = 0.3;
  std::vector<std::pair<std::string, std::string>> planted;
  for (int i = 0; i < 60; ++i) {
    std::string domain = i % 6 == 0 ? "sorting" : "elementwise";
    std::vector<std::string> features = i % 10 == 0 ? std::vector<std::string>{"switch"} : std::vector<std::string>{};
    std::string id = add_pair(db, program(i), domain, features);
    if (i % 5 == 0) {  // a near-duplicate: the same program with a comment and re-spaced lines
      std::string twin = "// variant of " + std::to_string(i) + "\n" + program(i) + "\n\n";
      std::string twin_id = add_pair(db, twin, domain, features, "synthesized");
      planted.emplace_back(id, twin_id);
    }
  }
  Sample pending;
  pending.track = "cuda2hip";
  pending.origin = "template";
  pending.language = "cuda";
  pending.text = program(1000);
  std::string pending_id = insert_sample_if_absent(db, pending).value().id;

  for (const char* format : {"alpaca", "sharegpt", "jsonl"}) {
    ExportOptions options{"cuda2hip", format, dir.file(std::string("out-") + format), policy};
    Result<ExportSummary> summary = export_dataset(db, options);
    REQUIRE_MESSAGE(summary.ok(), summary.message());
    MESSAGE(std::string(format) << ": " << summary->train_samples << " train (" << summary->train_rows << " rows), "
                   << summary->eval_samples << " eval, " << summary->clusters << " clusters");
    CHECK(summary->samples == 72);
    CHECK(summary->eval_samples > 0);
    CHECK(summary->train_samples > 0);
    for (const std::string& id : summary->eval_ids) {
      CHECK(std::find(summary->train_ids.begin(), summary->train_ids.end(), id) == summary->train_ids.end());
      CHECK(id != pending_id);
    }
    NearDuplicateIndex train_index(policy.dedup);
    for (const std::string& id : summary->train_ids) train_index.add(find_sample(db, id).value()->text);
    for (const std::string& id : summary->eval_ids) {
      CHECK_FALSE(train_index.find_near_duplicate(find_sample(db, id).value()->text).has_value());
    }
    for (const auto& [a, b] : planted) {
      bool a_eval = std::count(summary->eval_ids.begin(), summary->eval_ids.end(), a) > 0;
      bool b_eval = std::count(summary->eval_ids.begin(), summary->eval_ids.end(), b) > 0;
      CHECK(a_eval == b_eval);
    }
    CHECK(summary->train_rows > summary->train_samples);  // the sorting tail is up-sampled

    std::string extension = std::string(format) == "jsonl" ? ".jsonl" : ".json";
    for (const std::string name : {"train", "eval"}) {
      std::string text = read_file(options.out_dir + "/" + name + extension);
      if (extension == ".jsonl") {
        std::istringstream lines(text);
        std::string line;
        while (std::getline(lines, line)) {
          nlohmann::json record = nlohmann::json::parse(line);
          CHECK(record.contains("instruction"));
          CHECK(record["output"].get<std::string>().find("hip/hip_runtime.h") != std::string::npos);
        }
      } else {
        nlohmann::json records = nlohmann::json::parse(text);
        REQUIRE(records.is_array());
        if (std::string(format) == "sharegpt") {
          CHECK(records[0]["conversations"][0]["from"] == "human");
          CHECK(records[0]["conversations"][1]["from"] == "gpt");
        } else {
          CHECK(records[0]["input"].get<std::string>().find("__global__") != std::string::npos);
        }
      }
    }
    nlohmann::json info = nlohmann::json::parse(read_file(options.out_dir + "/dataset_info.json"));
    CHECK(info["tailforge_cuda2hip_train"]["file_name"] == "train" + extension);
    nlohmann::json manifest = nlohmann::json::parse(read_file(summary->manifest_path));
    CHECK(manifest["samples"].size() == 72);
    CHECK(manifest["counts"]["by_origin"]["synthesized"] == 12);
    CHECK(manifest["sampling_weights"]["domain"]["sorting"].get<double>() > 1.0);
    CHECK(manifest["source_database"] == db.path());
    CHECK(manifest["snapshot_hash"] == export_snapshot_hash(db, options).value());
  }
}

TEST_CASE("a pair with drop_near_duplicates keeps one sample per cluster and sums its length reductions") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  std::vector<std::pair<std::string, std::string>> twins;
  for (int i = 0; i < 20; ++i) {
    std::string id = add_pair(db, program(i), "elementwise", {});
    if (i % 4 == 0) twins.emplace_back(id, add_pair(db, "// variant\n" + program(i) + "\n\n", "elementwise", {}));
  }
  // Lengths the manifest sums: 100 -> 60 for each sample.
  REQUIRE(db.exec(R"(UPDATE sample SET variables = '{"chars_before": 100, "chars_after": 60}')").ok());

  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  ExportOptions kept{"cuda2hip", "jsonl", dir.file("out-kept"), policy};
  Result<ExportSummary> all = export_dataset(db, kept);
  REQUIRE(all.ok());
  CHECK(all->samples == 25);  // by default near-duplicates stay, a cluster on one side of the split
  REQUIRE(all->clusters < 25);

  ExportPair& pair = policy.export_pairs.at("cuda2hip");
  pair.drop_near_duplicates = true;
  pair.length_reductions["shorter"] = {"chars_before", "chars_after"};
  ExportOptions options{"cuda2hip", "jsonl", dir.file("out"), policy};
  Result<ExportSummary> summary = export_dataset(db, options);
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  CHECK(summary->samples == all->clusters);
  CHECK(summary->clusters == all->clusters);
  CHECK(summary->near_duplicates_dropped == 25 - all->clusters);
  nlohmann::json manifest = nlohmann::json::parse(read_file(summary->manifest_path));
  CHECK(manifest["filters"]["near_duplicates_dropped"] == 25 - all->clusters);
  double samples = static_cast<double>(summary->samples);
  CHECK(manifest["length_reductions"]["shorter"]["characters_before"].get<double>() == doctest::Approx(100 * samples));
  CHECK(manifest["length_reductions"]["shorter"]["characters_after"].get<double>() == doctest::Approx(60 * samples));
  CHECK(manifest["length_reductions"]["shorter"]["reduction"].get<double>() == doctest::Approx(0.4));
  CHECK(summary->length_reductions["shorter"] == doctest::Approx(0.4));
  std::set<std::string> exported;
  for (const nlohmann::json& sample : manifest["samples"]) exported.insert(sample["id"].get<std::string>());
  for (const auto& [original, twin] : twins) CHECK(exported.count(original) + exported.count(twin) <= 1);
}

TEST_CASE("resampling lifts a tail to the target fraction of the head, capped") {
  ResamplingSettings settings;
  settings.target_fraction_of_head = 0.5;
  settings.max_weight = 4;
  ResamplingWeights weights = resampling_weights({{"head", 100}, {"mid", 40}, {"tail", 5}}, {}, settings);
  CHECK(weights.feature["head"] == 1.0);
  CHECK(weights.feature["mid"] == doctest::Approx(1.25));
  CHECK(weights.feature["tail"] == 4.0);
  CHECK(sample_weight(weights, {"head", "mid"}, "") == doctest::Approx(1.25));
}

TEST_CASE("SASS normalization removes comments and whitespace") {
  std::string sass = "        /*0000*/                   MOV R1, c[0x0][0x28] ;   /* 0x000fe40000000f00 */\n"
                     "\n   // a comment line\n        /*0010*/   S2R R0, SR_TID.X ;\n";
  CHECK(normalize_assembly(sass) == "MOV R1, c[0x0][0x28] ;\nS2R R0, SR_TID.X ;\n");
}

TEST_CASE("the manifest measures, on the written train file, how near any row comes to an evaluation item") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  // An item, a copy of it with one statement changed (at or above the threshold: held back), a
  // program that shares about half of its shingles, and unrelated programs.
  std::string item_text = program(3);
  std::string near_text = item_text;
  near_text.replace(near_text.find("out[i] ="), 8, "out[i] -=");
  // Three constants changed in three places: about two thirds of the shingles stay.
  std::string half_text = item_text;
  half_text.replace(half_text.find("2.0f"), 4, "4.5f");
  half_text.replace(half_text.find("k < 4"), 5, "k < 8");
  half_text.replace(half_text.find("(i + 1)"), 7, "(i + 3)");
  std::string item = add_pair(db, item_text, "elementwise", {});
  std::string near = add_pair(db, near_text, "elementwise", {});
  add_pair(db, half_text, "elementwise", {});
  for (int i = 20; i < 30; ++i) add_pair(db, program(i), "elementwise", {});
  REQUIRE(shingle_jaccard(item_text, near_text, policy.dedup) >= policy.dedup.threshold);
  REQUIRE(add_eval_items(db, {EvalItem{"cuda2hip", item, 1, std::nullopt, std::nullopt, 0}}).ok());

  ExportOptions options{"cuda2hip", "alpaca", dir.file("out"), policy};
  Result<ExportSummary> summary = export_dataset(db, options);
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  CHECK(std::count(summary->train_ids.begin(), summary->train_ids.end(), near) == 0);
  CHECK(summary->evaluation_items == 1);
  CHECK(summary->items_with_near_duplicate == 0);

  // The figure is the exact largest similarity between the item and any row as written.
  nlohmann::json train = nlohmann::json::parse(read_file(options.out_dir + "/train.json"));
  double largest = 0;
  for (const nlohmann::json& row : train) {
    largest = std::max(largest, shingle_jaccard(row["input"].get<std::string>(), item_text, policy.dedup));
  }
  REQUIRE(largest >= 0.5);  // the program with three constants changed is in train, below the threshold
  CHECK(largest < policy.dedup.threshold);
  REQUIRE(summary->largest_item_train_similarity.has_value());
  CHECK(std::abs(*summary->largest_item_train_similarity - largest) < 1e-12);
  nlohmann::json manifest = nlohmann::json::parse(read_file(options.out_dir + "/manifest.json"));
  CHECK(manifest["evaluation_set"]["items"] == 1);
  CHECK(manifest["evaluation_set"]["evaluation_set_version"] == 1);
  CHECK(manifest["evaluation_set"]["items_with_near_duplicate"] == 0);
  CHECK(std::abs(manifest["evaluation_set"]["largest_similarity"].get<double>() - largest) < 1e-12);

  // A snapshot where an item had a training row at the threshold is refused, saying why.
  ExportSummary leaky = *summary;
  CHECK(evaluation_leakage_refusal(leaky, policy.dedup.threshold).empty());
  leaky.items_with_near_duplicate = 1;
  leaky.largest_item_train_similarity = 0.91;
  std::string refusal = evaluation_leakage_refusal(leaky, policy.dedup.threshold);
  CHECK(refusal.find("refused: 1 of 1 evaluation items") != std::string::npos);
  CHECK(refusal.find("0.910") != std::string::npos);
}
