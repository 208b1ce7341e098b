#include "policies/categorizer.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "test_support/temp_dir.h"

namespace tailforge {
namespace {

const Taxonomy& shipped_taxonomy() {
  static const Taxonomy taxonomy = [] {
    Result<Taxonomy> loaded = load_taxonomy(std::string(TAILFORGE_SOURCE_DIR) + "/policies/taxonomy.json");
    REQUIRE_MESSAGE(loaded.ok(), loaded.message());
    return std::move(loaded.value());
  }();
  return taxonomy;
}

struct CapturedDiagnostic {
  std::string file;
  std::string name;
  FailureEvidence evidence;
  std::string expected;
};

std::vector<CapturedDiagnostic> captured_diagnostics() {
  std::vector<CapturedDiagnostic> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TAILFORGE_TEST_DATA) + "/diagnostics")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    nlohmann::json j = nlohmann::json::parse(in);
    CapturedDiagnostic d;
    d.file = entry.path().filename().string();
    d.name = j.value("name", "");
    d.evidence.stage = j.at("stage").get<std::string>();
    d.evidence.diagnostics = j.at("diagnostics").get<std::string>();
    if (j["exit_code"].is_number()) d.evidence.exit_code = j["exit_code"].get<int>();
    if (j["signal"].is_number()) d.evidence.signal = j["signal"].get<int>();
    d.evidence.timed_out = j.value("timed_out", false);
    d.expected = j.at("expected_category").get<std::string>();
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

TEST_CASE("every captured real diagnostic lands in its expected category, none uncategorized") {
  std::vector<CapturedDiagnostic> all = captured_diagnostics();
  CHECK(all.size() >= 40);
  for (const CapturedDiagnostic& d : all) {
    Categorization c = categorize(shipped_taxonomy(), d.evidence);
    INFO(d.file << " (" << d.name << "): " << d.evidence.diagnostics);
    CHECK(c.category == d.expected);
    CHECK(c.category.find("uncategorized") == std::string::npos);
    CHECK_FALSE(c.message_line.empty());
  }
}

TEST_CASE("the six CASS appendix assembly failures land in the six named categories") {
  std::map<std::string, std::string> expected = {
      {"register_alignment", "amd.asm.register_alignment"}, {"vgpr_bank", "amd.asm.vgpr_bank"},
      {"hallucinated_instruction", "amd.asm.invalid_instruction"}, {"two_literals", "amd.asm.literal_limit"},
      {"undefined_label", "amd.asm.undefined_label"}, {"imm64", "amd.asm.operand_type"}};
  int found = 0;
  for (const CapturedDiagnostic& d : captured_diagnostics()) {
    auto it = expected.find(d.name);
    if (it == expected.end()) continue;
    ++found;
    INFO(d.name);
    CHECK(d.evidence.stage == "amd.assemble.gfx1100");
    Categorization c = categorize(shipped_taxonomy(), d.evidence);
    CHECK(c.category == it->second);
    CHECK(c.evidence_line == 1);  // llvm-mc names file:line of the offending instruction
    CHECK(c.evidence_file.has_value());
  }
  CHECK(found == 6);
}

TEST_CASE("an unmatched failure lands in <stage>.uncategorized with its first error line") {
  FailureEvidence e;
  e.stage = "amd.assemble.gfx1100";
  e.diagnostics = "some noise\nk.s:7:3: error: a message no rule knows about\n";
  e.exit_code = 1;
  Categorization c = categorize(shipped_taxonomy(), e);
  CHECK(c.category == "amd.assemble.gfx1100.uncategorized");
  CHECK(c.message_line == "k.s:7:3: error: a message no rule knows about");
  CHECK(c.evidence_file == "k.s");
  CHECK(c.evidence_line == 7);
}

TEST_CASE("normalized messages of the same problem are equal") {
  std::string a = normalize_message("/tmp/x1/a.s:12:5: error: undefined label 'loop_7'");
  std::string b = normalize_message("/tmp/y22/b.s:3:1: error: undefined label 'done'");
  CHECK(a == b);
  CHECK(a.find("undefined label") != std::string::npos);
  CHECK(normalize_message("uses too much shared data (0x3a980 bytes, 0xc000 max)") ==
        "uses too much shared data (<hex> bytes, <hex> max)");
  CHECK(normalize_message("io test 3 failed: f(2) expected 5, got 4") == "io test <n> failed: f(<n>) expected <n>, got <n>");
  CHECK(normalize_message("x") != normalize_message("y"));
}

TEST_CASE("agent failures are categorized by their reason and by their message") {
  FailureEvidence e;
  e.stage = "agent.translate";
  e.reason = "rate_limited";
  CHECK(categorize(shipped_taxonomy(), e).category == "agent.llm.rate_limited");
  e.reason = "circuit_open";
  CHECK(categorize(shipped_taxonomy(), e).category == "agent.llm.circuit_open");
  e.reason = "";
  e.diagnostics = "POST /v1/chat/completions: HTTP 503 Service Unavailable";
  CHECK(categorize(shipped_taxonomy(), e).category == "agent.llm.server_error");
  e.diagnostics = "";
  e.timed_out = true;
  CHECK(categorize(shipped_taxonomy(), e).category == "agent.llm.timeout");
}

TEST_CASE("a translation the LLM translator could not make keeps its agent.llm category") {
  FailureEvidence e;
  e.stage = "translate.hip";
  e.reason = "agent.llm.server_error";
  e.diagnostics = "agent.llm.server_error: after 4 attempt(s): POST http://h:8000/v1/chat/completions: HTTP 500";
  CHECK(categorize(shipped_taxonomy(), e).category == "agent.llm.server_error");
  e.reason = "agent.llm.no_code_block";
  e.diagnostics = "unsupported: everything";  // the reason decides, not what the endpoint wrote
  CHECK(categorize(shipped_taxonomy(), e).category == "agent.llm.no_code_block");
  e.reason = "translate.unsupported.inline_ptx";
  e.diagnostics = "line 3: inline PTX has no HIP equivalent (translate.unsupported.inline_ptx)";
  CHECK(categorize(shipped_taxonomy(), e).category == "translate.unsupported.inline_ptx");
}

TEST_CASE("CUDA errors are named from the cudaError name or from the message") {
  FailureEvidence e;
  e.stage = "nvidia.run";
  e.exit_code = 1;
  e.diagnostics = "CUDA error: out of memory (cudaErrorMemoryAllocation) at k.cu:40";
  Categorization c = categorize(shipped_taxonomy(), e);
  CHECK(c.category == "run.cuda_error.out_of_memory");
  CHECK(c.evidence_file == "k.cu");
  CHECK(c.evidence_line == 40);
  e.diagnostics = "GPUassert: an illegal memory access was encountered main.cu 31";
  CHECK(categorize(shipped_taxonomy(), e).category == "run.cuda_error.illegal_address");
  e.diagnostics = "hip error: hipErrorInvalidConfiguration";
  CHECK(categorize(shipped_taxonomy(), e).category == "run.cuda_error.invalid_configuration");
}

TEST_CASE("signals, features and timeouts decide when there is no message") {
  FailureEvidence e;
  e.stage = "nvidia.run";
  e.signal = 7;
  Categorization c = categorize(shipped_taxonomy(), e);
  CHECK(c.category == "run.crash.sigbus");
  CHECK(c.message_line == "killed by signal 7 (sigbus)");
  e.signal = 24;
  CHECK(categorize(shipped_taxonomy(), e).category == "sandbox.cpu_limit");
  e.signal.reset();
  e.timed_out = true;
  CHECK(categorize(shipped_taxonomy(), e).category == "run.timeout");

  FailureEvidence ptx;
  ptx.stage = "amd.assemble.gfx1100";
  ptx.diagnostics = "k.s:3:1: error: a message no rule knows about";
  CHECK(categorize(shipped_taxonomy(), ptx).category == "amd.assemble.gfx1100.uncategorized");
  ptx.features = {"inline_ptx"};
  CHECK(categorize(shipped_taxonomy(), ptx).category == "translate.unsupported.inline_ptx");

  FailureEvidence translator;
  translator.stage = "translate.hip";
  translator.diagnostics = "line 12: translate.unsupported.texture: texture<float, 2> has no HIP equivalent here";
  CHECK(categorize(shipped_taxonomy(), translator).category == "translate.unsupported.texture");
}

TEST_CASE("a category added to the file is used without a recompile, first matching rule wins") {
  TempDir dir;
  std::ofstream(dir.file("t.json")) << R"({"categories": [
    {"path": "amd.asm.my_new_case", "description": "new", "rules": [{"stage": "amd.assemble.*", "regex": "frobnicate"}]},
    {"path": "amd.asm.generic", "description": "later", "rules": [{"stage": "amd.assemble.*", "regex": "error"}]}]})";
  Result<Taxonomy> taxonomy = load_taxonomy(dir.file("t.json"));
  REQUIRE_MESSAGE(taxonomy.ok(), taxonomy.message());
  FailureEvidence e;
  e.stage = "amd.assemble.gfx90a";
  e.diagnostics = "x.s:1:1: error: cannot frobnicate";
  CHECK(categorize(*taxonomy, e).category == "amd.asm.my_new_case");
  e.stage = "nvidia.ptx";
  CHECK(categorize(*taxonomy, e).category == "nvidia.ptx.uncategorized");
  CHECK(taxonomy->descriptions.at("amd.asm.my_new_case") == "new");
  CHECK(taxonomy->descriptions.count("amd") == 1);
}

TEST_CASE("a broken taxonomy file is refused with the file and the JSON path") {
  TempDir dir;
  std::ofstream(dir.file("bad.json")) << R"({"categories": [
    {"path": "a.b", "rules": [{"regex": "ok"}]},
    {"path": "a.c", "rules": [{"regex": "(unclosed"}]}]})";
  Result<Taxonomy> bad = load_taxonomy(dir.file("bad.json"));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.message().find("bad.json") != std::string::npos);
  CHECK(bad.message().find("categories[1].rules[0].regex") != std::string::npos);

  std::ofstream(dir.file("typo.json")) << R"({"categories": [{"path": "a.b", "rules": [{"regx": "ok"}]}]})";
  Result<Taxonomy> typo = load_taxonomy(dir.file("typo.json"));
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.message().find("regx") != std::string::npos);
  CHECK_FALSE(load_taxonomy(dir.file("missing.json")).ok());
}

TEST_CASE("categorization time grows linearly with the diagnostics, not faster") {
  // No fixed rate: how many a second a busy machine manages says nothing about the code. What
  // the code must not do is get slower per byte as the text grows (a backtracking regex, a rescan
  // per line). So the same captured diagnostics are categorized at two lengths in this run, each
  // text repeated to about 2 KiB and to eight times that, and the longer must take at most
  // kRatio times as long: 8 for linear work, with room for caches, allocation and a noisy machine;
  // quadratic work would take 64 times as long. The two are timed in alternation and the fastest of
  // several rounds of each is compared, so a burst of load on the machine hits both or neither.
  constexpr double kRatio = 8 * 4;
  constexpr size_t kBaseBytes = 2048;
  std::vector<CapturedDiagnostic> all = captured_diagnostics();
  REQUIRE(!all.empty());
  std::vector<FailureEvidence> base, longer;
  for (const CapturedDiagnostic& d : all) {
    size_t copies = d.evidence.diagnostics.empty() ? 1 : (kBaseBytes + d.evidence.diagnostics.size() - 1) /
                                                             d.evidence.diagnostics.size();
    FailureEvidence evidence = d.evidence;
    evidence.diagnostics.clear();
    for (size_t i = 0; i < copies; ++i) evidence.diagnostics += d.evidence.diagnostics + "\n";
    base.push_back(evidence);
    std::string eight;
    for (int i = 0; i < 8; ++i) eight += evidence.diagnostics;
    evidence.diagnostics = eight;
    longer.push_back(std::move(evidence));
  }

  using Clock = std::chrono::steady_clock;
  size_t done = 0;
  size_t uncategorized = 0;  // checked after the timing, so that the check's own cost is not timed
  auto pass = [&](const std::vector<FailureEvidence>& inputs, int repeats) {
    auto start = Clock::now();
    for (int r = 0; r < repeats; ++r) {
      for (const FailureEvidence& evidence : inputs) {
        Categorization c = categorize(shipped_taxonomy(), evidence);
        uncategorized += c.category.empty();
        ++done;
      }
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  pass(base, 1);  // warm-up: the taxonomy loads, the allocator and caches settle
  pass(longer, 1);
  // Enough repeats that one timing of the short texts lasts ~20 ms, well above the clock's grain.
  double once = std::max(pass(base, 1), 1e-6);
  int repeats = static_cast<int>(std::clamp(0.02 / once, 1.0, 1000.0));
  double shortest_base = 1e9, shortest_longer = 1e9;
  for (int round = 0; round < 5; ++round) {
    shortest_base = std::min(shortest_base, pass(base, repeats));
    shortest_longer = std::min(shortest_longer, pass(longer, repeats));
  }
  double ratio = shortest_longer / shortest_base;
  MESSAGE("categorized " << done << "; " << repeats * base.size() << " texts of ~2 KiB in " << shortest_base
                         << " s, eight times as long in " << shortest_longer << " s: " << ratio << " times as long ("
                         << repeats * base.size() / shortest_base << " a second at ~2 KiB)");
  CHECK(uncategorized == 0);
  CHECK(ratio <= kRatio);
}

}  // namespace tailforge
