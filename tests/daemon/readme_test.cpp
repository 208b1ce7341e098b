// The README's "First steps" block, run as written: each line in order, in a fresh folder, with
// ./build/tailforge standing for the binary under test. What the README offers a newcomer first
// must work right after the build, without a GPU or a database.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <fstream>
#include <sstream>

#include "base/process.h"
#include "test_support/temp_dir.h"

using namespace tailforge;

namespace {

// The lines of the first ```sh block after the heading `heading`.
std::vector<std::string> shell_block_after(const std::string& readme, const std::string& heading) {
  std::vector<std::string> lines;
  std::istringstream in(readme);
  std::string line;
  bool after_heading = false, in_block = false;
  while (std::getline(in, line)) {
    if (!after_heading) {
      after_heading = line == heading;
    } else if (!in_block) {
      if (line.rfind("## ", 0) == 0) break;
      in_block = line == "```sh";
    } else {
      if (line == "```") break;
      if (!line.empty()) lines.push_back(line);
    }
  }
  return lines;
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

TEST_CASE("the README's first steps run as written in an empty folder, without a GPU or a database") {
  std::ifstream file(std::string(TAILFORGE_SOURCE_DIR) + "/README.md");
  std::stringstream readme;
  readme << file.rdbuf();
  std::vector<std::string> steps = shell_block_after(readme.str(), "## First steps");
  REQUIRE(steps.size() >= 4);
  TempDir dir;
  std::filesystem::create_directories(dir.file("home"));
  std::filesystem::create_directories(dir.file("tmp"));
  for (const std::string& step : steps) {
    CAPTURE(step);
    REQUIRE(step.rfind("./build/tailforge ", 0) == 0);  // every line is a tailforge command
    ProcessSpec spec;
    spec.argv = {"/bin/sh", "-c", replace_all(step, "./build/tailforge", TAILFORGE_BINARY)};
    spec.cwd = dir.path();
    spec.extra_env = {{"HOME", dir.file("home")}, {"TMPDIR", dir.file("tmp")}};
    spec.timeout_seconds = 300;
    ProcessResult result = run_process(spec);
    CAPTURE(result.stdout_text.substr(0, 4000));
    CAPTURE(result.stderr_text.substr(0, 4000));
    // doctor exits 1 only for what this machine lacks, and then names it on a FAIL line; a
    // generated program verifies (exit 0) with whatever stages can run here, none failing.
    if (step.find(" doctor") != std::string::npos && result.exit_code == 1) {
      CHECK(result.stdout_text.find("FAIL  ") != std::string::npos);
      CHECK(result.stdout_text.find("cannot run the cuda2hip track here: fix the FAIL lines") != std::string::npos);
    } else {
      CHECK(result.exit_code == 0);
    }
    CHECK_FALSE(result.stdout_text.empty());
    if (step.find(" translate ") != std::string::npos) {
      CHECK(result.stdout_text.find("hip") != std::string::npos);
    }
    if (step.find(" verify ") != std::string::npos) CHECK(result.stdout_text.find("nvidia.") != std::string::npos);
  }
  // generate wrote programs into the folder, where the later lines found them.
  bool generated = false;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path())) {
    generated = generated || entry.path().extension() == ".cu";
  }
  CHECK(generated);
}

TEST_CASE("every docs/ page the README links to exists, and every docs/ page is linked from the README") {
  std::ifstream file(std::string(TAILFORGE_SOURCE_DIR) + "/README.md");
  std::stringstream readme;
  readme << file.rdbuf();
  std::string text = readme.str();
  std::set<std::string> linked;
  for (size_t at = text.find("](docs/"); at != std::string::npos; at = text.find("](docs/", at + 1)) {
    size_t end = text.find_first_of(")#", at + 2);
    REQUIRE(end != std::string::npos);
    linked.insert(text.substr(at + 2, end - at - 2));
  }
  CHECK(linked.size() >= 5);
  for (const std::string& page : linked) {
    CAPTURE(page);
    CHECK(std::filesystem::exists(std::string(TAILFORGE_SOURCE_DIR) + "/" + page));
  }
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TAILFORGE_SOURCE_DIR) + "/docs")) {
    std::string page = "docs/" + entry.path().filename().string();
    CAPTURE(page);
    CHECK(linked.count(page) == 1);
  }
}

namespace {

// The paths `ninja -t inputs <target>` lists for the README's build folder, each made relative to
// the source or build folder it lies in ("tests/daemon/cli_test.cpp", "bench/CMakeFiles/...").
std::vector<std::string> build_inputs(const std::string& target, const std::string& build_dir = TAILFORGE_BUILD_DIR) {
  ProcessSpec spec;
  spec.argv = {"ninja", "-C", build_dir, "-t", "inputs", target};
  spec.timeout_seconds = 60;
  ProcessResult listed = run_process(spec);
  REQUIRE_MESSAGE(listed.succeeded(), listed.stderr_text);
  std::vector<std::string> inputs;
  std::istringstream lines(listed.stdout_text);
  for (std::string line; std::getline(lines, line);) {
    // The build folder first: the README's lies inside the source folder.
    for (const std::string& root : {build_dir + "/", std::string(TAILFORGE_SOURCE_DIR) + "/"}) {
      if (line.rfind(root, 0) == 0) {
        line = line.substr(root.size());
        break;
      }
    }
    inputs.push_back(line);
  }
  return inputs;
}

int count_under(const std::vector<std::string>& inputs, const std::string& folder) {
  return static_cast<int>(std::count_if(inputs.begin(), inputs.end(),
                                        [&](const std::string& path) { return path.rfind(folder, 0) == 0; }));
}

}  // namespace

TEST_CASE("README command 1 builds the binary and no test or bench; command 2 builds the tests and no bench") {
  std::ifstream file(std::string(TAILFORGE_SOURCE_DIR) + "/README.md");
  std::stringstream readme;
  readme << file.rdbuf();
  std::istringstream lines(readme.str());
  std::string line;
  std::vector<std::string> commands;
  while (std::getline(lines, line) && commands.size() < 2) {
    if (line.rfind("./scripts/setup.sh && ", 0) == 0) commands.push_back(line);
  }
  REQUIRE(commands.size() == 2);
  CHECK(commands[0].find(" && cmake --build build --target tailforge && ./build/tailforge daemon --demo") !=
        std::string::npos);
  CHECK(commands[1].find(" && cmake --build build --target tailforge_tests && ctest ") != std::string::npos);
  REQUIRE_MESSAGE(std::filesystem::exists(std::string(TAILFORGE_BUILD_DIR) + "/build.ninja"),
                  "the README's build folder is made with -G Ninja");

  std::vector<std::string> binary = build_inputs("tailforge");
  CHECK(count_under(binary, "daemon/") > 0);  // the listing is real: the binary's own sources are in it
  CHECK(count_under(binary, "tests/") == 0);
  CHECK(count_under(binary, "bench/") == 0);
  std::vector<std::string> tests = build_inputs("tailforge_tests");
  CHECK(count_under(tests, "tests/daemon/") > 0);
  CHECK(count_under(tests, "tests/fuzz/") > 0);
  CHECK(count_under(tests, "bench/") == 0);
}

TEST_CASE("the libraries compile in unity batches by default, file by file with TAILFORGE_UNITY_BUILD=OFF") {
  // The README's build folder: the daemon library's sources reach the binary through unity files.
  std::vector<std::string> unity = build_inputs("tailforge");
  auto listed = [](const std::vector<std::string>& inputs, const std::string& path) {
    return std::find(inputs.begin(), inputs.end(), path) != inputs.end();
  };
  CHECK(listed(unity, "daemon/CMakeFiles/tf_daemon.dir/Unity/unity_0_cxx.cxx"));
  CHECK_FALSE(listed(unity, "daemon/daemon.cpp"));

  // The same sources configured with the option off: each file is its own input.
  TempDir dir;
  ProcessSpec configure;
  configure.argv = {"cmake", "-S", TAILFORGE_SOURCE_DIR, "-B", dir.path(), "-G", "Ninja", "-DTAILFORGE_UNITY_BUILD=OFF"};
  configure.timeout_seconds = 120;
  ProcessResult configured = run_process(configure);
  REQUIRE_MESSAGE(configured.succeeded(), configured.stdout_text << configured.stderr_text);
  std::vector<std::string> by_file = build_inputs("tailforge", dir.path());
  CHECK(listed(by_file, "daemon/daemon.cpp"));
  CHECK(std::none_of(by_file.begin(), by_file.end(),
                     [](const std::string& path) { return path.find("/Unity/") != std::string::npos; }));
}
