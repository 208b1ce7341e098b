// The c2x86 track in the store and the loop, with real gcc, the real sandbox and a real SQLite
// file: a generated C function verified and stored with its oracle assembly, the symbolic form
// and the IO cases the gcc build recorded; a model's assembly judged from the store alone (the
// oracle's symbolic form passes; a wrong float bit, an off-by-one constant, an unreadable literal
// and a jump table each fail with their own category); and a 3-cycle daemon run with a model
// under test whose failures become tails, synthesized samples, an export with IO tests; and
// ExeBench records imported as samples the verify job checks against the records' outputs.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agents/c2x86/c_generator.h"
#include "agents/c2x86/c_samples.h"
#include "base/files.h"
#include "base/process.h"
#include "daemon/verify/c2x86_jobs.h"
#include "daemon/verify/stage_records.h"
#include "store/evaluations.h"
#include "synth/evaluate.h"
#include "test_support/exebench_fixture.h"
#include "test_support/query.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/c2x86/float_constants.h"
#include "verifier/c2x86/io_tests.h"
#include "verifier/sandbox.h"
#include "verifier/stage_category.h"

namespace tailforge {
namespace {

// gcc and the sandbox, which setup.sh installs: missing, the case is skipped; a sandbox that is
// installed but fails fails it.
bool skipped_without_tools() { return !(testing::tools_here({"gcc"}) && testing::sandbox_here()); }

const Taxonomy& taxonomy() {
  static const Taxonomy loaded = load_taxonomy(data_path("policies/taxonomy.json")).value();
  return loaded;
}

// A function of `kind`, verified as the daemon's verify job does and stored with its results.
Sample stored_function(Database& db, const std::string& kind, uint64_t seed) {
  CFunction function = generate_c_function({.seed = seed, .index = 0, .kind = kind}).value();
  Sample sample = c2x86_sample(function, kind, "template", std::nullopt);
  sample.id = insert_sample_if_absent(db, sample).value().id;
  VerifierOptions verifier;
  C2x86Verification verified = verify_c2x86_sample(sample, {verifier, detected_toolchains(), &db, nullptr});
  REQUIRE_MESSAGE(verified.not_run.empty(), verified.not_run);
  for (const StageResult& stage : verified.stages) CAPTURE(stage.name + " " + stage.status + " " + stage.reason);
  REQUIRE(verified.verified);
  StageAgent agent = [](const StageResult&) { return std::optional<std::string>("test"); };
  REQUIRE(store_stage_results(db, sample, verified.stages, taxonomy(), agent, "test-host").ok());
  REQUIRE(set_sample_status(db, sample.id, "verified").ok());
  sample.status = "verified";
  return sample;
}

std::string artifact_of(Database& db, const std::string& sample_id, const std::string& kind) {
  std::optional<std::string> id = sample_artifact_id(db, sample_id, "", kind).value();
  REQUIRE_MESSAGE(id.has_value(), "sample has no " << kind << " artifact");
  return artifact_text(db, *id).value().value_or("");
}

// Answers every question with the text it was given for that question.
class FixedAnswers : public ModelUnderTest {
 public:
  std::map<std::string, std::string> answers;  // question -> answer
  ModelAnswer answer(Database&, const std::string& source) override {
    ModelAnswer out;
    auto found = answers.find(source);
    out.ok = found != answers.end();
    if (out.ok) out.output = found->second;
    return out;
  }
};

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "'" << from << "' not in:\n" << text);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("c2x86 samples: verified with the oracle, its symbolic form and the recorded IO cases stored") {
  if (skipped_without_tools()) return;
  TempDir dir;
  Database db = Database::open(dir.file("c2x86.db")).value();
  Sample blend = stored_function(db, "float_blend", 11);
  Sample dispatch = stored_function(db, "switch_dispatch", 11);

  std::string oracle = artifact_of(db, blend.id, "x86_asm");
  std::string symbolic = artifact_of(db, blend.id, "x86_asm_symbolic");
  CHECK(symbolic.find(".float_literal") != std::string::npos);
  CHECK(interpret_float_constants(symbolic).value() == oracle);
  // A switch without float constants has a symbolic form equal to gcc's: the same stored text,
  // found under both kinds.
  CHECK(artifact_of(db, dispatch.id, "x86_asm_symbolic") == artifact_of(db, dispatch.id, "x86_asm"));
  CHECK(artifact_of(db, dispatch.id, "x86_asm").find(".L") != std::string::npos);

  std::vector<IoCase> cases = io_cases_from_json(artifact_of(db, blend.id, kIoCasesArtifact)).value();
  REQUIRE(cases.size() == 8);
  for (const IoCase& io : cases) CHECK_FALSE(io.expected.empty());
  Sample read = find_sample(db, blend.id).value().value();
  CFunction function = c_function_of(read).value();
  CHECK(read.text.find(function.name + "(") != std::string::npos);
  CHECK(function.driver.find("int main(void)") != std::string::npos);
  CHECK(function.function == read.text);
  CHECK(function.cases.size() == 8);
  CHECK(read.domain == "float_blend");
  CHECK(std::count(read.features.begin(), read.features.end(), "float") == 1);
}

TEST_CASE("c2x86 evaluation: the oracle passes; a wrong float bit, an off-by-one constant, a bad literal and a jump table fail") {
  if (skipped_without_tools()) return;
  TempDir dir;
  Database db = Database::open(dir.file("c2x86.db")).value();
  Sample blend = stored_function(db, "float_blend", 11);
  Sample mix = stored_function(db, "arithmetic_mix", 11);
  Sample dispatch = stored_function(db, "switch_dispatch", 11);
  std::string blend_symbolic = artifact_of(db, blend.id, "x86_asm_symbolic");
  std::string mix_oracle = artifact_of(db, mix.id, "x86_asm");

  // The largest float literal's top mantissa bit flipped: still a valid literal, another number.
  std::string largest;
  uint32_t bits = 0;
  const std::regex float_line(R"(\.float_literal\t(\S+))");
  for (std::sregex_iterator it(blend_symbolic.begin(), blend_symbolic.end(), float_line), end; it != end; ++it) {
    uint32_t candidate = parse_float_literal((*it)[1]).value();
    float value, best;
    std::memcpy(&value, &candidate, 4);
    std::memcpy(&best, &bits, 4);
    if (largest.empty() || std::fabs(value) > std::fabs(best)) largest = (*it)[1], bits = candidate;
  }
  REQUIRE_FALSE(largest.empty());
  std::string wrong_bit = replaced(blend_symbolic, ".float_literal\t" + largest + "\n",
                                   ".float_literal\t" + float_literal(bits ^ (1u << 22)) + "\n");
  // The first multiplier one too large: x * 27 instead of x * 26.
  std::smatch multiply;
  REQUIRE(std::regex_search(mix_oracle, multiply, std::regex(R"(imull\t\$(\d+),)")));
  std::string off_by_one = replaced(mix_oracle, multiply[0].str(),
                                    "imull\t$" + std::to_string(std::stoi(multiply[1]) + 1) + ",");
  std::string bad_literal = replaced(blend_symbolic, ".float_literal\t" + largest + "\n", ".float_literal\t1.5q\n");
  // gcc -O0 without -fno-jump-tables: the switch becomes a table of code addresses.
  std::ofstream(dir.file("dispatch.c")) << dispatch.text;
  ProcessResult gcc = run_process(
      {.argv = {"gcc", "-O0", "-S", dir.file("dispatch.c"), "-o", dir.file("dispatch.s")}, .timeout_seconds = 60});
  REQUIRE(gcc.succeeded());
  std::ifstream table_file(dir.file("dispatch.s"));
  std::string with_table((std::istreambuf_iterator<char>(table_file)), std::istreambuf_iterator<char>());

  struct Case {
    const Sample* item;
    std::string answer;
    bool ok;
    std::string category;
  };
  std::vector<std::pair<std::string, Case>> cases = {
      {"oracle symbolic form", {&blend, blend_symbolic, true, ""}},
      {"gcc's own words", {&mix, mix_oracle, true, ""}},
      {"wrong float bit", {&blend, wrong_bit, false, "c2x86.io_mismatch"}},
      {"off-by-one constant", {&mix, off_by_one, false, "c2x86.io_mismatch"}},
      {"unreadable literal", {&blend, bad_literal, false, "c2x86.float_constant"}},
      {"jump table", {&dispatch, with_table, false, "c2x86.jump_table"}},
  };
  EvaluationSetup setup;
  setup.taxonomy = &taxonomy();
  setup.work_dir = dir.file("work");
  ModelRecord record;
  record.id = 1;
  record.name = "fixed";
  record.track = "c2x86";
  for (const auto& [what, c] : cases) {
    CAPTURE(what);
    FixedAnswers model;
    model.answers[c.item->text] = c.answer;
    EvalItem item{"c2x86", c.item->id, 1, std::nullopt, std::nullopt, 0};
    Result<JudgedAnswer> judged = evaluate_item(db, model, record, item, setup);
    REQUIRE_MESSAGE(judged.ok(), judged.message());
    const EvaluationRecord& e = judged->evaluation;
    CAPTURE(e.message.value_or(""));
    CHECK(e.ok == c.ok);
    CHECK(e.category.value_or("") == c.category);
    if (c.ok) CHECK(e.checked == "run");
    if (what == "wrong float bit") CHECK(e.message.value_or("").find("expected") != std::string::npos);
  }
}

TEST_CASE("c2x86 daemon: 3 cycles with a model under test: evaluation, tails, synthesis and an export with IO tests" *
          doctest::test_suite("long")) {
  if (skipped_without_tools()) return;
  TempDir dir;
  std::string db_path = dir.file("c2x86.db");
  // The model under test compiles with gcc -O1: right outputs, but its switches are jump tables.
  ProcessResult added = run_tailforge({"model", "add", "--db", db_path, "--name", "gcc-o1", "--kind", "command",
                                       "--track", "c2x86", "--command", "gcc -O1 -S -x c - -o -"});
  REQUIRE_MESSAGE(added.exit_code == 0, added.stderr_text);
  std::string config = dir.file("c2x86.json");
  std::ofstream(config) << R"({"daemon": {"samples_per_cycle": 12},
    "synth": {"policy_file": "policies/synth_policy_c2x86.json", "multiplier": 3, "top_k": 2},
    "eval": {"fraction": 0.5}, "retrain": {"track": "c2x86", "command": []}})";
  ProcessResult ran =
      run_tailforge({"daemon", "--db", db_path, "--config", config, "--cycles", "3", "--no-progress"}, 480);
  CAPTURE(ran.stderr_text.substr(ran.stderr_text.size() > 4000 ? ran.stderr_text.size() - 4000 : 0));
  REQUIRE(ran.exit_code == 0);

  Database db = Database::open(db_path).value();
  CHECK(query_int(db, "SELECT count(*) FROM cycle WHERE state = 'done'") == 3);
  CHECK(query_int(db, "SELECT count(*) FROM sample WHERE track <> 'c2x86'") == 0);
  int64_t verified = query_int(db, "SELECT count(*) FROM sample WHERE status = 'verified'");
  CHECK(verified >= 30);
  // The model's switches fail as jump tables, and those items are the switch functions.
  CHECK(query_int(db, "SELECT count(*) FROM evaluation WHERE ok = 1") > 0);
  CHECK(query_int(db, "SELECT count(*) FROM evaluation WHERE category = 'c2x86.jump_table'") > 0);
  CHECK(query_int(db, "SELECT count(*) FROM evaluation e JOIN sample s ON s.id = e.sample_id"
                      " WHERE e.category = 'c2x86.jump_table' AND s.domain <> 'switch_dispatch'") == 0);
  // ... which makes switch a model-failure tail, synthesized up with switch functions.
  CHECK(query_int(db, "SELECT count(*) FROM tail_report WHERE signal = 'model_failure' AND"
                      " ((dimension = 'feature' AND name = 'switch') OR (dimension = 'category' AND name = 'c2x86.jump_table')"
                      "  OR (dimension = 'domain' AND name = 'switch_dispatch'))") > 0);
  int64_t synthesized_switch = query_int(
      db, "SELECT count(*) FROM sample s JOIN lineage l ON l.child_id = s.id AND l.relation = 'synthesized_from'"
          " WHERE s.origin = 'synthesized' AND s.status = 'verified' AND s.domain = 'switch_dispatch'");
  CHECK(synthesized_switch > 0);

  ProcessResult tails = run_tailforge({"tails", "--db", db_path, "--config", config, "--track", "c2x86", "--json"});
  REQUIRE_MESSAGE(tails.exit_code == 0, tails.stderr_text);
  nlohmann::json listed = nlohmann::json::parse(tails.stdout_text);
  CHECK(listed["distribution"]["verified_total"] == verified);
  std::map<std::string, int64_t> shares;
  for (const nlohmann::json& feature : listed["distribution"]["features"])
    shares[feature["name"].get<std::string>()] = feature["verified"].get<int64_t>();
  CHECK(shares.count("switch") == 1);
  CHECK(shares["switch"] == query_int(db, "SELECT count(*) FROM sample s JOIN sample_feature f ON f.sample_id = s.id"
                                          " WHERE s.status = 'verified' AND f.tag = 'switch'"));

  ProcessResult taxonomy_of_model = run_tailforge({"taxonomy", "--db", db_path, "--model", "gcc-o1"});
  REQUIRE(taxonomy_of_model.exit_code == 0);
  CHECK(taxonomy_of_model.stdout_text.find("jump_table") != std::string::npos);

  std::string out = dir.file("export");
  ProcessResult exported = run_tailforge({"export", "--db", db_path, "--config", config, "--track", "c2x86", "--out", out});
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.stderr_text);
  nlohmann::json manifest = nlohmann::json::parse(std::ifstream(out + "/manifest.json"));
  int64_t samples = manifest["counts"]["samples"].get<int64_t>();
  CHECK(samples > 0);
  CHECK(manifest["counts"]["io_tests"] == samples);
  const nlohmann::json& first = manifest["samples"][0];
  nlohmann::json tests = nlohmann::json::parse(std::ifstream(out + "/" + first["io_tests"].get<std::string>()));
  CHECK(tests["driver"].get<std::string>().find("main") != std::string::npos);
  REQUIRE(tests["cases"].size() == 8);
  CHECK_FALSE(tests["cases"][0]["expected"].get<std::string>().empty());
  nlohmann::json train = nlohmann::json::parse(std::ifstream(out + "/train.json"));
  bool symbolic_float = false;
  for (const nlohmann::json& row : train) {
    symbolic_float = symbolic_float || row["output"].get<std::string>().find(".float_literal") != std::string::npos;
  }
  CHECK(symbolic_float == (shares["float"] > 0));
}

TEST_CASE("c2x86 import --format exebench: records become samples with verify jobs, checked against their outputs" *
          doctest::test_suite("long")) {
  TempDir dir;
  std::string db_path = dir.file("c2x86.db");
  std::string file = dir.file("records.jsonl");
  {
    nlohmann::json wrong = exebench_record("13");
    wrong["func_def"] = "// a copy whose first expected total is wrong\n" + wrong["func_def"].get<std::string>();
    std::ofstream out(file);
    out << exebench_record("12").dump() << "\n" << wrong.dump() << "\n{\"fname\": \"f\"}\nnot json\n";
  }
  ProcessResult imported = run_tailforge({"import", "--db", db_path, "--format", "exebench", file});
  CAPTURE(imported.stdout_text);
  REQUIRE_MESSAGE(imported.exit_code == 0, imported.stderr_text);
  CHECK(imported.stdout_text.find("4 records, 2 new c2x86 samples, 0 already stored, 2 skipped") != std::string::npos);
  CHECK(imported.stdout_text.find("line 3: func_def: missing") != std::string::npos);
  CHECK(imported.stdout_text.find("line 4: not JSON") != std::string::npos);
  ProcessResult again = run_tailforge({"import", "--db", db_path, "--format", "exebench", file});
  CHECK(again.stdout_text.find("0 new c2x86 samples, 2 already stored") != std::string::npos);

  Database db = Database::open(db_path).value();
  CHECK(query_int(db, "SELECT count(*) FROM job WHERE kind = 'verify' AND state = 'pending'") == 2);
  CHECK(query_int(db, "SELECT count(*) FROM sample WHERE track = 'c2x86' AND origin = 'imported' AND domain = 'exebench'"
                      " AND json_extract(variables, '$.driver_language') = 'c++'") == 2);
  if (skipped_without_tools()) return;
  std::map<std::string, bool> verified;  // expected total of case 1 -> verified
  std::istringstream ids(query_text(db, "SELECT id FROM sample ORDER BY id"));
  for (std::string id; std::getline(ids, id);) {
    Sample sample = find_sample(db, id).value().value();
    VerifierOptions verifier;
    C2x86Verification result = verify_c2x86_sample(sample, {verifier, detected_toolchains(), &db, nullptr});
    REQUIRE(result.not_run.empty());
    std::string first = c_function_of(sample).value().cases[0].expected;
    verified[first.substr(0, first.find(','))] = result.verified;
    StageAgent agent = [](const StageResult&) { return std::optional<std::string>("test"); };
    REQUIRE(store_stage_results(db, sample, result.stages, taxonomy(), agent, "").ok());
    REQUIRE(set_sample_status(db, sample.id, result.verified ? "verified" : "failed").ok());
    if (!result.verified) {
      const StageResult& io = result.stages.back();
      CHECK(io.name == "c2x86.io");
      CHECK(categorize_stage(taxonomy(), io, sample.features).category == "c2x86.io_mismatch");
    }
  }
  CHECK(verified == std::map<std::string, bool>{{"{\"returnv\":12", true}, {"{\"returnv\":13", false}});

  // The export's IO tests of the verified record build its C++ driver with the oracle assembly
  // by the build line they carry, and the program prints each case's recorded output.
  std::string out = dir.file("export");
  ProcessResult exported = run_tailforge({"export", "--db", db_path, "--track", "c2x86", "--out", out});
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.stderr_text);
  nlohmann::json manifest = nlohmann::json::parse(std::ifstream(out + "/manifest.json"));
  REQUIRE(manifest["counts"]["io_tests"] == 1);
  const nlohmann::json& row = manifest["samples"][0];
  nlohmann::json tests = nlohmann::json::parse(std::ifstream(out + "/" + row["io_tests"].get<std::string>()));
  CHECK(tests["driver_file"] == "driver.cpp");
  std::string build = tests["build"].get<std::string>();
  CHECK(build.find("-x c++") != std::string::npos);
  CHECK(build.find("-lstdc++") != std::string::npos);
  std::string work = dir.file("harness");
  std::filesystem::create_directories(work);
  std::ofstream(work + "/" + tests["driver_file"].get<std::string>()) << tests["driver"].get<std::string>();
  std::ofstream(work + "/function.s") << artifact_of(db, row["id"].get<std::string>(), "x86_asm");
  ProcessSpec compile;
  compile.argv = {"/bin/sh", "-c", build};
  compile.cwd = work;
  compile.timeout_seconds = 60;
  ProcessResult built = run_process(compile);
  REQUIRE_MESSAGE(built.succeeded(), build << "\n" << built.stderr_text);
  REQUIRE(!tests["cases"].empty());
  for (const nlohmann::json& io : tests["cases"]) {
    ProcessSpec run;
    run.argv = {work + "/program"};
    run.cwd = work;  // the ExeBench harness passes its case through input.json and output.json
    run.stdin_text = io["input"].get<std::string>();
    run.timeout_seconds = 10;
    ProcessResult printed = run_process(run);
    CHECK(io_outputs_match(io["expected"].get<std::string>(), printed.stdout_text));
  }
}

}  // namespace tailforge
