// skip_report: sums up the test cases a run skipped, from the logs the test executables write
// (test_support/skip.h). `skip_report DIR ENTRY...` reads DIR/ENTRY.tsv for each ctest entry and
// prints `skips: N skipped`, then each case with its entry, reason and what was missing. The
// `skips` ctest entry runs it after the others and reads as Skipped when N > 0; .ci/run runs it
// to show the reasons. Exit status 1 where CI=true and a case skipped for a tool scripts/setup.sh
// installs (the case itself has failed already; this says so once more at the end).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "test_support/skip.h"

namespace {

struct Skip {
  std::string entry, test_case, missing, reason;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: skip_report DIR ENTRY...\n");
    return 2;
  }
  std::string dir = argv[1];
  std::vector<Skip> skips;
  std::vector<std::string> not_run;
  for (int i = 2; i < argc; ++i) {
    std::ifstream log(dir + "/" + argv[i] + ".tsv");
    if (!log) {
      not_run.push_back(argv[i]);
      continue;
    }
    std::string line;
    while (std::getline(log, line)) {
      size_t first = line.find('\t');
      size_t second = first == std::string::npos ? std::string::npos : line.find('\t', first + 1);
      if (second == std::string::npos) continue;
      skips.push_back({argv[i], line.substr(0, first), line.substr(first + 1, second - first - 1), line.substr(second + 1)});
    }
  }
  std::map<std::string, int> by_missing;
  for (const Skip& skip : skips) ++by_missing[skip.missing];
  std::printf("skips: %zu skipped", skips.size());
  const char* separator = " (";
  for (const auto& [missing, count] : by_missing) {
    std::printf("%s%s %d", separator, missing.c_str(), count);
    separator = ", ";
  }
  std::printf("%s\n", skips.empty() ? "" : ")");
  for (const Skip& skip : skips) {
    std::printf("  %s: %s: %s [%s]\n", skip.entry.c_str(), skip.test_case.c_str(), skip.reason.c_str(),
                skip.missing.c_str());
  }
  for (const std::string& entry : not_run) std::printf("  (%s wrote no log: not run)\n", entry.c_str());
  if (tailforge::testing::on_ci() && by_missing.count("setup_tool") > 0) {
    std::printf("CI=true: %d case(s) skipped for a tool scripts/setup.sh installs\n", by_missing["setup_tool"]);
    return 1;
  }
  return 0;
}
