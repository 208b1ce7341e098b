#include "verifier/c2x86/float_constants.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>

#include "base/files.h"
#include "base/process.h"
#include "test_support/temp_dir.h"
#include "test_support/tools_here.h"
#include "verifier/stage_runner.h"
#include "verifier/toolchains.h"

using namespace tailforge;

namespace {

// gcc's assembly of a C source (the c2x86 oracle's flags at -O0), or "" after saying why not.
std::string gcc_assembly(const std::string& c_source, const std::string& optimization = "-O0") {
  if (!testing::tools_here({"gcc"})) return "";
  const Tool& gcc = detected_toolchains().tool("gcc");
  TempDir dir;
  write_tree_file(dir.file("function.c"), c_source);
  ProcessSpec spec;
  spec.argv = {gcc.path, optimization, "-fno-jump-tables", "-S", dir.file("function.c"), "-o", dir.file("function.s")};
  ProcessResult compiled = run_process(spec);
  REQUIRE_MESSAGE(compiled.succeeded(), compiled.stderr_text);
  return read_text_file_or_empty(dir.file("function.s"));
}

size_t occurrences(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

SymbolicAssembly round_trip(const std::string& assembly) {
  Result<SymbolicAssembly> symbolic = symbolize_float_constants(assembly);
  REQUIRE_MESSAGE(symbolic.ok(), symbolic.message());
  Result<std::string> interpreted = interpret_float_constants(symbolic->text);
  REQUIRE_MESSAGE(interpreted.ok(), interpreted.message());
  CHECK(*interpreted == assembly);
  return *symbolic;
}

// The bits of a literal; a value no test expects when it does not read.
uint32_t float_bits(const std::string& literal) {
  Result<uint32_t> bits = parse_float_literal(literal);
  return bits.ok() ? *bits : 0xdeadbeef;
}
uint64_t double_bits(const std::string& literal) {
  Result<uint64_t> bits = parse_double_literal(literal);
  return bits.ok() ? *bits : 0xdeadbeef;
}

struct EdgeValue {
  std::string type;          // the C type of the function's result
  std::string c_expression;  // how C writes the value
  uint64_t bits;
  std::string literal;  // its symbolic literal
};

const std::vector<EdgeValue> kEdgeValues = {
    {"float", "0.0f", 0x00000000, "0.0f"},
    {"float", "-0.0f", 0x80000000, "-0.0f"},
    {"float", "0x1p-149f", 0x00000001, "1e-45f"},
    {"float", "0x1.fffffcp-127f", 0x007fffff, "1.1754942e-38f"},
    {"float", "0x1p-126f", 0x00800000, "1.1754944e-38f"},
    {"float", "0x1.fffffep+127f", 0x7f7fffff, "3.4028235e+38f"},
    {"float", "__builtin_inff()", 0x7f800000, "inf"},
    {"float", "-__builtin_inff()", 0xff800000, "-inf"},
    {"float", "__builtin_nanf(\"\")", 0x7fc00000, "nan(0x0)"},
    {"float", "-__builtin_nanf(\"0x2a\")", 0xffc0002a, "-nan(0x2a)"},
    {"float", "__builtin_nansf(\"0x1\")", 0x7f800001, "snan(0x1)"},
    {"float", "-__builtin_nansf(\"0x3fffff\")", 0xffbfffff, "-snan(0x3fffff)"},
    {"float", "0.1f", 0x3dcccccd, "0.1f"},
    {"float", "1.0f / 3.0f", 0x3eaaaaab, "0.33333334f"},
    {"float", "0x1.8p+0f", 0x3fc00000, "1.5f"},
    {"float", "-0x1.921fb6p+1f", 0xc0490fdb, "-3.1415927f"},
    {"float", "16777217.0f", 0x4b800000, "16777216.0f"},
    {"float", "1e10f", 0x501502f9, "1e+10f"},
    {"double", "0.0", 0x0000000000000000, "0.0"},
    {"double", "-0.0", 0x8000000000000000, "-0.0"},
    {"double", "0x0.0000000000001p-1022", 0x0000000000000001, "5e-324"},
    {"double", "0x0.fffffffffffffp-1022", 0x000fffffffffffff, "2.225073858507201e-308"},
    {"double", "0x1p-1022", 0x0010000000000000, "2.2250738585072014e-308"},
    {"double", "0x1.fffffffffffffp+1023", 0x7fefffffffffffff, "1.7976931348623157e+308"},
    {"double", "__builtin_inf()", 0x7ff0000000000000, "inf"},
    {"double", "-__builtin_inf()", 0xfff0000000000000, "-inf"},
    {"double", "__builtin_nan(\"\")", 0x7ff8000000000000, "nan(0x0)"},
    {"double", "-__builtin_nan(\"0xdeadbeef\")", 0xfff80000deadbeef, "-nan(0xdeadbeef)"},
    {"double", "__builtin_nans(\"0x5\")", 0x7ff0000000000005, "snan(0x5)"},
    {"double", "-__builtin_nans(\"0x7ffffffffffff\")", 0xfff7ffffffffffff, "-snan(0x7ffffffffffff)"},
    {"double", "0.1", 0x3fb999999999999a, "0.1"},
    {"double", "1.0 / 3.0", 0x3fd5555555555555, "0.3333333333333333"},
    {"double", "0x1.8p+0", 0x3ff8000000000000, "1.5"},
    {"double", "-0x1.921fb54442d18p+1", 0xc00921fb54442d18, "-3.141592653589793"},
    {"double", "(double)0.1f", 0x3fb99999a0000000, "0.10000000149011612"},
    {"double", "1e300", 0x7e37e43c8800759c, "1e+300"},
};

// A C function of the test's corpus: float and double arithmetic, comparisons, negation and fabs
// (xorps/andps masks), conversions, hex-float literals, NaNs, x87 long double, a switch.
const char* const kCorpus = R"(#include <complex.h>
#include <math.h>
#include <stdio.h>
float f_add(float a) { return a + 1.25f; }
double d_mul(double a) { return a * 0.1; }
float f_poly(float x) { return 3.0f * x * x - 2.5f * x + 0.75f; }
double d_poly(double x) { return ((1.0 / 6 * x + 0.5) * x + 1.0) * x + 1.0; }
float f_neg(float x) { return -x; }
double d_neg(double x) { return -x; }
float f_abs(float x) { return fabsf(x); }
double d_abs(double x) { return fabs(x); }
int f_lt(float x) { return x < 2.5f; }
int d_ge(double x) { return x >= -1e300; }
int f_eq(float x) { return x == 0.3f; }
int d_ne(double x) { return x != 1e-310; }
double widen(float x) { return x * 2.0f + 3.25; }
float narrow(double x) { return (float)(x / 7.0) + 0.5f; }
long d_to_long(double x) { return (long)(x * 1e6); }
unsigned long d_to_ulong(double x) { return (unsigned long)x; }
unsigned long f_to_ulong(float x) { return (unsigned long)x; }
float ulong_to_f(unsigned long x) { return (float)x * 0.5f; }
double ulong_to_d(unsigned long x) { return (double)x + 0.25; }
float f_hex(float x) { return x * 0x1.8p-3f + 0x1.fffffep+127f; }
double d_hex(double x) { return x * 0x1.999999999999ap-4 + 0x1p-1074; }
float f_subnormal(void) { return 1e-40f; }
double d_max(void) { return 1.7976931348623157e308; }
float f_inf(float x) { return x > 0 ? INFINITY : -INFINITY; }
double d_nan(void) { return NAN; }
float f_nan_payload(void) { return -__builtin_nanf("0x1234"); }
double d_snan(void) { return __builtin_nans("0xdead"); }
float f_minus_zero(void) { return -0.0f; }
double d_minus_zero(void) { return -0.0; }
float f_loop(int n) { float s = 0.0f; for (int i = 0; i < n; i++) s += 0.001f * i; return s; }
double d_loop(int n) { double s = 1.0; while (n-- > 0) s *= 1.0001; return s; }
float f_array(void) { float a[4] = {1.5f, -2.25f, 1e10f, 3.14159265f}; return a[0] + a[1] + a[2] + a[3]; }
double d_array(int i) { double a[3] = {2.718281828459045, 1.4142135623730951, 0.0}; return a[i]; }
double d_table(int i) { static const double t[3] = {1.5, 2.5, 0.1}; return t[i]; }
struct point { float x; double y; };
struct point make_point(void) { struct point p = {0.5f, -0.125}; return p; }
double d_select(int c) { return c ? 100.5 : -100.5; }
float f_clamp(float x) { if (x > 1.0f) return 1.0f; if (x < -1.0f) return -1.0f; return x; }
double d_clamp(double x) { return x > 1.0 ? 1.0 : (x < 0.0 ? 0.0 : x); }
float f_div(float x) { return x / 3.0f; }
double d_div(double x) { return 1.0 / (x + 1e-9); }
int f_to_int(float x) { return (int)(x * 255.0f + 0.5f); }
float int_to_f(int i) { return i * 0.0039215686f; }
double d_sqrt(double x) { return sqrt(x + 2.0); }
float f_sqrt(float x) { return sqrtf(x) * 0.70710677f; }
double d_print(double x) { printf("%f %f\n", x, 2.5); return x; }
float f_mix(float a, double b) { return a * 1.5f + (float)(b * 2.5) - 0.1f; }
double d_mix(float a, double b) { return a / 3.0f + b / 3.0; }
float f_negconst(float x) { return x * -1.0f - -2.0f; }
double d_negabs(double x) { return -fabs(x) + 1e-5; }
float f_abs_neg(float x) { return -fabsf(x) * 4.0f; }
int d_cmp_chain(double x) { return x > 0.5 && x < 1.5 && x != 1.0; }
float f_temp(float c) { return c * 9.0f / 5.0f + 32.0f; }
double d_temp(double f) { return (f - 32.0) * 5.0 / 9.0; }
float f_static(float x) { static float k = 2.5f; return x * k; }
double d_global_scale = 4.5;
double d_global(double x) { return x * d_global_scale + 0.5; }
float f_compound(float x) { x += 0.5f; x *= 1.5f; x -= 0.25f; x /= 8.0f; return x; }
double _Complex c_mul(double _Complex z) { return z * (1.5 + 2.5 * I); }
float f_switch(int k) {
  switch (k) { case 0: return 0.5f; case 1: return 1.5f; case 2: return 2.5f; case 3: return 3.5f; default: return -1.0f; }
}
long double ld_mul(long double x) { return x * 1.5L; }
long double ld_float(long double x) { return x * 0.1f; }
)";

}  // namespace

TEST_CASE("float_constants: edge values print as their shortest literal and read back to the same bits") {
  for (const EdgeValue& value : kEdgeValues) {
    CAPTURE(value.c_expression);
    if (value.type == "float") {
      CHECK(float_literal(static_cast<uint32_t>(value.bits)) == value.literal);
      Result<uint32_t> bits = parse_float_literal(value.literal);
      REQUIRE_MESSAGE(bits.ok(), bits.message());
      CHECK(*bits == value.bits);
    } else {
      CHECK(double_literal(value.bits) == value.literal);
      Result<uint64_t> bits = parse_double_literal(value.literal);
      REQUIRE_MESSAGE(bits.ok(), bits.message());
      CHECK(*bits == value.bits);
    }
  }
}

TEST_CASE("float_constants: random bit patterns of every class read back from their literals unchanged") {
  std::mt19937_64 random(16);
  std::vector<std::string> changed;
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = random();
    uint32_t low = static_cast<uint32_t>(bits);
    if (float_bits(float_literal(low)) != low) changed.push_back(float_literal(low));
    if (double_bits(double_literal(bits)) != bits) changed.push_back(double_literal(bits));
  }
  CHECK(changed.empty());
}

TEST_CASE("float_constants: every edge value gcc puts in its constant pool round-trips bit for bit") {
  for (const EdgeValue& value : kEdgeValues) {
    CAPTURE(value.c_expression);
    std::string assembly = gcc_assembly(value.type + " value(void) { return " + value.c_expression + "; }\n");
    if (assembly.empty()) return;
    SymbolicAssembly symbolic = round_trip(assembly);
    if (value.bits == 0) {  // gcc makes +0.0 with pxor, never from the pool
      CHECK(symbolic.constants.empty());
      continue;
    }
    REQUIRE(symbolic.constants.size() == 1);
    CHECK(symbolic.constants[0].symbolized);
    CHECK_FALSE(symbolic.constants[0].respelled);
    CHECK(symbolic.constants[0].format == (value.type == "float" ? FloatFormat::binary32 : FloatFormat::binary64));
    CHECK(symbolic.constants[0].literal == value.literal);
    CHECK(occurrences(symbolic.text, "." + value.type + "_literal\t" + value.literal + "\n") == 1);
    CHECK(occurrences(assembly, ".long") == (value.type == "float" ? 1 : 2));
    CHECK(occurrences(symbolic.text, ".long") == 0);
  }
}

TEST_CASE("float_constants: a corpus of float and double functions round-trips byte for byte at -O0 and -O2") {
  for (const std::string optimization : {"-O0", "-O2"}) {
    CAPTURE(optimization);
    std::string assembly = gcc_assembly(kCorpus, optimization);
    if (assembly.empty()) return;
    SymbolicAssembly symbolic = round_trip(assembly);
    int64_t left = 0;
    for (const FloatConstant& constant : symbolic.constants) {
      CAPTURE(constant.label);
      CAPTURE(constant.note);
      CHECK_FALSE(constant.respelled);
      if (constant.symbolized) {
        CHECK(occurrences(symbolic.text, constant.label + ":\n\t." +
                                             (constant.format == FloatFormat::binary32 ? "float" : "double") +
                                             "_literal\t" + constant.literal + "\n") == 1);
      } else {
        ++left;
        CHECK(constant.note.find("left as data") != std::string::npos);
      }
    }
    MESSAGE(optimization << ": " << symbolic.symbolized() << " constants symbolized, " << left << " left as data");
    CHECK(symbolic.symbolized() >= 50);
    CHECK(left >= 3);  // the xorps/andps masks, the static table, the long double
    CHECK(symbolic.text.find("_literal\tnan(0x0)\n") != std::string::npos);
    CHECK(symbolic.text.find("_literal\t-nan(0x1234)\n") != std::string::npos);
    CHECK(symbolic.text.find("_literal\tsnan(0xdead)\n") != std::string::npos);
    CHECK(symbolic.text.find("_literal\t3.4028235e+38f\n") != std::string::npos);
    CHECK(symbolic.text.find("\t.long\t-2147483648\n\t.long\t0\n\t.long\t0\n\t.long\t0\n") != std::string::npos);
  }
}

TEST_CASE("float_constants: -O0 sign and abs masks, static tables, globals and long doubles stay as gcc wrote them") {
  std::string assembly = gcc_assembly(kCorpus);
  if (assembly.empty()) return;
  SymbolicAssembly symbolic = round_trip(assembly);
  std::map<std::string, std::string> left;
  for (const FloatConstant& constant : symbolic.constants)
    if (!constant.symbolized) left[constant.label] = constant.note;
  CHECK(std::count_if(left.begin(), left.end(), [](const auto& entry) {
          return entry.first.starts_with("t.") && entry.second.find("leaq") != std::string::npos;
        }) == 1);  // d_table's static const double t[3]
  CHECK(std::count_if(left.begin(), left.end(), [](const auto& entry) {
          return entry.second.find("16 bytes loaded as one float") != std::string::npos;
        }) == 2);  // -x and fabsf(x)'s masks, loaded with movss for xorps and andps
  CHECK(std::count_if(left.begin(), left.end(), [](const auto& entry) {
          return entry.second.find("fldt") != std::string::npos;
        }) == 2);  // 1.5L, and 0.1f made a long double at compile time
  CHECK(symbolic.text.find("d_global_scale:\n\t.long\t0\n\t.long\t1074921472\n") != std::string::npos);
  CHECK(symbolic.text.find("k.0:\n\t.long\t1075838976\n") != std::string::npos);
  CHECK(symbolic.text.find(".float_literal\t0.1f\n") != std::string::npos);
}

TEST_CASE("float_constants: a label loaded as both float and double, a .quad, and an address are handled apart") {
  const std::string assembly =
      "\t.text\nf:\n\tmovss\t.LC0(%rip), %xmm0\n\tmovsd\t.LC0(%rip), %xmm1\n\tmovsd\t.LC1(%rip), %xmm2\n"
      "\tleaq\t.LC2(%rip), %rax\n\tflds\t.LC3(%rip)\n\tmovss\t.LC4+4(%rip), %xmm3\n\tret\n"
      "\t.section\t.rodata.cst8,\"aM\",@progbits,8\n\t.align 8\n"
      ".LC0:\n\t.long\t0\n\t.long\t1073217536\n.LC1:\n\t.quad\t4609434218613702656\n"
      "\t.section\t.rodata\n.LC2:\n\t.long\t1069547520\n.LC3:\n\t.long\t0x3fc00000\n"
      ".LC4:\n\t.long\t0\n\t.long\t1069547520\n.LC5:\n\t.long\t.L3-.L2\n"
      "\t.data\n.LC6:\n\t.long\t1069547520\n";
  Result<SymbolicAssembly> symbolic = symbolize_float_constants(assembly);
  REQUIRE_MESSAGE(symbolic.ok(), symbolic.message());
  REQUIRE(symbolic->constants.size() == 5);  // .LC5 is no number, .LC6 is not in .rodata
  const std::vector<FloatConstant>& constants = symbolic->constants;
  CHECK_FALSE(constants[0].symbolized);
  CHECK(constants[0].note.find("as a float (`movss .LC0(%rip), %xmm0`) and as a double") != std::string::npos);
  CHECK(constants[1].symbolized);
  CHECK(constants[1].respelled);
  CHECK(constants[1].literal == "1.5");
  CHECK_FALSE(constants[2].symbolized);
  CHECK(constants[2].note.find("leaq") != std::string::npos);
  CHECK(constants[3].symbolized);  // flds: an x87 float load
  CHECK(constants[3].respelled);
  CHECK(constants[3].literal == "1.5f");
  CHECK_FALSE(constants[4].symbolized);  // an offset into the entry
  Result<std::string> interpreted = interpret_float_constants(symbolic->text);
  REQUIRE_MESSAGE(interpreted.ok(), interpreted.message());
  CHECK(interpreted->find(".LC1:\n\t.long\t0\n\t.long\t1073217536\n") != std::string::npos);
  CHECK(interpreted->find(".LC3:\n\t.long\t1069547520\n") != std::string::npos);
  CHECK(interpreted->find(".LC5:\n\t.long\t.L3-.L2\n\t.data\n.LC6:\n\t.long\t1069547520\n") != std::string::npos);

  Result<SymbolicAssembly> again = symbolize_float_constants(symbolic->text);
  REQUIRE_FALSE(again.ok());
  CHECK(again.message().find("line 16") != std::string::npos);
}

TEST_CASE("float_constants: the interpreter is exact: one ulp off in the literal is one off in the word") {
  std::string assembly = gcc_assembly("float value(void) { return 0.1f; }\n");
  if (assembly.empty()) return;
  SymbolicAssembly symbolic = round_trip(assembly);
  REQUIRE(symbolic.text.find("\t.float_literal\t0.1f\n") != std::string::npos);
  auto interpret_with = [&](const std::string& literal) {
    std::string text = symbolic.text;
    text.replace(text.find("0.1f"), 4, literal);
    Result<std::string> interpreted = interpret_float_constants(text);
    REQUIRE_MESSAGE(interpreted.ok(), interpreted.message());
    return *interpreted;
  };
  CHECK(assembly.find("\t.long\t1036831949\n") != std::string::npos);  // 0x3dcccccd
  std::string one_below = interpret_with("0.099999994f");
  CHECK(one_below != assembly);
  CHECK(one_below.find("\t.long\t1036831948\n") != std::string::npos);  // 0x3dcccccc
  CHECK(interpret_with("0x1.99999ap-4f") == assembly);
  CHECK(interpret_with("0.1000000015") == assembly);
  CHECK(interpret_with("1e-1") == assembly);

  // Correct rounding straight to float: 1 + 2^-24 is a tie and goes to even (1.0f); one digit more
  // goes up, where rounding through a double first would have made a tie of it again.
  CHECK(float_bits("1.000000059604644775390625") == 0x3f800000);
  CHECK(float_bits("1.000000059604644775390626") == 0x3f800001);
  CHECK(static_cast<float>(1.000000059604644775390626) == 1.0f);
  CHECK(double_bits("0.1") == 0x3fb999999999999a);
  CHECK(double_bits("0.10000000000000002") == 0x3fb999999999999b);
}

TEST_CASE("float_constants: literals a model may write in other spellings read as the same bits") {
  for (const std::string literal :
       {"1.5f", "1.5", "1.5F", "+1.5f", "15e-1f", "1.5e0", "0x1.8p+0f", "0X1.8P0", "0x3p-1"})
    CHECK_MESSAGE(float_bits(literal) == 0x3fc00000, literal);
  CHECK(float_bits("2") == 0x40000000);
  CHECK(float_bits(".5") == 0x3f000000);
  CHECK(float_bits("-Infinity") == 0xff800000);
  CHECK(float_bits("NaN") == 0x7fc00000);
  CHECK(float_bits("nan()") == 0x7fc00000);
  CHECK(double_bits("nan(42)") == 0x7ff800000000002a);
  CHECK(double_bits("-0x1p-1074") == 0x8000000000000001);
  Result<std::string> spaced = interpret_float_constants("    .double_literal   0x1.8p+0   # one and a half\n");
  REQUIRE_MESSAGE(spaced.ok(), spaced.message());
  CHECK(*spaced == "    .long   0\n    .long   1073217536\n");
}

TEST_CASE("float_constants: malformed literals are errors that name their line") {
  for (const std::string literal : {"", "-", "1.5q", "1..5", "0x1.8", "0x", "0xp0", "--1", "1.5L", "nan(0x)",
                                    "nan(xyz)", "nan(0x400000)", "snan(0x0)", "snan", "inff", "1e39f", "1e-50f", "one"})
    CHECK_MESSAGE(!parse_float_literal(literal).ok(), literal);
  for (const std::string literal : {"0.1f", "1e309", "1e-400", "nan(0x8000000000000)", "0x1p+1024"})
    CHECK_MESSAGE(!parse_double_literal(literal).ok(), literal);

  const std::string symbolic =
      ".LC0:\n\t.float_literal\t1.5f\n.LC1:\n\t.float_literal\t1.5q\n.LC2:\n\t.double_literal\n"
      ".LC3:\n\t.double_literal\t0.1f\n\t.float_literals\t1.0f\n\t.float_literal\t1.0f, 2.0f\n";
  Result<std::string> interpreted = interpret_float_constants(symbolic);
  REQUIRE_FALSE(interpreted.ok());
  CHECK(interpreted.message().find("line 2") == std::string::npos);
  CHECK(interpreted.message().find("line 4: `1.5q` is not a float literal") != std::string::npos);
  CHECK(interpreted.message().find("line 6: `.double_literal` has no literal") != std::string::npos);
  CHECK(interpreted.message().find("line 8: `0.1f` is not a double literal") != std::string::npos);
  CHECK(interpreted.message().find("line 9: `.float_literals` is not a symbolic directive") != std::string::npos);
  CHECK(interpreted.message().find("line 10: `1.0f, 2.0f` is not a float literal") != std::string::npos);
}
