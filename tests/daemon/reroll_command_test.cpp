#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/files.h"
#include "test_support/run_tailforge.h"
#include "test_support/temp_dir.h"
#include "verifier/ptx2cuda/reroll.h"
#include "verifier/stage_runner.h"

using namespace tailforge;

namespace {

const std::string nested_ptx = std::string(TAILFORGE_TEST_DATA) + "/ptx2cuda/nested_loops.ptx";

}  // namespace

TEST_CASE("tailforge reroll prints Rolled-PTX, its figures as JSON, and --unroll gives the PTX back") {
  TempDir dir;
  ProcessResult rolled = run_tailforge({"reroll", nested_ptx});
  REQUIRE_MESSAGE(rolled.exit_code == 0, rolled.stderr_text);
  CHECK(rolled.stdout_text.find("for.size.") != std::string::npos);

  ProcessResult json = run_tailforge({"reroll", nested_ptx, "--json"});
  REQUIRE(json.exit_code == 0);
  nlohmann::json body = nlohmann::json::parse(json.stdout_text);
  CHECK(body["text"] == rolled.stdout_text);
  CHECK(body["chars_out"] == rolled.stdout_text.size());
  CHECK(body["chars_in"] == normalize_ptx(read_text_file_or_empty(nested_ptx)).size());
  CHECK(body["loops"].get<int>() >= 2);
  CHECK(body["reduction"].get<double>() > 0.4);

  write_tree_file(dir.file("nested.rolled"), rolled.stdout_text);
  ProcessResult unrolled = run_tailforge({"reroll", "--unroll", dir.file("nested.rolled")});
  REQUIRE_MESSAGE(unrolled.exit_code == 0, unrolled.stderr_text);
  CHECK(unrolled.stdout_text == normalize_ptx(read_text_file_or_empty(nested_ptx)));
}

TEST_CASE("tailforge reroll names the file and line of malformed Rolled-PTX and exits 1; bad usage exits 2") {
  TempDir dir;
  write_tree_file(dir.file("bad.rolled"), "ret;\nfor.size.2 i in range(0, 4):\nret;\n");
  ProcessResult bad = run_tailforge({"reroll", "--unroll", dir.file("bad.rolled")});
  CHECK(bad.exit_code == 1);
  CHECK(bad.stderr_text.rfind("tailforge: " + dir.file("bad.rolled") + ": line 2: malformed loop header", 0) == 0);
  CHECK(run_tailforge({"reroll"}).exit_code == 2);
  CHECK(run_tailforge({"reroll", "a.ptx", "b.ptx"}).exit_code == 2);
  CHECK(run_tailforge({"reroll", dir.file("missing.ptx")}).exit_code == 1);
}
