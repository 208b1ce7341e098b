// The sass2rdna3 track end to end without a GPU: per-kernel pairs of a real program stored as
// samples, a `command` model that answers half of them with the reference RDNA3 and half with a
// corrupted copy, `tailforge eval` judging every answer with llvm-mc and ld.lld, and the failure
// taxonomy of that model by assembler stage.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/sha256.h"
#include "daemon/verify/kernel_pairs_store.h"
#include "test_support/kernel_pairs_fixture.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"

namespace tailforge {
namespace {

// The three corruptions the CASS appendix shows models making, applied to a reference kernel.
std::string misalign_registers(const std::string& rdna3) {
  return std::regex_replace(rdna3, std::regex(R"(s\[0:1\])"), "s[1:2]", std::regex_constants::format_first_only);
}
std::string invent_instruction(const std::string& rdna3) {
  return std::regex_replace(rdna3, std::regex(R"(\ts_endpgm\n)"), "\ts_endpgm_wave32 0\n");
}
std::string drop_branch_label(const std::string& rdna3) {
  std::smatch branch;
  REQUIRE(std::regex_search(rdna3, branch, std::regex(R"(s_cbranch_\w+ (\.LBB\d+_\d+))")));
  std::string label = std::string(branch[1]) + ":\n";
  std::string out = rdna3;
  out.erase(out.find(label), label.size());
  return out;
}

TEST_CASE("a command model's RDNA3 answers are assembled: half right is 50% and each corruption has its category") {
  TempDir dir;
  FixturePairs fixture = fixture_kernel_pairs(dir.file("pairs"));
  if (!fixture_ready(fixture)) return;
  REQUIRE(fixture.pairing.pairs.size() == 6);
  std::string db_path = dir.file("t.db");
  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    Result<Taxonomy> taxonomy = load_taxonomy(data_path("policies/taxonomy.json"));
    REQUIRE(taxonomy.ok());
    Sample program{.track = "cuda2hip", .origin = "template", .language = "cuda",
                   .text = read_test_data("sass2rdna3/kernels.cu"), .status = "verified"};
    Result<InsertOutcome> parent = insert_sample_if_absent(*db, program);
    REQUIRE(parent.ok());
    program.id = parent->id;
    Result<StoredDerivedSamples> stored = store_kernel_pairs(*db, program, fixture.pairing, *taxonomy, "test-host");
    REQUIRE_MESSAGE(stored.ok(), stored.message());
    CHECK(stored->inserted == 6);
    CHECK(stored->verified == 6);
  }

  // The model: the SASS on stdin, the answer looked up by the SASS's hash.
  std::string answers = dir.file("answers");
  std::filesystem::create_directories(answers);
  std::map<std::string, std::string> expected_category;  // kernel -> category ("" = correct)
  const std::vector<std::pair<std::string, std::string>> corruptions = {
      {"_Z9scale_addifPKfPf", "amd.asm.register_alignment"},
      {"_Z4bluriPKfPf", "amd.asm.invalid_instruction"},
      {"_Z8weightediPKfPf", "amd.asm.undefined_label"}};
  for (const KernelPair& pair : fixture.pairing.pairs) {
    std::string answer = pair.rdna3;
    expected_category[pair.kernel] = "";
    for (const auto& [kernel, category] : corruptions) {
      if (kernel != pair.kernel) continue;
      expected_category[kernel] = category;
      if (category == "amd.asm.register_alignment") answer = misalign_registers(answer);
      if (category == "amd.asm.invalid_instruction") answer = invent_instruction(answer);
      if (category == "amd.asm.undefined_label") answer = drop_branch_label(answer);
      REQUIRE(answer != pair.rdna3);
    }
    std::ofstream(answers + "/" + sha256_hex(normalize_program_text(pair.sass)) + ".s") << answer;
  }
  std::string config = dir.file("config.json");
  std::ofstream(config) << R"({"eval": {"fraction": 1.0}})";
  ProcessResult added = run_tailforge({"model", "add", "--no-check", "--db", db_path, "--name", "asm-half", "--kind", "command",
                                       "--track", "sass2rdna3", "--", "sh", "-c",
                                       "cat DIR/$(sha256sum | cut -c1-64).s"});
  // The command's DIR is filled in here, so the argv above stays readable.
  REQUIRE_MESSAGE(added.exit_code == 0, added.stderr_text);
  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    Statement& update = db->cached("UPDATE model SET parameters = replace(parameters, 'DIR', ?1)");
    update.bind(1, answers);
    REQUIRE(update.run().ok());
  }
  ProcessResult evaluated = run_tailforge({"eval", "--db", db_path, "--config", config, "--model", "asm-half", "--json"}, 300);
  REQUIRE_MESSAGE(evaluated.exit_code == 0, evaluated.stderr_text);

  ProcessResult models = run_tailforge({"models", "--db", db_path, "--track", "sass2rdna3", "--json"});
  REQUIRE(models.exit_code == 0);
  nlohmann::json listed = nlohmann::json::parse(models.stdout_text);
  CAPTURE(models.stdout_text);
  REQUIRE(listed["models"].size() == 1);
  CHECK(listed["models"][0]["track"] == "sass2rdna3");
  CHECK(listed["models"][0]["evaluation"]["accuracy"].get<double>() == doctest::Approx(0.5));
  CHECK(listed["models"][0]["evaluation"]["items"] == 6);

  {
    Result<Database> db = Database::open(db_path);
    REQUIRE(db.ok());
    Statement& rows = db->cached(
        "SELECT json_extract(s.variables, '$.kernel'), e.ok, coalesce(e.category, ''), coalesce(e.stage, '')"
        " FROM evaluation e JOIN sample s ON s.id = e.sample_id");
    int seen = 0;
    while (rows.step()) {
      ++seen;
      std::string kernel = rows.text(0);
      CAPTURE(kernel);
      CHECK(rows.int64(1) == (expected_category[kernel].empty() ? 1 : 0));
      CHECK(rows.text(2) == expected_category[kernel]);
      if (!expected_category[kernel].empty()) CHECK(rows.text(3) == "amd.assemble.gfx1100");
    }
    CHECK(seen == 6);
  }

  // "Which assembler errors does this model make most?"
  ProcessResult taxonomy =
      run_tailforge({"taxonomy", "--db", db_path, "--model", "asm-half", "--stage", "amd.assemble", "--json"});
  REQUIRE_MESSAGE(taxonomy.exit_code == 0, taxonomy.stderr_text);
  for (const auto& [kernel, category] : corruptions) CHECK(taxonomy.stdout_text.find(category) != std::string::npos);

}

}  // namespace
}  // namespace tailforge
