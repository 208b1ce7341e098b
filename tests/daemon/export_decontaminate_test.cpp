// `tailforge export --decontaminate PATH ...` from the command line: the benchmark paths (repeated
// flag) leave their matches out, and every export says what it left out, its leakage figure and
// where its card is.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "store/database.h"
#include "test_support/read_whole_file.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "test_support/varied_programs.h"

using namespace tailforge;

namespace {


}  // namespace

TEST_CASE("export --decontaminate takes several benchmark paths and leaves their matches out") {
  TempDir dir;
  std::vector<std::string> ids;
  {
    Database db = std::move(Database::open(dir.file("tailforge.db")).value());
    for (const std::string& program : varied_programs()) ids.push_back(store_verified_pair(db, program));
  }
  write_tree_file(dir.file("suite-a/k.cu"), varied_programs()[0]);
  std::ofstream(dir.file("suite-b.jsonl")) << nlohmann::json{{"code", varied_programs()[7]}}.dump() << "\n";

  ProcessResult exported =
      run_tailforge({"export", "--db", dir.file("tailforge.db"), "--out", dir.file("out"), "--decontaminate",
                     dir.file("suite-a"), "--decontaminate=" + dir.file("suite-b.jsonl")});
  REQUIRE_MESSAGE(exported.exit_code == 0, exported.stdout_text << exported.stderr_text);
  CHECK(exported.stdout_text.find("decontamination: 2 samples left out") != std::string::npos);
  CHECK(exported.stdout_text.find("leakage: eval rows with a near-duplicate in train: 0") != std::string::npos);
  CHECK(exported.stdout_text.find("dataset card: " + dir.file("out") + "/README.md") != std::string::npos);
  nlohmann::json manifest = nlohmann::json::parse(read_whole_file(dir.file("out/manifest.json")));
  CHECK(manifest["decontamination"]["benchmarks"] ==
        nlohmann::json::array({dir.file("suite-a"), dir.file("suite-b.jsonl")}));
  std::set<std::string> left_out;
  for (const nlohmann::json& row : manifest["decontamination"]["left_out"])
    left_out.insert(row["id"].get<std::string>());
  CHECK(left_out == std::set<std::string>{ids[0], ids[7]});
  CHECK(read_whole_file(dir.file("out/README.md")).find("suite-b.jsonl:1:code") != std::string::npos);

  ProcessResult plain = run_tailforge({"export", "--db", dir.file("tailforge.db"), "--out", dir.file("plain")});
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.stdout_text.find("decontamination:") == std::string::npos);
  CHECK(plain.stdout_text.find("leakage: ") != std::string::npos);

  ProcessResult missing = run_tailforge({"export", "--db", dir.file("tailforge.db"), "--out", dir.file("x"),
                                         "--decontaminate", dir.file("no-such-suite")});
  CHECK(missing.exit_code == 1);
  CHECK(missing.stderr_text.find("no-such-suite") != std::string::npos);
}
