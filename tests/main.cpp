// The test executables' main: doctest's, plus the record of skipped cases (test_support/skip.h).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "test_support/skip.h"

namespace tailforge::testing {
namespace {

struct SkippedCase {
  std::string test_case;
  Missing what;
  std::string reason;
};

std::vector<SkippedCase>& skipped_cases() {
  static std::vector<SkippedCase> cases;
  return cases;
}

const char* current_test_case = "";

const char* missing_name(Missing what) {
  switch (what) {
    case Missing::gpu: return "gpu";
    case Missing::cuda_toolkit: return "cuda_toolkit";
    case Missing::pytorch: return "pytorch";
    case Missing::host_feature: return "host_feature";
    case Missing::shared_checkout: return "shared_checkout";
    case Missing::setup_tool: return "setup_tool";
  }
  return "?";
}

// Tabs and newlines would break the log's one record per line.
std::string one_field(std::string text) {
  std::replace_if(text.begin(), text.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return text;
}

// Follows which case runs, so a skip can name it.
struct CaseTracker : doctest::IReporter {
  explicit CaseTracker(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData& data) override { current_test_case = data.m_name; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

void skip(Missing what, const std::string& reason) {
  // A subcase re-entry runs the case's start again; one case counts once per reason.
  for (const SkippedCase& done : skipped_cases()) {
    if (done.test_case == current_test_case && done.reason == reason) return;
  }
  skipped_cases().push_back({current_test_case, what, reason});
  if (what == Missing::setup_tool && on_ci()) {
    FAIL_CHECK("CI=true and this case would skip for a tool scripts/setup.sh installs: " << reason);
    return;
  }
  MESSAGE("skipped: " << reason);
}

}  // namespace tailforge::testing

REGISTER_LISTENER("skipped_cases", 1, tailforge::testing::CaseTracker);

int main(int argc, char** argv) {
  using tailforge::testing::skipped_cases;
  // Open the log first: a run that crashes halfway leaves an empty log, not the last run's.
  const char* log_path = std::getenv("TAILFORGE_SKIP_LOG");
  std::ofstream log;
  if (log_path != nullptr && *log_path != '\0') log.open(log_path, std::ios::trunc);

  doctest::Context context(argc, argv);
  int status = context.run();
  if (context.shouldExit()) return status;

  if (!skipped_cases().empty()) {
    std::printf("%zu test case(s) skipped:\n", skipped_cases().size());
    for (const auto& skipped : skipped_cases()) {
      std::printf("  %s: %s [%s]\n", skipped.test_case.c_str(), skipped.reason.c_str(),
                  tailforge::testing::missing_name(skipped.what));
    }
  }
  for (const auto& skipped : skipped_cases()) {
    log << tailforge::testing::one_field(skipped.test_case) << '\t' << tailforge::testing::missing_name(skipped.what)
        << '\t' << tailforge::testing::one_field(skipped.reason) << '\n';
  }
  return status;
}
