#include "agents/translate/preprocessor_branches.h"

#include <doctest/doctest.h>

#include <string>

using namespace tailforge;

namespace {

// The inactive lines of `code` in the HIP environment, as "first-last" ranges joined by spaces.
std::string inactive(const std::string& code) {
  std::string ranges;
  for (const InactiveRegion& region : inactive_regions(code, hip_compile_environment())) {
    if (!ranges.empty()) ranges += " ";
    ranges += std::to_string(region.first_line) + "-" + std::to_string(region.last_line);
  }
  return ranges;
}

}  // namespace

TEST_CASE("#if 0, an undefined library guard and a CUDA version check are inactive under HIP") {
  CHECK(inactive("a\n#if 0\nb\nc\n#endif\nd\n") == "3-4");
  CHECK(inactive("#ifdef CUBLAS_API_H_\nx\n#endif\n#ifndef CUBLAS_API_H_\ny\n#endif\n") == "2-2");
  CHECK(inactive("#if CUDART_VERSION >= 11000\nnew\n#else\nold\n#endif\n") == "2-2");
  CHECK(inactive("#if defined(__HIPCC__) && !defined(_WIN32)\na\n#else\nb\n#endif\n") == "4-4");
  // #elif after a true branch, and an #else after an #elif that was.
  CHECK(inactive("#if 1\na\n#elif 1\nb\n#else\nc\n#endif\n") == "4-4 6-6");
  CHECK(inactive("#if 0\na\n#elif 2 > 1\nb\n#else\nc\n#endif\n") == "2-2 6-6");
}

TEST_CASE("a #define before the test decides it; one inside an undecided branch leaves it undecided") {
  CHECK(inactive("#define USE_FAST 1\n#if USE_FAST\na\n#else\nb\n#endif\n") == "5-5");
  CHECK(inactive("#define USE_FAST\n#undef USE_FAST\n#ifdef USE_FAST\na\n#endif\n") == "4-4");
  // __HIP_DEVICE_COMPILE__ differs between the two passes: neither branch is inactive, and what
  // it defines is undecided after it.
  CHECK(inactive("#ifdef __HIP_DEVICE_COMPILE__\n#define ON_GPU 1\n#endif\n#if ON_GPU\na\n#else\nb\n#endif\n") == "");
  // An include guard is active the first time.
  CHECK(inactive("#ifndef MY_H\n#define MY_H\nint x;\n#endif\n") == "");
}

TEST_CASE("nested groups in dead code stay dead, and continued directive lines count as one") {
  CHECK(inactive("#if 0\n#if 1\na\n#else\nb\n#endif\n#endif\nc\n") == "2-6");
  CHECK(inactive("#if defined(A) || \\\n    defined(B)\na\n#endif\nb\n") == "3-3");
}

TEST_CASE("what it cannot evaluate is undecided, never inactive") {
  CHECK(inactive("#if FOO(1)\na\n#endif\n") == "");              // a function-like macro
  CHECK(inactive("#if HIP_VERSION >= 50200000\na\n#endif\n") == "");  // set by the HIP headers
  CHECK(inactive("#if 1 / 0\na\n#endif\n") == "");
  CHECK(inactive("#if (1\na\n#endif\n") == "");
  CHECK(inactive("#define V 3\n#if V * 2 == 6 && (V << 1) == 6 ? 1 : 0\na\n#endif\n") == "");
  CHECK(inactive("#define V 3\n#if V * 2 != 6\na\n#endif\n") == "3-3");
}

TEST_CASE("hostile directives: deep nesting, long operator runs and unbalanced groups return quickly") {
  std::string parens = "#if " + std::string(200000, '(') + "1" + std::string(200000, ')') + "\na\n#endif\n";
  CHECK(inactive(parens) == "");  // too deep to evaluate: undecided
  std::string nots = "#if " + std::string(1000000, '!') + "0\na\n#endif\n";
  CHECK(inactive(nots) == "2-2");  // an even number of ! on 0 is 0
  std::string many;
  for (int i = 0; i < 100000; ++i) many += "#if 0\n";
  CHECK(inactive(many + "x\n").rfind("2-1000", 0) == 0);
  CHECK(inactive("#endif\n#else\n#elif 1\na\n") == "");
  CHECK(inactive(std::string(3000000, 'x')) == "");
}
