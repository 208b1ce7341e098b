// The c2x86 oracle and checks: jump tables found in gcc's own output (and none with
// -fno-jump-tables), then the stages on real functions with real gcc and the real sandbox: a
// correct function, an off-by-one candidate, one that does not assemble, a switch compiled with
// jump tables, a NULL dereference and an endless loop, and outputs recorded by the generator's
// helper, each failure categorized by the failure taxonomy.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "base/files.h"
#include "base/process.h"
#include "policies/categorizer.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/c2x86/io_tests.h"
#include "verifier/c2x86/jump_tables.h"

namespace tailforge {
namespace {

std::string category_of(const StageResult& stage) {
  static const Taxonomy taxonomy = load_taxonomy(data_path("policies/taxonomy.json")).value();
  FailureEvidence evidence;
  evidence.stage = stage.name;
  evidence.diagnostics = stage.diagnostics;
  evidence.exit_code = stage.exit_code;
  evidence.signal = stage.signal ? std::optional<int>(stage.signal) : std::nullopt;
  evidence.timed_out = stage.status == "timeout";
  evidence.reason = stage.reason;
  return categorize(taxonomy, evidence).category;
}

// Whether gcc and the sandbox are here (a sandbox that is installed but fails fails the case).
bool stages_here() { return testing::tools_here({"gcc"}) && testing::sandbox_here(VerifierOptions().sandbox); }

// Line `number` (1-based) of `text`.
std::string line_of(const std::string& text, int64_t number) {
  std::istringstream lines(text);
  std::string line;
  for (int64_t i = 0; i < number && std::getline(lines, line); ++i) {
  }
  return line;
}

// gcc -S of `source` with `flags`; fails the test when gcc does.
std::string gcc_assembly(const std::string& source, const std::vector<std::string>& flags) {
  TempDir dir;
  std::ofstream(dir.file("source.c")) << source;
  ProcessSpec spec;
  spec.argv = {detected_toolchains().tool("gcc").path};
  spec.argv.insert(spec.argv.end(), flags.begin(), flags.end());
  spec.argv.insert(spec.argv.end(), {"-S", dir.file("source.c"), "-o", dir.file("source.s")});
  ProcessResult result = run_process(spec);
  REQUIRE_MESSAGE(result.succeeded(), result.stderr_text);
  return read_text_file_or_empty(dir.file("source.s"));
}

// A function, its driver (stdio, the declarations and `main_body`) and its cases.
CFunction make_function(const std::string& name, const std::string& declarations, const std::string& definition,
                        const std::string& main_body, std::vector<IoCase> cases) {
  return {name,
          declarations,
          declarations + definition,
          "#include <stdio.h>\n" + declarations + main_body,
          std::move(cases),
          {}};
}

const char* kReadOneInt = R"(int main(void) {
  int x;
  if (scanf("%d", &x) != 1) return 2;
)";

CFunction sum_range() {
  return make_function("sum_range", "int sum_range(int lo, int hi);\n", R"(
int sum_range(int lo, int hi) {
  int total = 0;
  for (int i = lo; i < hi; i++) total += i;
  return total;
}
)",
                       R"(int main(void) {
  int lo, hi;
  if (scanf("%d %d", &lo, &hi) != 2) return 2;
  printf("%d\n", sum_range(lo, hi));
  return 0;
}
)",
                       {{"1 4", "6\n"}, {"0 0", "0\n"}, {"-3 3", "-3\n"}, {"5 10", "35\n"}});
}

const char* kClassify = R"(
int classify(int x) {
  switch (x) {
    case 0: return 10;
    case 1: return 21;
    case 2: return 32;
    case 3: return 43;
    case 4: return 54;
    case 5: return 65;
    case 7: return 87;
    default: return -1;
  }
}
)";

CFunction classify() {
  return make_function("classify", "int classify(int x);\n", kClassify,
                       std::string(kReadOneInt) + "  printf(\"%d\\n\", classify(x));\n  return 0;\n}\n",
                       {{"0", "10\n"}, {"3", "43\n"}, {"6", "-1\n"}, {"7", "87\n"}, {"100", "-1\n"}});
}

CFunction read_slot() {
  return make_function("read_slot", "int read_slot(int index);\n", R"(
static int slots[4] = {10, 20, 30, 40};
int read_slot(int index) {
  int *slot = index >= 0 && index < 4 ? &slots[index] : (int *)0;
  return *slot;
}
)",
                       std::string(kReadOneInt) + "  printf(\"%d\\n\", read_slot(x));\n  return 0;\n}\n",
                       {{"1", "20\n"}, {"7", "0\n"}, {"2", "30\n"}});
}

// The stages of one function in a fresh scratch directory.
struct StageRun {
  TempDir dir;
  VerifierOptions options;
  StageContext context{options, detected_toolchains(), nullptr, nullptr, dir.path(), {}};

  explicit StageRun(double timeout_seconds = 10) {
    chmod(dir.path().c_str(), 0755);  // the sandbox user reaches its private directories through it
    options.sandbox.timeout_seconds = timeout_seconds;
  }
  const StageResult& stage(const std::string& name) {
    const StageResult* found = context.find(name);
    REQUIRE_MESSAGE(found, "no stage " << name);
    return *found;
  }
};

const char* kHandWrittenTable = R"(	.text
g:
	leaq	.Ltab(%rip), %rdx
	movslq	(%rdx,%rdi,4), %rax
	addq	%rdx, %rax
	notrack jmp	*%rax   # dispatch
	.section	.rodata
	.align 4
.Ltab:
	.long	.Lcase0-.Ltab, .Lcase1-.Ltab
	.text
.Lcase0:
	ret
.Lcase1:
	ret
)";

const char* kPointerTables = R"(	.section	.rodata
.LC0:
	.string	"zero # not a comment"
.LC1:
	.string	"one"
	.section	.data.rel.local,"aw"
	.align 16
names:
	.quad	.LC0
	.quad	.LC1
	.text
	.globl	f
	.type	f, @function
f:
	jmp	*%rdi
	.section	.data.rel.local
handlers:
	.quad	f
	.quad	f
.Lconstants:
	.long	1069547520
	.long	-5
)";

}  // namespace

TEST_CASE("c2x86 jump tables: a table of code labels is found and named with the jmp that reads it") {
  std::vector<JumpTable> tables = find_jump_tables(kHandWrittenTable);
  REQUIRE(tables.size() == 1);
  CHECK(tables[0].label == ".Ltab");
  CHECK(tables[0].line == 9);
  CHECK(tables[0].entries == std::vector<std::string>{".Lcase0", ".Lcase1"});
  CHECK(tables[0].jump_line == 6);
  CHECK(describe_jump_table(tables[0]) ==
        "jump table .Ltab at line 9 (2 entries: .Lcase0 .Lcase1), read by the jmp at line 6");
}

TEST_CASE("c2x86 jump tables: string and function pointer tables and number pools are not jump tables") {
  CHECK(find_jump_tables(kPointerTables).empty());
  CHECK(find_jump_tables("").empty());
}

TEST_CASE("c2x86 jump tables: gcc -O0 switches have one, in both forms, and none with -fno-jump-tables") {
  if (!testing::tools_here({"gcc"})) return;
  for (std::string pic : {"-fPIC", "-fno-pic"}) {
    CAPTURE(pic);
    std::string assembly = gcc_assembly(kClassify, {"-O0", pic});
    std::vector<JumpTable> tables = find_jump_tables(assembly);
    REQUIRE(tables.size() == 1);
    CHECK(line_of(assembly, tables[0].line) == tables[0].label + ":");
    CHECK(tables[0].entries.size() == 8);  // cases 0..7, 6 being the default
    CHECK(line_of(assembly, tables[0].jump_line).find("jmp\t*") != std::string::npos);
    std::string entry_directive =
        pic == "-fPIC" ? ".long\t" + tables[0].entries[0] + "-" + tables[0].label : ".quad\t" + tables[0].entries[0];
    CHECK(line_of(assembly, tables[0].line + 1).find(entry_directive) != std::string::npos);
    CHECK(find_jump_tables(gcc_assembly(kClassify, {"-O0", pic, "-fno-jump-tables"})).empty());
  }
}

TEST_CASE("c2x86 io: outputs match up to trailing whitespace on each line and trailing empty lines") {
  CHECK(io_outputs_match("3\n", "3"));
  CHECK(io_outputs_match("3 \n\n\n", "3\t\r\n"));
  CHECK(io_outputs_match("1\n2\n", "1  \n2"));
  CHECK_FALSE(io_outputs_match("1\n2\n", "1\n 2\n"));
  CHECK_FALSE(io_outputs_match("1\n\n2\n", "1\n2\n"));
  CHECK_FALSE(io_outputs_match("3\n", ""));
}

TEST_CASE("c2x86 io: the taxonomy names the new failures") {
  StageResult stage;
  stage.status = "fail";
  stage.name = "c2x86.jump_table";
  stage.reason = "jump table .L4 at line 27 (8 entries: .L10 .L9), read by the jmp at line 23";
  stage.diagnostics = "function.s:27: " + stage.reason;
  CHECK(category_of(stage) == "c2x86.jump_table");
  stage = {};
  stage.status = "fail";
  stage.name = "c2x86.io";
  stage.signal = 11;
  stage.diagnostics = "io test 2 crashed: killed by signal 11 on input \"7\"\n1 of 3 io cases passed";
  CHECK(category_of(stage) == "c2x86.crash");
  stage.signal = 0;
  stage.exit_code = 0;
  stage.diagnostics = "io test 3 failed: input \"1 2\" expected \"3\" but got \"4\"\n2 of 5 io cases passed";
  CHECK(category_of(stage) == "c2x86.io_mismatch");
  stage.name = "c2x86.oracle";
  stage.exit_code = 1;
  stage.diagnostics = "function.c:3:12: error: expected ';' before 'return'";
  CHECK(category_of(stage) == "c2x86.compile.syntax");
  stage.diagnostics = "function.c:2:1: error: unknown type name 'integer'";
  CHECK(category_of(stage) == "c2x86.compile.error");
}

TEST_CASE("c2x86 io: a correct function passes every io case, and its switch leaves no jump table") {
  if (!stages_here()) return;
  for (const CFunction& function : {sum_range(), classify()}) {
    CAPTURE(function.name);
    StageRun run;
    run_c2x86_stages(run.context, function, nullptr);
    for (const char* name : {"c2x86.oracle", "c2x86.jump_table", "c2x86.assemble", "c2x86.link", "c2x86.io"}) {
      const StageResult& stage = run.stage(name);
      CHECK_MESSAGE(stage.ok(), name << ": " << stage.status << " " << stage.reason << "\n" << stage.diagnostics);
    }
    CHECK(run.stage("c2x86.io").diagnostics ==
          std::to_string(function.cases.size()) + " of " + std::to_string(function.cases.size()) + " io cases passed");
    const Artifact* oracle = run.stage("c2x86.oracle").artifact("x86_asm");
    REQUIRE(oracle);
    CHECK(oracle->content.find(".globl\t" + function.name) != std::string::npos);
    CHECK(find_jump_tables(oracle->content).empty());
  }
}

TEST_CASE("c2x86 io: an off-by-one candidate fails an io test and is an io mismatch") {
  if (!stages_here()) return;
  std::string candidate = gcc_assembly(sum_range().function, {"-O0", "-fno-jump-tables"});
  size_t increment = candidate.find("addl\t$1, ");  // i++
  REQUIRE(increment != std::string::npos);
  candidate.replace(increment, 7, "addl\t$2");
  StageRun run;
  run_c2x86_stages(run.context, sum_range(), &candidate);
  CHECK(run.stage("c2x86.oracle").ok());
  CHECK(run.stage("c2x86.assemble").ok());
  const StageResult& io = run.stage("c2x86.io");
  CHECK(io.status == "fail");
  CHECK(io.reason == "io test 1 failed: input \"1 4\" expected \"6\" but got \"4\"");
  CHECK(io.diagnostics.find("0 of 4 io cases passed") != std::string::npos);
  CHECK(category_of(io) == "c2x86.io_mismatch");
}

TEST_CASE("c2x86 io: a candidate that does not assemble fails c2x86.assemble") {
  if (!stages_here()) return;
  std::string candidate = gcc_assembly(sum_range().function, {"-O0", "-fno-jump-tables"});
  candidate.replace(candidate.find("\tret"), 4, "\tretq\n\tfrobnicate\t%eax, %ebx");
  StageRun run;
  run_c2x86_stages(run.context, sum_range(), &candidate);
  const StageResult& assemble = run.stage("c2x86.assemble");
  CHECK(assemble.status == "fail");
  CHECK(assemble.diagnostics.find("function.s:") != std::string::npos);
  std::string category = category_of(assemble);
  CHECK_MESSAGE(category.rfind("c2x86.assemble.", 0) == 0, category);
  CHECK(run.context.find("c2x86.io") == nullptr);
  CHECK(run.stage("c2x86.link").status == "skipped");
}

TEST_CASE("c2x86 io: a switch compiled with jump tables fails c2x86.jump_table, naming the table") {
  if (!stages_here()) return;
  std::string candidate = gcc_assembly(kClassify, {"-O0"});
  std::vector<JumpTable> tables = find_jump_tables(candidate);
  REQUIRE(tables.size() == 1);
  StageRun run;
  run_c2x86_stages(run.context, classify(), &candidate);
  const StageResult& oracle = run.stage("c2x86.oracle");
  REQUIRE(oracle.ok());
  CHECK(find_jump_tables(oracle.artifact("x86_asm")->content).empty());
  const StageResult& check = run.stage("c2x86.jump_table");
  CHECK(check.status == "fail");
  CHECK(check.reason == describe_jump_table(tables[0]));
  CHECK(check.reason.find("jump table " + tables[0].label) == 0);
  CHECK(category_of(check) == "c2x86.jump_table");
  CHECK(run.stage("c2x86.assemble").status == "skipped");
}

TEST_CASE("c2x86 io: a NULL dereference on one input is a crash, an endless loop a timeout") {
  if (!stages_here()) return;
  StageRun run;
  run_c2x86_stages(run.context, read_slot(), nullptr);
  const StageResult& io = run.stage("c2x86.io");
  CHECK(io.status == "fail");
  CHECK(io.signal == 11);
  CHECK(io.reason == "io test 2 crashed: killed by signal 11 on input \"7\"");
  CHECK(io.diagnostics.find("1 of 3 io cases passed") != std::string::npos);
  CHECK(category_of(io) == "c2x86.crash");

  CFunction spin = make_function("spin", "int spin(int n);\n",
                                 "int spin(int n) {\n  volatile int x = n;\n"
                                 "  while (x > 0) {\n  }\n  return x;\n}\n",
                                 std::string(kReadOneInt) + "  printf(\"%d\\n\", spin(x));\n  return 0;\n}\n",
                                 {{"0", "0\n"}, {"1", "1\n"}});
  StageRun slow(1);
  run_c2x86_stages(slow.context, spin, nullptr);
  const StageResult& endless = slow.stage("c2x86.io");
  CHECK(endless.status == "timeout");
  CHECK(endless.reason == "io test 2 timed out on input \"1\"");
  CHECK(category_of(endless) == "run.timeout");
}

TEST_CASE("c2x86 io: recorded expected outputs are the ones the stages then accept") {
  if (!stages_here()) return;
  CFunction function = sum_range();
  for (IoCase& io_case : function.cases) io_case.expected.clear();
  StageRun run;
  Result<std::vector<IoCase>> recorded = record_expected_outputs(run.context, function);
  REQUIRE_MESSAGE(recorded.ok(), recorded.message());
  REQUIRE(recorded->size() == 4);
  for (size_t i = 0; i < recorded->size(); ++i) CHECK((*recorded)[i].expected == sum_range().cases[i].expected);
  function.cases = *recorded;
  run_c2x86_stages(run.context, function, nullptr);
  CHECK(run.stage("c2x86.io").ok());
  CHECK(run.stage("c2x86.io").diagnostics == "4 of 4 io cases passed");

  StageRun crashing;
  Result<std::vector<IoCase>> refused = record_expected_outputs(crashing.context, read_slot());
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.message().find("io case 2 (input \"7\") crashed: killed by signal 11") != std::string::npos);
  CFunction broken = sum_range();
  broken.function += "int oops(void) { return missing; }\n";
  Result<std::vector<IoCase>> unbuilt = record_expected_outputs(crashing.context, broken);
  REQUIRE_FALSE(unbuilt.ok());
  CHECK(unbuilt.message().find("missing") != std::string::npos);
  CHECK(unbuilt.message().find("undeclared") != std::string::npos);
}

}  // namespace tailforge
