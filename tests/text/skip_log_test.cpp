// The record of skipped cases (test_support/skip.h, tests/main.cpp, tests/skip_report.cpp), run
// end to end: this executable runs one of its own cases again as a child that skips, and the test
// reads the log the child wrote, its exit status and the report. It lives in the smallest test
// executable; what it checks is shared by all of them.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_support/skip.h"

namespace {

namespace fs = std::filesystem;

const char* const kInnerCase = "skip log: the inner case";

std::string read_all(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Child {
  int exit_code = -1;
  std::string output;
};

// This executable's inner case, run with the given environment; output is stdout and stderr.
Child run_inner(const fs::path& dir, const std::string& missing, const std::string& ci) {
  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  REQUIRE(length > 0);
  self[length] = '\0';
  fs::path out = dir / "out.txt";
  std::string command = "TAILFORGE_SKIP_SELF_TEST='" + missing + "' TAILFORGE_SKIP_LOG='" + (dir / "inner.tsv").string() +
                        "' CI='" + ci + "' '" + self + "' --test-case='" + kInnerCase + "' > '" + out.string() +
                        "' 2>&1";
  int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  return {WEXITSTATUS(status), read_all(out)};
}

Child run_report(const fs::path& dir, const std::string& ci) {
  fs::path out = dir / "report.txt";
  std::string command = "CI='" + ci + "' '" TAILFORGE_BUILD_DIR "/tests/skip_report' '" + dir.string() +
                        "' inner absent > '" + out.string() + "' 2>&1";
  int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  return {WEXITSTATUS(status), read_all(out)};
}

}  // namespace

TEST_CASE("skip log: the inner case") {
  // Only as the child of the case below; in a normal run it checks nothing and skips nothing.
  const char* missing = std::getenv("TAILFORGE_SKIP_SELF_TEST");
  if (missing == nullptr) return;
  using tailforge::testing::Missing;
  tailforge::testing::skip(std::string(missing) == "setup_tool" ? Missing::setup_tool : Missing::gpu,
                           "a reason\twith a tab");
}

TEST_CASE("skip log: a skip is logged and reported with what was missing; on CI a skip for a setup.sh tool fails") {
  fs::path dir = fs::temp_directory_path() / ("tf-skip-log-" + std::to_string(getpid()));
  fs::create_directories(dir);

  // A GPU skip, on CI: allowed, logged, printed at the end, counted by the report.
  Child gpu = run_inner(dir, "gpu", "true");
  CAPTURE(gpu.output);
  CHECK(gpu.exit_code == 0);
  CHECK(gpu.output.find("skipped: a reason\twith a tab") != std::string::npos);
  CHECK(gpu.output.find("1 test case(s) skipped:\n  skip log: the inner case: a reason\twith a tab [gpu]\n") !=
        std::string::npos);
  CHECK(read_all(dir / "inner.tsv") == "skip log: the inner case\tgpu\ta reason with a tab\n");
  Child report = run_report(dir, "true");
  CAPTURE(report.output);
  CHECK(report.exit_code == 0);
  CHECK(report.output ==
        "skips: 1 skipped (gpu 1)\n"
        "  inner: skip log: the inner case: a reason with a tab [gpu]\n"
        "  (absent wrote no log: not run)\n");

  // A skip for a tool setup.sh installs: off CI a skip like any other, on CI a failed case.
  Child local = run_inner(dir, "setup_tool", "false");
  CAPTURE(local.output);
  CHECK(local.exit_code == 0);
  CHECK(read_all(dir / "inner.tsv") == "skip log: the inner case\tsetup_tool\ta reason with a tab\n");
  CHECK(run_report(dir, "false").exit_code == 0);
  Child ci = run_inner(dir, "setup_tool", "true");
  CAPTURE(ci.output);
  CHECK(ci.exit_code != 0);
  CHECK(ci.output.find("CI=true and this case would skip for a tool scripts/setup.sh installs: a reason") !=
        std::string::npos);
  Child ci_report = run_report(dir, "true");
  CAPTURE(ci_report.output);
  CHECK(ci_report.exit_code == 1);
  CHECK(ci_report.output.find("skips: 1 skipped (setup_tool 1)\n") == 0);
  CHECK(ci_report.output.find("CI=true: 1 case(s) skipped for a tool scripts/setup.sh installs\n") !=
        std::string::npos);

  // A run with no skip leaves an empty log, not the last run's.
  std::ofstream(dir / "inner.tsv") << "stale\tgpu\tfrom before\n";
  std::string command = "TAILFORGE_SKIP_LOG='" + (dir / "inner.tsv").string() + "' '" +
                        fs::read_symlink("/proc/self/exe").string() + "' --test-case='" + kInnerCase + "' > /dev/null";
  CHECK(std::system(command.c_str()) == 0);
  CHECK(read_all(dir / "inner.tsv").empty());
  fs::remove_all(dir);
}
