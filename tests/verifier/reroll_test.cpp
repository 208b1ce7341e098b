#include "verifier/ptx2cuda/reroll.h"

#include <doctest/doctest.h>

#include "base/files.h"
#include "base/process.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/stage_runner.h"
#include "verifier/toolchains.h"

using namespace tailforge;

namespace {

// nvcc -ptx -arch=sm_90 of the .cu files beside them (see their first lines).
const std::string ptx_data_dir = std::string(TAILFORGE_TEST_DATA) + "/ptx2cuda";

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

void check_round_trip(const std::string& ptx, const RerolledPtx& rolled) {
  CHECK_FALSE(rolled.fell_back);
  Result<std::string> unrolled = unroll_rolled_ptx(rolled.text);
  REQUIRE_MESSAGE(unrolled.ok(), unrolled.message());
  CHECK(*unrolled == normalize_ptx(ptx));
}

// The tool's path, or "" after recording the skip.
std::string tool_or_skip(const char* role) {
  if (!testing::tools_here({role})) return "";
  return detected_toolchains().tool(role).path;
}

ProcessResult run_tool(const std::string& tool, const std::vector<std::string>& arguments) {
  ProcessSpec spec;
  spec.argv = {tool};
  spec.argv.insert(spec.argv.end(), arguments.begin(), arguments.end());
  spec.timeout_seconds = 120;
  return run_process(spec);
}

}  // namespace

TEST_CASE("reroll: whitespace normalization collapses blanks, trims lines and ends every line") {
  CHECK(normalize_ptx("\tld.global.f32 \t%f1,  [%rd1];  \r\n\n}") == "ld.global.f32 %f1, [%rd1];\n\n}\n");
  CHECK(normalize_ptx("") == "");
}

TEST_CASE("reroll: a PTX line is parsed into guard, opcode with modifiers and operands") {
  std::vector<PtxStatement> statements = parse_ptx_statements(
      "\t@!%p1 ld.global.nc.v2.f32 \t{%f1, %f2}, [%rd4+16];\n$L__BB0_2:\n.reg .f32 %f<5>;\n// note\n\n{\nret;\n");
  REQUIRE(statements.size() == 7);
  CHECK(statements[0].kind == PtxStatementKind::instruction);
  CHECK(statements[0].guard == "@!%p1");
  CHECK(statements[0].opcode == "ld.global.nc.v2.f32");
  CHECK(statements[0].operands == std::vector<std::string>{"{%f1, %f2}", "[%rd4+16]"});
  CHECK(statements[1].kind == PtxStatementKind::label);
  CHECK(statements[2].kind == PtxStatementKind::directive);
  CHECK(statements[3].kind == PtxStatementKind::comment);
  CHECK(statements[4].kind == PtxStatementKind::blank);
  CHECK(statements[5].kind == PtxStatementKind::brace);
  CHECK(statements[6].opcode == "ret");
  CHECK_FALSE(is_straight_line_statement(statements[6]));
  NumericTemplate numbers = numeric_template(statements[0]);
  CHECK(numbers.values == std::vector<int64_t>{1, 1, 2, 4, 16});
}

TEST_CASE("reroll: copies that step registers, offsets and immediates become one loop in the documented syntax") {
  std::string ptx =
      "ld.global.f32 %f10, [%rd4+-16];\nst.global.f32 [%rd5+64], %f10;\n"
      "ld.global.f32 %f12, [%rd4+-12];\nst.global.f32 [%rd5+60], %f12;\n"
      "ld.global.f32 %f14, [%rd4+-8];\nst.global.f32 [%rd5+56], %f14;\n";
  RerolledPtx rolled = reroll_ptx(ptx);
  CHECK(rolled.text ==
        "for.size.2 i in range(0, 3, 1):\n"
        "  ld.global.f32 %f(10+i*2), [%rd4+(-16+i*4)];\n"
        "  st.global.f32 [%rd5+(64-i*4)], %f(10+i*2);\n");
  CHECK(rolled.loops == 1);
  CHECK(rolled.chars_out < rolled.chars_in);
  check_round_trip(ptx, rolled);
}

TEST_CASE("reroll: nvcc's unrolled loops fold and unroll back to the same text") {
  for (const char* name : {"unrolled_loops.ptx", "nested_loops.ptx"}) {
    CAPTURE(name);
    std::string ptx = read_text_file_or_empty(ptx_data_dir + "/" + name);
    REQUIRE(!ptx.empty());
    RerolledPtx rolled = reroll_ptx(ptx);
    CHECK(rolled.text.find("for.size.") != std::string::npos);
    CHECK(rolled.loops >= 2);
    CHECK(rolled.chars_in == normalize_ptx(ptx).size());
    CHECK(rolled.chars_out == rolled.text.size());
    CHECK(rolled.reduction() > 0.4);
    check_round_trip(ptx, rolled);
  }
}

TEST_CASE("reroll: the half-precision inline assembly blocks fold with their braces and comments") {
  RerolledPtx rolled = reroll_ptx(read_text_file_or_empty(ptx_data_dir + "/unrolled_loops.ptx"));
  CHECK(rolled.text.find("  {add.f16 %rs(") != std::string::npos);
  CHECK(rolled.text.find("  // end inline asm\n") != std::string::npos);
}

TEST_CASE("reroll: nested unrolled loops fold into nested loops with their own variables") {
  std::string ptx = read_text_file_or_empty(ptx_data_dir + "/nested_loops.ptx");
  RerolledPtx rolled = reroll_ptx(ptx);
  CHECK(rolled.text.find("\n  for.size.") != std::string::npos);
  CHECK(rolled.text.find(" j in range(0, ") != std::string::npos);
  CHECK(rolled.text.find("+i*") != std::string::npos);
  CHECK(rolled.text.find("+j*") != std::string::npos);
  check_round_trip(ptx, rolled);
}

TEST_CASE("reroll: ptxas accepts the unrolled text") {
  std::string ptxas = tool_or_skip("ptxas");
  if (ptxas.empty()) return;
  TempDir dir;
  for (const char* name : {"unrolled_loops", "nested_loops"}) {
    CAPTURE(name);
    Result<std::string> unrolled = unroll_rolled_ptx(reroll_ptx(read_text_file_or_empty(ptx_data_dir + "/" + name + ".ptx")).text);
    REQUIRE(unrolled.ok());
    write_tree_file(dir.file(std::string(name) + ".ptx"), *unrolled);
    ProcessResult assembled =
        run_tool(ptxas, {"-arch=sm_90", dir.file(std::string(name) + ".ptx"), "-o", dir.file("out.cubin")});
    CHECK_MESSAGE(assembled.succeeded(), assembled.stderr_text);
  }
}

TEST_CASE("reroll: PTX the installed nvcc writes for a 64-copy int16 loop folds losslessly") {
  std::string nvcc = tool_or_skip("nvcc");
  if (nvcc.empty()) return;
  TempDir dir;
  write_tree_file(dir.file("k.cu"),
                  "__global__ void scale(short* out, const short* in, short s) {\n"
                  "  int base = (blockIdx.x * blockDim.x + threadIdx.x) * 64;\n#pragma unroll\n"
                  "  for (int k = 0; k < 64; ++k) out[base + k] = (short)(in[base + k] * s + k);\n}\n");
  ProcessResult compiled = run_tool(nvcc, {"-ptx", "-arch=sm_90", dir.file("k.cu"), "-o", dir.file("k.ptx")});
  REQUIRE_MESSAGE(compiled.succeeded(), compiled.stderr_text);
  std::string ptx = read_text_file_or_empty(dir.file("k.ptx"));
  RerolledPtx rolled = reroll_ptx(ptx);
  CHECK(rolled.text.find(" i in range(0, ") != std::string::npos);
  CHECK(rolled.reduction() > 0.7);
  check_round_trip(ptx, rolled);
}

TEST_CASE("reroll: copies separated by labels and branches are not folded across them") {
  std::string body;
  for (int copy = 0; copy < 6; ++copy) {
    std::string n = std::to_string(copy);
    body += "$L__BB0_" + n + ":\nld.global.f32 %f" + n + ", [%rd1+" + std::to_string(4 * copy) + "];\nsetp.lt.f32 %p" +
            n + ", %f" + n + ", 0f00000000;\n@%p" + n + " bra $L__BB0_" + std::to_string(copy + 1) + ";\n";
  }
  RerolledPtx unfoldable = reroll_ptx(body);
  CHECK(unfoldable.loops == 0);
  CHECK(unfoldable.text == normalize_ptx(body));

  std::string straight;
  for (int copy = 0; copy < 8; ++copy) {
    if (copy == 4) straight += "$L__BB0_9:\n";
    straight += "ld.global.f32 %f" + std::to_string(copy) + ", [%rd1+" + std::to_string(4 * copy) + "];\n";
    straight += "st.global.f32 [%rd2+" + std::to_string(4 * copy) + "], %f" + std::to_string(copy) + ";\n";
  }
  RerolledPtx rolled = reroll_ptx(straight);
  CHECK(rolled.loops == 2);
  CHECK(occurrences(rolled.text, "for.size.2 i in range(0, 4, 1):") == 2);
  CHECK(rolled.text.find("\n$L__BB0_9:\n") != std::string::npos);
  check_round_trip(straight, rolled);
}

TEST_CASE("reroll: malformed Rolled-PTX is an error naming its line") {
  struct Case {
    std::string text, expected;
  };
  for (const Case& bad : std::vector<Case>{
           {"ret;\nfor.size.x i in range(0, 2, 1):\nadd.s32 %r1, %r1, 1;\n", "line 2: malformed loop header"},
           {"for.size.3 i in range(0, 2, 1):\nadd.s32 %r1, %r1, 1;\n", "line 1: the loop needs 3 body statements"},
           {"for.size.1 i in range(0, 2, 0):\nadd.s32 %r1, %r1, 1;\n", "line 1: the loop step must be positive"},
           {"mov.u32 %r1, 0;\nfor.size.1 i in range(0, 2, 1):\nadd.s32 %r(1+q*2), %r1, 1;\n",
            "line 3: unknown loop variable 'q'"},
           {"for.size.1 i in range(0, 2, 1):\nadd.s32 %r(1+i*), %r1, 1;\n", "line 2: malformed loop expression"},
           {"for.size.2 i in range(0, 2, 1):\n$L__BB0_1:\nadd.s32 %r1, %r1, 1;\n",
            "line 2: a loop body cannot hold a label"},
       }) {
    CAPTURE(bad.text);
    Result<std::string> unrolled = unroll_rolled_ptx(bad.text);
    REQUIRE_FALSE(unrolled.ok());
    CHECK(unrolled.message().rfind(bad.expected, 0) == 0);
  }
}

TEST_CASE("reroll: nested Rolled-PTX unrolls with both variables bound") {
  Result<std::string> unrolled = unroll_rolled_ptx(
      "for.size.1 i in range(0, 2, 1):\n  for.size.1 j in range(1, 6, 2):\n    st.global.f32 [%rd1+(8+i*16-j*4)], "
      "%f(3+i*10+j*1);\nret;\n");
  REQUIRE_MESSAGE(unrolled.ok(), unrolled.message());
  CHECK(*unrolled ==
        "st.global.f32 [%rd1+4], %f4;\nst.global.f32 [%rd1+-4], %f6;\nst.global.f32 [%rd1+-12], %f8;\n"
        "st.global.f32 [%rd1+20], %f14;\nst.global.f32 [%rd1+12], %f16;\nst.global.f32 [%rd1+4], %f18;\nret;\n");
  CHECK(count_rolled_loops("for.size.1 i in range(0, 2, 1):\n  for.size.1 j in range(1, 6, 2):\nret;\n") == 2);
}
