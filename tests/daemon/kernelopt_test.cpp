// The kernelopt track end to end through the tailforge binary: the built-in catalog listed;
// `kernelopt run` compiling a task's reference and candidates with nvcc and recording the timing
// as skipped where no GPU exists (or measuring it where one does); a user's task file imported;
// and `curate --track kernelopt` on a stored candidate set choosing exactly the ConCuR selection
// computed by hand, then `export --track kernelopt` writing those choices.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "synth/kernelopt/store.h"
#include "synth/training_text.h"
#include "test_support/distinct_kernels.h"
#include "test_support/varied_programs.h"
#include "test_support/fake_openai_server.h"
#include "test_support/read_whole_file.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "verifier/toolchains.h"
#include "test_support/tools_here.h"

namespace tailforge {
namespace {

const char* kReference = R"(constexpr long long kCount = 4096;
__global__ void twice(const float* x, float* y) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < kCount) y[i] = 2.0f * x[i];
}
void tf_launch(const float* const* inputs, float* output, cudaStream_t stream) {
  twice<<<(kCount + 127) / 128, 128, 0, stream>>>(inputs[0], output);
}
)";

KernelTask stored_task(const std::string& name, const std::string& type) {
  KernelTask task;
  task.name = name;
  task.operator_type = type;
  task.domain = "tensor";
  task.description = name + " over 4096 floats";
  task.inputs = {{"x", 4096}};
  task.output = {"y", 4096};
  task.reference_source = kReference;
  return task;
}

// A candidate with `words` words of reasoning, measured right at `speedup` (0: wrong).
int64_t add_measured(Database& db, const KernelTask& task, int words, double speedup) {
  static int serial = 0;
  KernelCandidate candidate;
  candidate.task = task.name;
  candidate.strategy = "s" + std::to_string(++serial);
  candidate.origin = "builtin";
  for (int w = 0; w < words; ++w) candidate.reasoning += "word ";
  candidate.source = std::string(kReference) + "// variant " + std::to_string(serial) + "\n";
  Result<StoredCandidate> stored = store_kernelopt_candidate(db, task, candidate);
  REQUIRE(stored.ok());
  KernelMeasurement measured;
  if (speedup > 0) {
    measured.status = "ok";
    HarnessReport report;
    report.verdict = "ok";
    report.device = "test GPU";
    report.reference = KernelTiming{1.0, 0.01, 100};
    report.candidate = KernelTiming{1.0 / speedup, 0.01, 100};
    measured.report = report;
  } else {
    measured.status = "fail";
    measured.category = "kernelopt.output_mismatch";
    measured.detail = "3 of 4096 outputs differ";
  }
  REQUIRE(store_kernelopt_measurement(db, *stored, task, measured, "test-host").ok());
  return stored->id;
}

}  // namespace

TEST_CASE("kernelopt: the built-in catalog lists at least 30 tasks of every operator type") {
  TempDir dir;  // an empty store: the catalog is what `kernelopt run` would store
  ProcessResult listed = run_tailforge({"kernelopt", "tasks", "--json", "--db", dir.file("catalog.db")});
  REQUIRE_MESSAGE(listed.exit_code == 0, listed.stderr_text);
  nlohmann::json tasks = nlohmann::json::parse(listed.stdout_text);
  CHECK(tasks.size() >= 30);
  std::map<std::string, int> types;
  for (const auto& task : tasks) ++types[task["operator_type"].get<std::string>()];
  for (const char* type : {"single", "reduction", "fusion", "matmul", "stencil"}) CHECK(types[type] >= 4);
}

TEST_CASE("kernelopt: tasks shows the bytes and FLOPs each task's roofline uses, its buffers and tolerance") {
  TempDir dir;
  ProcessResult listed = run_tailforge({"kernelopt", "tasks", "--json", "--db", dir.file("catalog.db")});
  REQUIRE_MESSAGE(listed.exit_code == 0, listed.stderr_text);
  nlohmann::json tasks = nlohmann::json::parse(listed.stdout_text);
  REQUIRE(tasks.size() >= 30);
  std::string matmul;
  for (const auto& task : tasks) {
    CAPTURE(task.dump());
    REQUIRE(task["inputs"].is_array());
    int64_t input_bytes = 0;
    for (const auto& input : task["inputs"]) input_bytes += 4 * input["elements"].get<int64_t>();
    CHECK(input_bytes > 0);
    // Every input once, unless the task says otherwise (a stencil's halo, a matrix read in tiles).
    CHECK(task["read_bytes"].get<int64_t>() > 0);
    if (task["operator_type"] == "single") CHECK(task["read_bytes"].get<int64_t>() == input_bytes);
    CHECK(task["output"]["elements"].get<int64_t>() > 0);
    CHECK(task["tolerance"].get<double>() > 0);
    CHECK(task["reference_language"] == "cuda");
    CHECK(task["flops"].get<double>() >= 0);
    if (task["operator_type"] == "matmul" && task["flops"].get<double>() > 0 && matmul.empty()) matmul = task["name"];
  }
  REQUIRE_MESSAGE(!matmul.empty(), "no matmul task declares its FLOPs");

  ProcessResult table = run_tailforge({"kernelopt", "tasks", "--db", dir.file("catalog.db")});
  REQUIRE(table.exit_code == 0);
  CHECK(table.stdout_text.find("read bytes") != std::string::npos);
  CHECK(table.stdout_text.find("FLOPs") != std::string::npos);
  for (const auto& task : tasks) {
    if (task["name"] != matmul) continue;
    size_t row = table.stdout_text.find("\n" + matmul + " ");
    REQUIRE(row != std::string::npos);
    std::string line = table.stdout_text.substr(row + 1, table.stdout_text.find('\n', row + 1) - row - 1);
    CHECK_MESSAGE(line.find(" " + std::to_string(task["read_bytes"].get<int64_t>()) + " ") != std::string::npos, line);
    CHECK_MESSAGE(line.find(fmt::format(" {:.4g} ", task["flops"].get<double>())) != std::string::npos, line);
  }
}

TEST_CASE("kernelopt: curate chooses exactly the ConCuR selection of a stored candidate set and export writes it") {
  TempDir dir;
  std::string db_path = dir.file("t.db");
  std::map<std::string, int64_t> id;
  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    KernelTask relu = stored_task("relu", "single"), fuse = stored_task("fuse", "fusion"),
               sum = stored_task("sum", "reduction"), sigmoid = stored_task("sigmoid", "single"),
               exp = stored_task("exp", "single");
    for (const KernelTask* task : {&relu, &fuse, &sum, &sigmoid, &exp}) REQUIRE(store_kernelopt_task(*db, *task).ok());
    id["c1"] = add_measured(*db, relu, 10, 2.0);     // shortest and fastest of relu: (a)
    id["c2"] = add_measured(*db, relu, 20, 1.5);
    id["c3"] = add_measured(*db, relu, 5, 0);        // shorter still, but wrong: does not count
    id["c4"] = add_measured(*db, fuse, 10, 1.2);     // shortest of fuse, not the fastest
    id["c5"] = add_measured(*db, fuse, 50, 6.0);     // over 5x: (b)
    id["c6"] = add_measured(*db, sum, 40, 3.0);
    id["c7"] = add_measured(*db, sum, 15, 2.0);      // shortest of sum, not the fastest: nothing
    id["c8"] = add_measured(*db, sigmoid, 25, 1.1);
    id["c9"] = add_measured(*db, sigmoid, 12, 1.3);  // shortest and fastest of sigmoid: (a)
    id["c10"] = add_measured(*db, exp, 30, 0.9);     // shortest of exp, not the fastest
    id["c11"] = add_measured(*db, exp, 35, 1.4);     // exp's best: (c) adds it at a single share of 0.8
  }
  // (a) relu c1, sigmoid c9; (b) c5; singles 2 of 3 < 0.8, so (c) adds exp's best c11 (3 of 4);
  // no single-operator task is left without a choice, so it stops there.
  ProcessResult curated = run_tailforge({"curate", "--track", "kernelopt", "--db", db_path, "--single-share", "0.8", "--json"});
  REQUIRE_MESSAGE(curated.exit_code == 0, curated.stderr_text);
  nlohmann::json result = nlohmann::json::parse(curated.stdout_text);
  std::vector<int64_t> chosen;
  std::vector<std::string> rules;
  for (const auto& choice : result["chosen"]) {
    chosen.push_back(choice["candidate_id"].get<int64_t>());
    rules.push_back(choice["rule"].get<std::string>());
  }
  CHECK(chosen == std::vector<int64_t>{id["c1"], id["c9"], id["c5"], id["c11"]});
  CHECK(rules == std::vector<std::string>{"shortest_is_fastest", "shortest_is_fastest", "high_speedup",
                                          "single_operator_balance"});
  CHECK(result["chosen_by_operator_type"]["single"] == 3);
  CHECK(result["chosen_by_operator_type"]["fusion"] == 1);
  // ARL of relu = (10 + 20 + 5) / 3 words; every candidate counts.
  bool found_relu = false;
  for (const auto& task : result["difficulty"]) {
    if (task["task"] != "relu") continue;
    found_relu = true;
    CHECK(task["arl"].get<double>() == doctest::Approx(35.0 / 3));
    CHECK(task["candidates"] == 3);
    CHECK(task["correct"] == 2);
  }
  CHECK(found_relu);
  // A lower bar makes sum's 3.0x a high-speedup choice too; explicit cut-offs bucket by them.
  ProcessResult lower = run_tailforge({"curate", "--db", db_path, "--high-speedup", "2.5", "--difficulty", "20,30", "--json"});
  REQUIRE_MESSAGE(lower.exit_code == 0, lower.stderr_text);
  nlohmann::json lowered = nlohmann::json::parse(lower.stdout_text);
  std::vector<int64_t> lowered_ids;
  for (const auto& choice : lowered["chosen"]) lowered_ids.push_back(choice["candidate_id"].get<int64_t>());
  CHECK(lowered_ids == std::vector<int64_t>{id["c1"], id["c9"], id["c5"], id["c6"]});
  for (const auto& task : lowered["difficulty"]) {
    if (task["task"] == "relu") CHECK(task["bucket"] == "easy");     // ARL 11.7 < 20
    if (task["task"] == "exp") CHECK(task["bucket"] == "hard");      // ARL 32.5 > 30
    if (task["task"] == "fuse") CHECK(task["bucket"] == "medium");   // ARL 30.0 is not above 30
  }
  ProcessResult table = run_tailforge({"curate", "--db", db_path});
  REQUIRE(table.exit_code == 0);
  CHECK(table.stdout_text.find("not chosen:") != std::string::npos);
  CHECK(table.stdout_text.find("sum") != std::string::npos);

  ProcessResult exported = run_tailforge({"export", "--track", "kernelopt", "--db", db_path, "--format", "jsonl",
                                          "--out", dir.file("out")});
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.stderr_text);
  // Every stored task has the same reference, so the three rows are one near-duplicate cluster:
  // one split holds them all, in the curation's order.
  std::vector<nlohmann::json> rows;
  for (const char* split : {"out/train.jsonl", "out/eval.jsonl"}) {
    std::ifstream lines(dir.file(split));
    for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  }
  REQUIRE(rows.size() == 3);  // the newest curation (the default share 0.5) chose c1, c9, c5
  CHECK(rows[0]["task"] == "relu");
  CHECK(rows[0]["reasoning_length"] == 10);
  CHECK(rows[2]["rule"] == "high_speedup");
  CHECK(rows[2]["speedup"].get<double>() == doctest::Approx(6.0));
  CHECK(rows[2]["kernel"].get<std::string>().find("tf_launch") != std::string::npos);
  std::ifstream manifest_file(dir.file("out/manifest.json"));
  nlohmann::json manifest = nlohmann::json::parse(manifest_file);
  CHECK(manifest["counts"]["samples"] == 3);
  CHECK(manifest["counts"]["by_rule"]["shortest_is_fastest"] == 2);
  CHECK(manifest["counts"]["clusters"] == 1);

  ProcessResult report = run_tailforge({"kernelopt", "report", "--db", db_path, "--json"});
  REQUIRE(report.exit_code == 0);
  nlohmann::json figures = nlohmann::json::parse(report.stdout_text)["models"][0]["overall"];
  CHECK(figures["tasks"] == 5);
  CHECK(figures["fast_1"].get<double>() == doctest::Approx(1.0));  // every task has a right kernel over 1x
  CHECK(figures["fast_2"].get<double>() == doctest::Approx(0.4));  // relu 2.0 is not > 2; fuse 6.0, sum 3.0

  ProcessResult taxonomy = run_tailforge({"taxonomy", "--db", db_path, "--track", "kernelopt", "--json"});
  REQUIRE_MESSAGE(taxonomy.exit_code == 0, taxonomy.stderr_text);
  CHECK(taxonomy.stdout_text.find("kernelopt.output_mismatch") != std::string::npos);
}

// Every string of a written row, nested or not.
static void strings_of(const nlohmann::json& value, std::vector<std::string>& out) {
  if (value.is_string()) out.push_back(value.get<std::string>());
  if (value.is_structured()) {
    for (const nlohmann::json& item : value) strings_of(item, out);
  }
}

TEST_CASE("kernelopt: export splits by near-duplicate cluster, leaves out benchmark matches and writes a card") {
  TempDir dir;
  std::string db_path = dir.file("t.db");
  std::map<std::string, std::string> sample_of;  // task -> its candidate's sample
  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    // Six tasks with references of different structure (never near-duplicates, even with names and
    // numbers masked), and two twins sharing a seventh.
    for (int n = 0; n < 8; ++n) {
      KernelTask task = stored_task(n < 6 ? "task_" + std::to_string(n) : n == 6 ? "twin_a" : "twin_b",
                                    n % 2 ? "fusion" : "single");
      task.reference_source = varied_programs()[std::min(n, 6)];
      // A store written by an older generator: the provenance line must not reach any row.
      if (n == 0) {
        task.reference_source = "// tailforge generated program: domain x, template y, seed 7\n" + task.reference_source;
      }
      REQUIRE(store_kernelopt_task(*db, task).ok());
      KernelCandidate candidate;
      candidate.task = task.name;
      candidate.strategy = "only";
      candidate.origin = n == 4 ? "model" : "builtin";
      candidate.model = n == 4 ? "coder-7b" : "";
      candidate.reasoning = "Coalesced loads and one pass over the data.";
      candidate.source = n == 3 ? varied_programs()[7] : distinct_kernel_text(100 + n);
      Result<StoredCandidate> stored = store_kernelopt_candidate(*db, task, candidate);
      REQUIRE(stored.ok());
      sample_of[task.name] = stored->sample_id;
      KernelMeasurement measured;
      measured.status = "ok";
      HarnessReport report;
      report.verdict = "ok";
      report.device = "test GPU";
      report.reference = KernelTiming{1.0, 0.01, 100};
      report.candidate = KernelTiming{0.5, 0.01, 100};
      measured.report = report;
      REQUIRE(store_kernelopt_measurement(*db, *stored, task, measured, "test-host").ok());
    }
  }
  ProcessResult curated = run_tailforge({"curate", "--track", "kernelopt", "--db", db_path});
  REQUIRE_MESSAGE(curated.exit_code == 0, curated.stderr_text);
  // Benchmarks: a folder holding task_3's kernel, and a JSONL file holding task_5's reference.
  std::filesystem::create_directories(dir.file("suite"));
  std::ofstream(dir.file("suite/bench.cu")) << varied_programs()[7];
  std::ofstream(dir.file("suite2.jsonl")) << nlohmann::json({{"code", varied_programs()[5]}}).dump() << "\n";
  std::ofstream(dir.file("config.json")) << R"({"synth": {"eval_fraction": 0.5}})";

  for (std::string format : {"alpaca", "sharegpt", "jsonl"}) {
    CAPTURE(format);
    std::string out = dir.file("out-" + format);
    ProcessResult exported = run_tailforge({"export", "--track", "kernelopt", "--db", db_path, "--config",
                                            dir.file("config.json"), "--format", format, "--out", out,
                                            "--decontaminate", dir.file("suite"), "--decontaminate",
                                            dir.file("suite2.jsonl")});
    REQUIRE_MESSAGE(exported.exit_code == 0, exported.stderr_text);
    CHECK(exported.stdout_text.find("decontamination: 2 samples left out") != std::string::npos);
    CHECK(exported.stdout_text.find("leakage: eval rows with a near-duplicate in train: 0") != std::string::npos);

    nlohmann::json manifest = nlohmann::json::parse(read_whole_file(out + "/manifest.json"));
    std::map<std::string, std::string> left_out;  // sample -> side
    for (const nlohmann::json& row : manifest["decontamination"]["left_out"])
      left_out[row["id"].get<std::string>()] = row["side"].get<std::string>();
    CHECK(left_out ==
          std::map<std::string, std::string>{{sample_of["task_3"], "target"}, {sample_of["task_5"], "source"}});

    std::map<std::string, std::string> split_of;  // task -> split
    for (const nlohmann::json& sample : manifest["samples"])
      split_of[sample["task"].get<std::string>()] = sample["split"].get<std::string>();
    CHECK(split_of.size() == 6);
    CHECK(split_of.count("task_3") == 0);
    CHECK(split_of["twin_a"] == split_of["twin_b"]);  // near-duplicates never straddle the split
    int64_t train = manifest["counts"]["train_samples"], eval = manifest["counts"]["eval_samples"];
    CHECK(train + eval == 6);
    CHECK(train > 0);
    CHECK(eval > 0);
    CHECK(manifest["counts"]["clusters"] == 5);
    CHECK(manifest["counts"]["by_origin"]["model coder-7b"] == 1);
    CHECK(manifest["leakage"]["eval_rows"] == eval);
    CHECK(manifest["leakage"]["train_rows"] == train);
    CHECK(manifest["leakage"]["eval_rows_with_near_duplicate"] == 0);

    std::string extension = format == "jsonl" ? ".jsonl" : ".json";
    auto read_rows = [&](const std::string& path) {
      if (format != "jsonl") return nlohmann::json::parse(read_whole_file(path));
      nlohmann::json rows = nlohmann::json::array();
      std::ifstream lines(path);
      for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
      return rows;
    };
    nlohmann::json train_rows = read_rows(out + "/train" + extension);
    nlohmann::json eval_rows = read_rows(out + "/eval" + extension);
    CHECK(train_rows.size() == static_cast<size_t>(train));
    CHECK(eval_rows.size() == static_cast<size_t>(eval));
    int references_seen = 0;
    for (const nlohmann::json* rows : {&train_rows, &eval_rows}) {
      for (const nlohmann::json& row : *rows) {
        std::vector<std::string> texts;
        strings_of(row, texts);
        bool holds_reference = false;
        for (const std::string& text : texts) {
          CHECK_FALSE(has_tailforge_marker(text));
          CHECK(text.find("tailforge") == std::string::npos);
          CHECK(text.find("seed") == std::string::npos);
          if (text.find("scale_add(") != std::string::npos) holds_reference = true;
        }
        references_seen += holds_reference;  // task_0's row, once
        if (format != "sharegpt") {
          CHECK(row["input"].get<std::string>().rfind("Task: ", 0) == 0);
          CHECK(row["output"].get<std::string>().find("```cuda") != std::string::npos);
        } else {
          CHECK(row["conversations"][1]["from"] == "gpt");
        }
      }
    }
    CHECK(references_seen == 1);
    nlohmann::json info = nlohmann::json::parse(read_whole_file(out + "/dataset_info.json"));
    CHECK(info["tailforge_kernelopt_train"]["file_name"] == "train" + extension);
    CHECK(info["tailforge_kernelopt_eval"]["formatting"] == (format == "sharegpt" ? "sharegpt" : "alpaca"));

    std::string card = read_whole_file(out + "/README.md");
    CHECK(card.find("# tailforge dataset: kernelopt") != std::string::npos);
    CHECK(card.find("| train | " + std::to_string(train) + " |") != std::string::npos);
    CHECK(card.find("| test GPU | 6 | 2.00 | 2.00 | 2.00 |") != std::string::npos);  // 6 rows, each 2x
    CHECK(card.find("## Train/eval leakage") != std::string::npos);
    CHECK(card.find("bench.cu") != std::string::npos);
    CHECK(card.find("suite2.jsonl:1:code") != std::string::npos);
    CHECK(card.find("model coder-7b") != std::string::npos);
  }
}

TEST_CASE("kernelopt: run compiles a task's reference and candidates; timing is skipped without a GPU") {
  const Toolchains& toolchains = detected_toolchains();
  if (!testing::nvcc_here()) return;
  TempDir dir;
  std::string db_path = dir.file("t.db");
  ProcessResult listed = run_tailforge({"kernelopt", "tasks", "--json", "--db", dir.file("catalog.db")});
  REQUIRE(listed.exit_code == 0);
  std::string task;
  for (const auto& entry : nlohmann::json::parse(listed.stdout_text)) {
    if (entry["operator_type"] == "fusion") {
      task = entry["name"];
      break;
    }
  }
  REQUIRE(!task.empty());
  ProcessResult run = run_tailforge({"kernelopt", "run", "--db", db_path, "--tasks", task, "--jobs", "2"}, 300);
  REQUIRE_MESSAGE(run.exit_code == 0, run.stdout_text << run.stderr_text);
  ProcessResult report = run_tailforge({"kernelopt", "report", "--db", db_path, "--json"});
  nlohmann::json figures = nlohmann::json::parse(report.stdout_text)["models"][0]["overall"];
  CHECK(figures["tasks"] == 1);
  CHECK(figures["candidates"].get<int>() >= 3);
  if (toolchains.has_gpu("nvidia")) {
    CHECK(figures["right"] == figures["candidates"]);
    CHECK(figures["timed_tasks"] == 1);
    MESSAGE(run.stdout_text);
    return;
  }
  CHECK(run.stdout_text.find("skipped: timing skipped: ") != std::string::npos);
  CHECK(figures["measured"] == 0);
  // Measured again, a candidate already compiled and skipped here is not redone.
  ProcessResult again = run_tailforge({"kernelopt", "run", "--db", db_path, "--tasks", task});
  CHECK(again.stderr_text.find("0 candidates to measure") != std::string::npos);
  ProcessResult remeasured = run_tailforge({"kernelopt", "run", "--db", db_path, "--tasks", task, "--remeasure"}, 300);
  REQUIRE_MESSAGE(remeasured.exit_code == 0, remeasured.stderr_text);
  CHECK(remeasured.stderr_text.find(std::to_string(figures["candidates"].get<int>()) + " candidates to measure") !=
        std::string::npos);
}

TEST_CASE("kernelopt: import --track kernelopt stores a user's tasks and rejects a bad one with the reason") {
  TempDir dir;
  std::string db_path = dir.file("t.db");
  std::ofstream(dir.file("twice.cu")) << kReference;
  std::ofstream(dir.file("tasks.json"))
      << R"({"tasks": [{"name": "twice_4k", "operator_type": "single", "description": "y = 2x over 4096 floats",
                        "inputs": [{"name": "x", "elements": 4096}], "output": {"name": "y", "elements": 4096},
                        "reference_file": "twice.cu"}]})";
  ProcessResult imported = run_tailforge({"import", "--track", "kernelopt", "--db", db_path, dir.file("tasks.json")});
  REQUIRE_MESSAGE(imported.exit_code == 0, imported.stderr_text);
  CHECK(imported.stdout_text.find("imported 1 kernelopt tasks") != std::string::npos);
  ProcessResult listed = run_tailforge({"kernelopt", "tasks", "--db", db_path, "--json"});
  nlohmann::json tasks = nlohmann::json::parse(listed.stdout_text);
  bool found = false;
  for (const auto& task : tasks) found = found || (task["name"] == "twice_4k" && task["origin"] == "imported");
  CHECK(found);

  // A KernelBench-style PyTorch module as the reference.
  std::ofstream(dir.file("model.py")) << "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n"
                                         "        return 2 * x\ndef get_inputs():\n    return [torch.randn(4096)]\n";
  std::ofstream(dir.file("torch.json"))
      << R"([{"name": "twice_torch", "operator_type": "single", "inputs": [{"name": "x", "elements": 4096}],
              "output": {"name": "y", "elements": 4096}, "reference_file": "model.py"}])";
  ProcessResult torch = run_tailforge({"import", "--track", "kernelopt", "--db", db_path, dir.file("torch.json")});
  REQUIRE_MESSAGE(torch.exit_code == 0, torch.stderr_text);
  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    Result<std::vector<KernelTask>> stored = load_kernelopt_tasks(*db, {"twice_torch"});
    REQUIRE(stored.ok());
    REQUIRE(stored->size() == 1);
    CHECK(stored->front().reference_language == "pytorch");
    CHECK(stored->front().reference_source.find("class Model") != std::string::npos);
  }

  std::ofstream(dir.file("bad.json")) << R"([{"name": "x", "operator_type": "conv", "inputs": [], "output": {}}])";
  ProcessResult bad = run_tailforge({"import", "--track", "kernelopt", "--db", db_path, dir.file("bad.json")});
  CHECK(bad.exit_code == 1);
  CHECK(bad.stderr_text.find("operator_type must be") != std::string::npos);
}

TEST_CASE("kernelopt: run --model asks a kernelopt model for candidates and keeps its reasoning_content") {
  const Toolchains& toolchains = detected_toolchains();
  if (!testing::nvcc_here()) return;
  TempDir dir;
  std::string db_path = dir.file("t.db");
  FakeOpenAiServer server;
  // Each answer differs by the sampling seed it was asked with.
  server.set_responder([](const ReceivedRequest& request) {
    nlohmann::json body = nlohmann::json::parse(request.body);
    std::string seed = std::to_string(body.value("seed", 0));
    std::string kernel = std::string(kReference) + "// seed " + seed + "\n";
    return CannedResponse{200, {}, FakeOpenAiServer::completion("Here it is.\n```cuda\n" + kernel + "```\n", "stop",
                                                                "one thread per element is already coalesced; seed " + seed)};
  });
  std::ofstream(dir.file("config.json")) << nlohmann::json{{"llm", server.llm_section()}}.dump();
  std::ofstream(dir.file("tasks.json"))
      << nlohmann::json::array({{{"name", "twice_4k"}, {"operator_type", "single"}, {"description", "y = 2x"},
                                 {"inputs", {{{"name", "x"}, {"elements", 4096}}}},
                                 {"output", {{"name", "y"}, {"elements", 4096}}},
                                 {"reference_source", kReference}}})
             .dump();
  REQUIRE(run_tailforge({"import", "--track", "kernelopt", "--db", db_path, dir.file("tasks.json")}).exit_code == 0);
  ProcessResult added = run_tailforge({"model", "add", "--db", db_path, "--track", "kernelopt", "--kind", "openai",
                                       "--endpoint", server.base_url(), "--name", "coder-v1"});
  REQUIRE_MESSAGE(added.exit_code == 0, added.stderr_text);
  CHECK(added.stdout_text.find("ok: coder-v1 answers") != std::string::npos);  // model add asked it once
  size_t asked_by_add = server.requests().size();
  ProcessResult run = run_tailforge({"kernelopt", "run", "--db", db_path, "--config", dir.file("config.json"), "--tasks",
                                     "twice_4k", "--model", "coder-v1", "--samples", "2", "--jobs", "2"},
                                    300);
  REQUIRE_MESSAGE(run.exit_code == 0, run.stdout_text << run.stderr_text);
  CHECK(run.stderr_text.find("coder-v1 wrote 2 candidates for 1 tasks") != std::string::npos);
  std::vector<ReceivedRequest> requests = server.requests();
  requests.erase(requests.begin(), requests.begin() + static_cast<std::ptrdiff_t>(asked_by_add));
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].body.find("twice_4k") != std::string::npos);
  CHECK(requests[0].body.find("tf_launch") != std::string::npos);

  Result<Database> db = Database::open(db_path);
  REQUIRE(db.ok());
  Result<std::vector<CandidateRecord>> records = load_kernelopt_candidates(*db);
  REQUIRE(records.ok());
  REQUIRE(records->size() == 2);
  for (const CandidateRecord& record : *records) {
    CHECK(record.stored.candidate.origin == "model");
    CHECK(record.stored.candidate.model == "coder-v1");
    CHECK(record.stored.candidate.reasoning.find("one thread per element is already coalesced") == 0);
    CHECK(record.status == (toolchains.has_gpu("nvidia") ? "ok" : "skipped"));
  }
  ProcessResult report = run_tailforge({"kernelopt", "report", "--db", db_path, "--json"});
  CHECK(nlohmann::json::parse(report.stdout_text)["models"][0]["model"] == "coder-v1");

  // A command model of kernelopt is measured by the daemon's evaluation; `kernelopt run --model`
  // asks an endpoint for several sampled answers, so it refuses one.
  ProcessResult command_model = run_tailforge({"model", "add", "--db", db_path, "--track", "kernelopt", "--kind",
                                               "command", "--name", "c", "--command", "cat"});
  CHECK(command_model.exit_code == 0);
  ProcessResult asked = run_tailforge({"kernelopt", "run", "--db", db_path, "--model", "c", "--tasks", "relu_16m"});
  CHECK(asked.exit_code != 0);
  CHECK(asked.stderr_text.find("needs an openai model") != std::string::npos);
}

}  // namespace tailforge
