// The assembler messages of LLVM's own gfx11 error tests (tests/data/sass2rdna3, messages only)
// fall into named amd.asm.* categories: what a model's RDNA3 can get wrong is never silently
// "uncategorized".
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "policies/categorizer.h"

namespace tailforge {
namespace {

struct CountedMessage {
  int64_t count = 0;
  std::string message;
};

std::vector<CountedMessage> llvm_gfx11_messages() {
  std::ifstream in(std::string(TAILFORGE_TEST_DATA) + "/sass2rdna3/llvm_gfx11_asm_errors.tsv");
  REQUIRE(in);
  std::vector<CountedMessage> messages;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t tab = line.find('\t');
    REQUIRE(tab != std::string::npos);
    messages.push_back({std::stoll(line.substr(0, tab)), line.substr(tab + 1)});
  }
  return messages;
}

TEST_CASE("LLVM's gfx11 assembler error messages are categorized: at most 5% uncategorized") {
  Result<Taxonomy> taxonomy = load_taxonomy(std::string(TAILFORGE_SOURCE_DIR) + "/policies/taxonomy.json");
  REQUIRE_MESSAGE(taxonomy.ok(), taxonomy.message());
  std::vector<CountedMessage> messages = llvm_gfx11_messages();
  REQUIRE(messages.size() >= 40);
  int64_t total = 0, uncategorized = 0;
  std::map<std::string, int64_t> by_category;
  for (const CountedMessage& message : messages) {
    // As llvm-mc prints it for a model's answer: location, message, the line and a caret.
    FailureEvidence evidence{.stage = "amd.assemble.gfx1100",
                             .diagnostics = "/tmp/eval/answer.s:12:3: error: " + message.message +
                                            "\n v_add_f32 v1, v2, v3\n ^\n",
                             .exit_code = 1};
    Categorization category = categorize(*taxonomy, evidence);
    CHECK_MESSAGE(category.category.rfind("amd.asm.", 0) == 0, message.message, " -> ", category.category);
    total += message.count;
    by_category[category.category] += message.count;
    if (category.category.find("uncategorized") != std::string::npos) {
      uncategorized += message.count;
      MESSAGE("uncategorized: ", message.message);
    }
  }
  for (const auto& [category, count] : by_category) MESSAGE(category, ": ", count);
  CHECK(total >= 2000);
  CHECK(static_cast<double>(uncategorized) <= 0.05 * static_cast<double>(total));
  CHECK(by_category["amd.asm.invalid_instruction"] >= 600);
  CHECK(by_category["amd.asm.vgpr_bank"] >= 20);
  CHECK(by_category["amd.asm.literal_limit"] >= 11);
}

}  // namespace
}  // namespace tailforge
