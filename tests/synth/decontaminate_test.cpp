#include "synth/decontaminate.h"

#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "store/samples.h"
#include "synth/export.h"
#include "test_support/read_whole_file.h"
#include "test_support/temp_dir.h"
#include "test_support/varied_programs.h"

using namespace tailforge;

namespace {


std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// The ids of the samples a written split file holds, through the manifest's sha256 of each row.
std::set<std::string> exported_ids(const nlohmann::json& manifest) {
  std::set<std::string> ids;
  for (const nlohmann::json& sample : manifest["samples"]) ids.insert(sample["id"].get<std::string>());
  return ids;
}

const char* kUnrelated = R"(// A benchmark kernel unrelated to anything stored: a bitonic sorting network step.
#include <cstdint>
__global__ void bitonic_step(uint32_t* keys, int j, int k) {
  unsigned int i = threadIdx.x + blockDim.x * blockIdx.x;
  unsigned int partner = i ^ j;
  if (partner > i) {
    bool ascending = (i & k) == 0;
    uint32_t left = keys[i], right = keys[partner];
    if ((left > right) == ascending) { keys[i] = right; keys[partner] = left; }
  }
}
void sort_on_gpu(uint32_t* keys, int count) {
  for (int k = 2; k <= count; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) bitonic_step<<<count / 512, 512>>>(keys, j, k);
}
)";

}  // namespace

TEST_CASE("the fixture's stored programs are not near-duplicates of one another, even masked") {
  MinHashOptions masked = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value().dedup;
  masked.mask_identifiers = masked.mask_numbers = true;
  const std::vector<std::string>& programs = varied_programs();
  for (size_t a = 0; a < programs.size(); ++a) {
    for (size_t b = a + 1; b < programs.size(); ++b) CHECK(shingle_jaccard(programs[a], programs[b], masked) < 0.5);
    CHECK(shingle_jaccard(programs[a], kUnrelated, masked) < 0.5);
  }
}

TEST_CASE("a benchmark folder holding copies of 3 stored programs leaves all 3 out; an unrelated one none") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  policy.eval_fraction = 0.3;
  std::vector<std::string> ids;
  for (const std::string& program : varied_programs()) ids.push_back(store_verified_pair(db, program));

  // The copies: one under another name with its kernel renamed, one re-spaced with every
  // identifier changed, one as it is.
  const std::vector<std::string>& programs = varied_programs();
  write_tree_file(dir.file("bench/suite/renamed_transpose_test.cu"),
                  replace_all(programs[1], "transpose", "matrix_transpose_kernel"));
  std::string respaced = replace_all(programs[3], "partial", "acc");
  respaced = replace_all(respaced, "warp_sum", "reduce_lanes");
  respaced = replace_all(respaced, "result", "total_out");
  respaced = replace_all(respaced, "dot", "inner_product");
  respaced = replace_all(respaced, "  ", "\t");
  respaced = replace_all(respaced, "; ", ";\n    ");
  respaced = replace_all(respaced, "{ ", "{\n\n  ");
  write_tree_file(dir.file("bench/suite/inner_product.cu"), respaced);
  write_tree_file(dir.file("bench/step.cu"), programs[5]);
  write_tree_file(dir.file("bench/notes.txt"), programs[0]);  // not a benchmark file type: not read
  write_tree_file(dir.file("unrelated/bitonic.cu"), kUnrelated);

  ExportOptions options{"cuda2hip", "alpaca", dir.file("out"), policy};
  options.decontaminate = {dir.file("bench")};
  Result<ExportSummary> summary = export_dataset(db, options);
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  CHECK(summary->decontaminated == 3);
  CHECK(summary->samples == static_cast<int64_t>(programs.size()) - 3);

  nlohmann::json manifest = nlohmann::json::parse(read_whole_file(summary->manifest_path));
  const nlohmann::json& decontamination = manifest["decontamination"];
  CHECK(decontamination["benchmarks"] == nlohmann::json::array({dir.file("bench")}));
  CHECK(decontamination["files_read"] == 3);
  CHECK(decontamination["left_out_count"] == 3);
  std::map<std::string, nlohmann::json> left_out;
  for (const nlohmann::json& row : decontamination["left_out"]) left_out[row["id"].get<std::string>()] = row;
  REQUIRE(left_out.size() == 3);
  std::map<std::string, std::string> expected = {{ids[1], dir.file("bench/suite/renamed_transpose_test.cu")},
                                                 {ids[3], dir.file("bench/suite/inner_product.cu")},
                                                 {ids[5], dir.file("bench/step.cu")}};
  for (const auto& [id, benchmark] : expected) {
    REQUIRE(left_out.count(id) == 1);
    CHECK(left_out[id]["benchmark"] == benchmark);
    CHECK(left_out[id]["measure"] == (id == ids[3] ? "near_duplicate_masked" : "near_duplicate"));
    CHECK(left_out[id]["value"].get<double>() >= policy.dedup.threshold);
    CHECK(left_out[id]["side"] == "source");
  }
  std::set<std::string> exported = exported_ids(manifest);
  for (const auto& [id, benchmark] : expected) {
    CHECK(exported.count(id) == 0);
    CHECK(std::count(summary->train_ids.begin(), summary->train_ids.end(), id) == 0);
    CHECK(std::count(summary->eval_ids.begin(), summary->eval_ids.end(), id) == 0);
  }
  // Neither written split holds their text.
  for (const char* file : {"train.json", "eval.json"}) {
    std::string written = read_whole_file(dir.file(std::string("out/") + file));
    CHECK(written.find("__shfl_down_sync") == std::string::npos);
    CHECK(written.find("float gravity") == std::string::npos);
  }
  std::string card = read_whole_file(summary->card_path);
  CHECK(card.find("Left out: 3.") != std::string::npos);
  CHECK(card.find("renamed\\_transpose\\_test.cu") != std::string::npos);
  // The snapshot hash a retrain computes before exporting is the exported one.
  CHECK(export_snapshot_hash(db, options).value() == summary->snapshot_hash);

  ExportOptions unrelated{"cuda2hip", "alpaca", dir.file("out-unrelated"), policy};
  unrelated.decontaminate = {dir.file("unrelated")};
  Result<ExportSummary> clean = export_dataset(db, unrelated);
  REQUIRE_MESSAGE(clean.ok(), clean.message());
  CHECK(clean->decontaminated == 0);
  CHECK(clean->samples == static_cast<int64_t>(programs.size()));
  nlohmann::json clean_manifest = nlohmann::json::parse(read_whole_file(clean->manifest_path));
  CHECK(clean_manifest["decontamination"]["left_out_count"] == 0);
  CHECK(clean_manifest["decontamination"]["texts"] == 1);
}

TEST_CASE("a benchmark sharing a 50-token run with a stored program leaves it out; a shorter run does not") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  std::vector<std::string> ids;
  for (const std::string& program : varied_programs()) ids.push_back(store_verified_pair(db, program));

  // The histogram kernel's body (well over 50 tokens) inside a much larger unrelated file, and a
  // 40-token piece of the particle step inside another.
  const std::string& histogram = varied_programs()[2];
  std::string body =
      histogram.substr(histogram.find("__shared__"), histogram.find("int main") - histogram.find("__shared__"));
  std::string padding;
  for (int k = 0; k < 30; ++k)
    padding += "int unrelated_" + std::to_string(k) + "(int q) { return q * " + std::to_string(k) + " - 3; }\n";
  write_tree_file(
      dir.file("bench/big.cu"),
      padding + "__global__ void other(unsigned char* bytes, unsigned int* bins, size_t count) {\n" + body + padding);
  MinHashOptions run_tokens = policy.dedup;
  std::vector<std::string> tokens = normalized_tokens(varied_programs()[5], run_tokens);
  std::string piece;
  for (size_t t = 10; t < 50; ++t) piece += tokens[t] + " ";
  write_tree_file(dir.file("bench/short.cu"), padding + piece + "\n" + padding);

  Result<BenchmarkSet> benchmarks = read_benchmarks({dir.file("bench")}, policy.decontamination);
  REQUIRE_MESSAGE(benchmarks.ok(), benchmarks.message());
  BenchmarkIndex index(benchmarks->texts, policy.dedup, policy.decontamination);
  std::optional<BenchmarkMatch> match = index.match(histogram);
  REQUIRE(match.has_value());
  CHECK(match->benchmark == dir.file("bench/big.cu"));
  CHECK(match->measure == "shared_run");
  size_t body_tokens = normalized_tokens(body, run_tokens).size();
  MESSAGE("the shared run: " << match->value << " tokens, the body " << body_tokens);
  CHECK(match->value >= static_cast<double>(body_tokens) - 1);
  CHECK_FALSE(index.match(varied_programs()[5]).has_value());  // 40 tokens only
  CHECK_FALSE(index.match(varied_programs()[0]).has_value());

  ExportOptions options{"cuda2hip", "jsonl", dir.file("out"), policy};
  options.decontaminate = {dir.file("bench/big.cu"), dir.file("bench/short.cu")};
  Result<ExportSummary> summary = export_dataset(db, options);
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  CHECK(summary->decontaminated == 1);
  nlohmann::json left_out = nlohmann::json::parse(read_whole_file(summary->manifest_path))["decontamination"]["left_out"];
  REQUIRE(left_out.size() == 1);
  CHECK(left_out[0]["id"] == ids[2]);
  CHECK(left_out[0]["measure"] == "shared_run");
  CHECK(left_out[0]["value"].get<double>() >= 50);
}

TEST_CASE("assembly listings are compared as they are, never with their mnemonics and registers masked") {
  const char* ptx_scale = R"(.visible .entry scale(.param .u64 p0, .param .f32 p1) {
  .reg .b32 %r<4>; .reg .f32 %f<3>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p0]; ld.param.f32 %f1, [p1];
  mov.u32 %r1, %tid.x; cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r1, 4; add.s64 %rd2, %rd2, %rd3;
  ld.global.f32 %f2, [%rd2]; mul.f32 %f2, %f2, %f1; st.global.f32 [%rd2], %f2; ret;
})";
  const char* ptx_count = R"(.visible .entry count(.param .u64 q0, .param .u32 q1) {
  .reg .b32 %r<6>; .reg .b64 %rd<3>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [q0]; ld.param.u32 %r2, [q1];
  mov.u32 %r1, %ctaid.x; setp.ge.u32 %p1, %r1, %r2; @%p1 bra DONE; cvta.to.global.u64 %rd2, %rd1;
  atom.global.add.u32 %r3, [%rd2], 1; shl.b32 %r4, %r3, 2; DONE: ret;
})";
  CHECK_FALSE(is_c_family(ptx_scale));
  CHECK_FALSE(is_c_family("MOV R1, c[0x0][0x28] ;\nS2R R0, SR_TID.X ;\nEXIT ;\n"));
  CHECK_FALSE(is_c_family("f:\n  pushq %rbp\n  movq %rsp, %rbp\n  .long 7\n  ret\n"));
  CHECK(is_c_family(varied_programs()[0]));
  CHECK(is_c_family("int twice(int x) { return 2 * x; }"));

  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  BenchmarkIndex index({{"bench/scale.ptx", ptx_scale}}, policy.dedup, policy.decontamination);
  CHECK_FALSE(index.match(ptx_count).has_value());
  std::optional<BenchmarkMatch> same = index.match(std::string(ptx_scale) + "\n// dumped again\n");
  REQUIRE(same.has_value());
  CHECK(same->measure == "near_duplicate");
}

TEST_CASE("a JSONL benchmark is read record by record, each string a text named by file, line and key") {
  TempDir dir;
  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  std::vector<std::string> ids;
  for (const std::string& program : varied_programs()) ids.push_back(store_verified_pair(db, program));
  // A benchmark of HIP solutions holds the HIP translation of program 6.
  std::string hip = "#include <hip/hip_runtime.h>\n" + replace_all(varied_programs()[6], "cuda", "hip");
  std::ofstream jsonl(dir.file("bench.jsonl"));
  jsonl << nlohmann::json{{"task_id", "B/0"}, {"prompt", "Write a bitonic sort."}, {"solution", kUnrelated}}.dump()
        << "\n";
  jsonl << "\n{not json\n";
  jsonl << nlohmann::json{{"task_id", "B/1"}, {"meta", {{"reference", {{"hip", hip}}}}}}.dump() << "\n";
  jsonl.close();

  Result<BenchmarkSet> benchmarks = read_benchmarks({dir.file("bench.jsonl")}, policy.decontamination);
  REQUIRE_MESSAGE(benchmarks.ok(), benchmarks.message());
  CHECK(benchmarks->files == 1);
  CHECK(benchmarks->texts.size() == 5);
  REQUIRE(benchmarks->skipped.size() == 1);
  CHECK(benchmarks->skipped[0] == dir.file("bench.jsonl") + ": 1 line(s) not JSON");

  ExportOptions options{"cuda2hip", "sharegpt", dir.file("out"), policy};
  options.decontaminate = {dir.file("bench.jsonl")};
  Result<ExportSummary> summary = export_dataset(db, options);
  REQUIRE_MESSAGE(summary.ok(), summary.message());
  nlohmann::json left_out = nlohmann::json::parse(read_whole_file(summary->manifest_path))["decontamination"]["left_out"];
  REQUIRE(left_out.size() == 1);
  CHECK(left_out[0]["id"] == ids[6]);
  CHECK(left_out[0]["benchmark"] == dir.file("bench.jsonl") + ":4:meta.reference.hip");
}

TEST_CASE("a row whose target alone matches a benchmark is left out, named by its target side") {
  TempDir dir;
  SynthPolicy policy = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  const std::vector<std::string>& programs = varied_programs();
  std::vector<ExportRow> rows(3);
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].sample_id = "row" + std::to_string(i);
    rows[i].source = programs[i];
    rows[i].target = programs[i + 4];  // a pair whose two sides are unlike each other
  }
  write_tree_file(dir.file("bench/answer.cu"), programs[5]);  // the target of row1
  Result<Decontamination> result = decontaminate_rows(rows, {dir.file("bench")}, policy.dedup, policy.decontamination);
  REQUIRE_MESSAGE(result.ok(), result.message());
  REQUIRE(result->left_out.size() == 1);
  CHECK(result->left_out[0].sample_id == "row1");
  CHECK(result->left_out[0].side == "target");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].sample_id == "row0");
  CHECK(rows[1].sample_id == "row2");
  std::vector<ExportRow> untouched = rows;
  Result<Decontamination> none = decontaminate_rows(untouched, {}, policy.dedup, policy.decontamination);
  REQUIRE(none.ok());
  CHECK(untouched.size() == 2);
  CHECK(decontamination_json(*none, policy.dedup, policy.decontamination)["benchmarks"].empty());
}

TEST_CASE("a benchmark path that does not exist, or holds no benchmark text, is an error naming it") {
  TempDir dir;
  DecontaminationSettings settings;
  Result<BenchmarkSet> missing = read_benchmarks({dir.file("nowhere")}, settings);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.message().find(dir.file("nowhere")) != std::string::npos);
  write_tree_file(dir.file("docs/readme.md"), "# nothing to read\n");
  Result<BenchmarkSet> empty = read_benchmarks({dir.file("docs")}, settings);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.message().find("no benchmark text") != std::string::npos);

  // Files over decontamination.max_file_bytes and binary files are skipped, each named.
  settings.max_file_bytes = 400;
  write_tree_file(dir.file("mixed/small.cu"), "__global__ void k(int* p) { p[0] = 1; }\n");
  write_tree_file(dir.file("mixed/large.cu"), varied_programs()[7]);
  write_tree_file(dir.file("mixed/blob.s"), std::string("\x7f"
                                                        "ELF\0\0",
                                                        6));
  Result<BenchmarkSet> mixed = read_benchmarks({dir.file("mixed")}, settings);
  REQUIRE_MESSAGE(mixed.ok(), mixed.message());
  CHECK(mixed->files == 1);
  REQUIRE(mixed->texts.size() == 1);
  CHECK(mixed->texts[0].name == dir.file("mixed/small.cu"));
  REQUIRE(mixed->skipped.size() == 2);
  CHECK(mixed->skipped[0] == dir.file("mixed/blob.s") + ": binary (a NUL byte)");
  CHECK(mixed->skipped[1].rfind(dir.file("mixed/large.cu") + ": too large", 0) == 0);

  Database db = std::move(Database::open(dir.file("tailforge.db")).value());
  store_verified_pair(db, varied_programs()[0]);
  ExportOptions options{"cuda2hip", "alpaca", dir.file("out"), load_default_synth_policy(TAILFORGE_SOURCE_DIR).value()};
  options.decontaminate = {dir.file("nowhere")};
  Result<ExportSummary> summary = export_dataset(db, options);
  REQUIRE_FALSE(summary.ok());
  CHECK(summary.message().find("nowhere") != std::string::npos);
}

TEST_CASE("the synth policy's decontamination section is read and checked") {
  SynthPolicy shipped = load_default_synth_policy(TAILFORGE_SOURCE_DIR).value();
  CHECK(shipped.decontamination.run_tokens == 50);
  CHECK(shipped.decontamination.mask_identifiers);
  CHECK(std::count(shipped.decontamination.extensions.begin(), shipped.decontamination.extensions.end(), ".ptx") == 1);
  nlohmann::json root = nlohmann::json::parse(R"({"decontamination": {"run_tokens": 20, "mask_numbers": false,
      "extensions": [".cu"], "max_file_bytes": 1000}})");
  Result<SynthPolicy> policy = synth_policy_from_json(root, "p.json");
  REQUIRE_MESSAGE(policy.ok(), policy.message());
  CHECK(policy->decontamination.run_tokens == 20);
  CHECK_FALSE(policy->decontamination.mask_numbers);
  CHECK(policy->decontamination.extensions == std::vector<std::string>{".cu"});
  CHECK(policy->decontamination.max_file_bytes == 1000);
  Result<SynthPolicy> unknown =
      synth_policy_from_json(nlohmann::json::parse(R"({"decontamination": {"ngram": 5}})"), "p.json");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.message().find("decontamination.ngram") != std::string::npos);
  Result<SynthPolicy> zero =
      synth_policy_from_json(nlohmann::json::parse(R"({"decontamination": {"run_tokens": 0}})"), "p.json");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.message().find("decontamination.run_tokens") != std::string::npos);
}
