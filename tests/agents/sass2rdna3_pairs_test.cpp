#include <doctest/doctest.h>

#include <sstream>

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "test_support/kernel_pairs_fixture.h"
#include "test_support/temp_dir.h"
#include "verifier/sass2rdna3/kernel_split.h"
#include "verifier/sass2rdna3/normalize.h"

namespace tailforge {
namespace {

const std::set<std::string> kKernels = {"_Z9scale_addifPKfPf", "_Z4bluriPKfPf", "_Z8weightediPKfPf",
                                        "_Z9block_sumiPKfPf", "_Z6squareIfEviPT_", "_Z6squareIiEviPT_"};

// REG:N of `cuobjdump -res-usage` per arch and function.
std::map<std::string, int64_t> registers_allocated() {
  std::map<std::string, int64_t> allocated;
  std::istringstream in(read_test_data("sass2rdna3/res_usage.txt"));
  std::string line, arch, function;
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_search(line, match, std::regex(R"(arch = (sm_\d+))"))) arch = match[1];
    if (std::regex_search(line, match, std::regex(R"(Function (\S+):)"))) function = match[1];
    if (std::regex_search(line, match, std::regex(R"(REG:(\d+))"))) allocated[arch + "/" + function] = std::stoll(match[1]);
  }
  return allocated;
}

TEST_CASE("cuobjdump SASS splits into one function per kernel and sm target") {
  std::vector<SassFunction> functions =
      split_sass_functions_by_arch(read_test_data("sass2rdna3/kernels.cuobjdump.sass"), "sm_80");
  REQUIRE(functions.size() == 12);
  std::map<std::string, std::set<std::string>> by_arch;
  for (const SassFunction& function : functions) {
    by_arch[function.arch].insert(function.name);
    CHECK(function.text.find("Function") == std::string::npos);
    CHECK(function.text.find("EXIT") != std::string::npos);
  }
  CHECK(by_arch["sm_80"] == kKernels);
  CHECK(by_arch["sm_90"] == kKernels);
}

TEST_CASE("cuobjdump SASS of each cubin, one after another, splits by their 'code for' lines") {
  // The executable's dump without its fatbin headers is what `cuobjdump -sass` prints for each
  // cubin, one after another (the verifier dumps each target's cubin).
  std::string executable_dump = read_test_data("sass2rdna3/kernels.cuobjdump.sass");
  std::string cubin_dumps;
  std::istringstream lines(executable_dump);
  for (std::string line; std::getline(lines, line);) {
    bool header = line.rfind("Fatbin ", 0) == 0 || line.rfind("=====", 0) == 0 || line.rfind("arch = ", 0) == 0 ||
                  line.rfind("code version", 0) == 0 || line.rfind("host = ", 0) == 0 || line.rfind("compile_size", 0) == 0;
    if (!header) cubin_dumps += line + "\n";
  }
  std::vector<SassFunction> from_cubins = split_sass_functions_by_arch(cubin_dumps, "sm_75");
  std::vector<SassFunction> from_executable = split_sass_functions_by_arch(executable_dump, "sm_75");
  REQUIRE(from_cubins.size() == from_executable.size());
  for (size_t i = 0; i < from_cubins.size(); ++i) {
    CHECK(from_cubins[i].arch == from_executable[i].arch);
    CHECK(from_cubins[i].name == from_executable[i].name);
    CHECK(from_cubins[i].text == from_executable[i].text);
  }
  CHECK(from_cubins.back().arch == "sm_90");
}

TEST_CASE("nvdisasm SASS splits by its .text sections, under the arch given") {
  std::vector<SassFunction> functions =
      split_sass_functions_by_arch(read_test_data("sass2rdna3/kernels.nvdisasm.sass"), "sm_90");
  REQUIRE(functions.size() == 2);
  CHECK(functions[0].arch == "sm_90");
  CHECK(kKernels.count(functions[0].name) == 1);
  CHECK(kKernels.count(functions[1].name) == 1);
}

TEST_CASE("normalized SASS has no addresses, encodings or blank lines, and branch targets become labels") {
  std::vector<SassFunction> functions =
      split_sass_functions_by_arch(read_test_data("sass2rdna3/kernels.cuobjdump.sass"), "sm_80");
  std::map<std::string, int64_t> allocated = registers_allocated();
  for (const SassFunction& function : functions) {
    CAPTURE(function.name);
    std::string normalized = normalize_sass(function.text);
    CHECK(normalized.find("/*") == std::string::npos);
    CHECK(normalized.find("\n\n") == std::string::npos);
    CHECK(normalized.find("  ") == std::string::npos);
    CHECK(normalized.find(".headerflags") == std::string::npos);
    // Every instruction of the raw text survives, one per line.
    int64_t raw_instructions = 0;
    std::istringstream raw(function.text);
    std::string line;
    while (std::getline(raw, line)) raw_instructions += std::regex_search(line, std::regex(R"(^\s*/\*[0-9a-f]{4}\*/)"));
    AssemblyStats stats = sass_stats(normalized);
    CHECK(stats.instructions == raw_instructions);
    CHECK(stats.unparsed.empty());
    // Registers named are within what ptxas allocated.
    CHECK(stats.registers > 0);
    CHECK(stats.registers <= allocated.at(function.arch + "/" + function.name));
    // No branch names an address any more.
    CHECK_FALSE(std::regex_search(normalized, std::regex(R"(\b(BRA|BSSY|CALL[.\w]*)\s+[^;]*0x[0-9a-f]+;)")));
  }
  std::string block_sum;
  for (const SassFunction& function : functions) {
    if (function.arch == "sm_80" && function.name == "_Z9block_sumiPKfPf") block_sum = normalize_sass(function.text);
  }
  // The loop: a conditional branch forward and one back, to labels that exist.
  std::smatch match;
  REQUIRE(std::regex_search(block_sum, match, std::regex(R"(@!P1 BRA `\((\.L_x_\d+)\);)")));
  CHECK(block_sum.find("\n" + std::string(match[1]) + ":\n") != std::string::npos);
  CHECK(block_sum.rfind("IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28];\n", 0) == 0);
}

TEST_CASE("per-kernel RDNA3 files assemble alone, carry what they reference, and pair with SASS by name") {
  TempDir dir;
  FixturePairs fixture = fixture_kernel_pairs(dir.path());
  if (!fixture_ready(fixture)) return;
  const KernelPairing& pairing = fixture.pairing;
  CHECK(pairing.none_reason.empty());
  CHECK(pairing.unmatched.empty());
  REQUIRE(pairing.pairs.size() == 6);
  std::set<std::string> names;
  for (const KernelPair& pair : pairing.pairs) {
    CAPTURE(pair.kernel);
    names.insert(pair.kernel);
    CHECK(pair.sass_arch == "sm_80");
    CHECK(pair.sass_raw.size() == 2);
    // One kernel: its descriptor and its own metadata entry only.
    CHECK(pair.rdna3.find(".amdhsa_kernel " + pair.kernel) != std::string::npos);
    CHECK(std::regex_search(pair.rdna3, std::regex("\\.symbol:\\s+" + pair.kernel + "\\.kd")));
    CHECK(pair.rdna3.find("\t.globl " + pair.kernel + "\n") != std::string::npos);
    for (const std::string& other : kKernels) {
      if (other != pair.kernel) CHECK(pair.rdna3.find(other + ":") == std::string::npos);
    }
    CHECK(pair.rdna3.find(";") == std::string::npos);
    CHECK(pair.rdna3.find("\n\n") == std::string::npos);
    CHECK(pair.rdna3_stats.instructions > 5);
    CHECK(pair.rdna3_stats.registers > 0);
    CHECK(pair.sass_stats.instructions > 5);
    // The normalized kernel assembled and linked into a code object: the checks ran and passed.
    std::map<std::string, std::string> status;
    for (const StageResult& check : pair.checks) status[check.name] = check.status;
    CHECK(status["nvidia.sass.parse"] == "ok");
    CHECK(status["amd.assemble.gfx1100"] == "ok");
    CHECK(status["amd.codeobject.gfx1100"] == "ok");
    CHECK(status["amd.run"] == "skipped");
    CHECK(pair.ok);
  }
  CHECK(names == kKernels);
  for (const KernelPair& pair : pairing.pairs) {
    if (pair.kernel == "_Z8weightediPKfPf") CHECK(pair.rdna3.find("kWeights:") != std::string::npos);
    if (pair.kernel == "_Z9scale_addifPKfPf") CHECK(pair.rdna3.find("kWeights") == std::string::npos);
  }
}

TEST_CASE("a broken AMD compile (hip_clang given a flag it rejects) fails the kernel-pair fixture, never skips it") {
  if (!testing::amd_tools_here()) return;
  TempDir dir;
  // The machine's hip_clang, behind a wrapper that adds a flag clang does not know.
  std::string wrapper = dir.file("clang-with-bad-flag");
  std::ofstream(wrapper) << "#!/bin/sh\nexec '" << detected_toolchains().tool("hip_clang").path
                         << "' --no-such-flag-tailforge \"$@\"\n";
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  Toolchains broken = detected_toolchains();
  broken.tools["hip_clang"].path = wrapper;
  ChainOptions options = fixture_chain_options();
  options.toolchains = &broken;
  FixturePairs fixture = fixture_kernel_pairs(dir.file("pairs"), options);
  CHECK(fixture.tools_here);  // the tools are here: what follows is a failure, not a skip
  CHECK(fixture.pairing.pairs.empty());
  CHECK_MESSAGE(fixture.failure.find("amd.asm.gfx1100 of kernels.hip did not pass: fail") != std::string::npos,
                fixture.failure);
  CHECK_MESSAGE(fixture.failure.find("no-such-flag-tailforge") != std::string::npos, fixture.failure);
}

TEST_CASE("a program without SASS yields no pairs and says why") {
  ChainResult program;
  StageResult sass;
  sass.name = "nvidia.sass";
  sass.reason = "cuobjdump and nvdisasm not found";
  program.stages.push_back(sass);
  KernelPairing pairing = pair_kernels(program, ChainOptions{}, "/nonexistent");
  CHECK(pairing.pairs.empty());
  CHECK(pairing.none_reason == "nvidia.sass skipped: cuobjdump and nvdisasm not found");
}

}  // namespace
}  // namespace tailforge
