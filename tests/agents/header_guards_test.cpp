// The guard table: which macro of which CUDA header a test may be rewritten to which HIP guard.
#include "agents/translate/header_guards.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "agents/translate/hipify_names.h"
#include "agents/translate/hipify_rules.h"
#include "base/files.h"
#include "test_support/temp_dir.h"
#include "verifier/stage_runner.h"

using namespace tailforge;

#ifndef TAILFORGE_SOURCE_DIR
#define TAILFORGE_SOURCE_DIR TAILFORGE_TEST_DATA "/../.."
#endif

namespace {

std::map<std::string, std::string> macros(const std::string& text) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : unconditional_macros(text)) out[name] = value;
  return out;
}

}  // namespace

TEST_CASE("a header's include guard is its first test for absence followed by the define") {
  CHECK(include_guard("// comment\n#if !defined(__DRIVER_TYPES_H__)\n#define __DRIVER_TYPES_H__\n#endif\n") ==
        "__DRIVER_TYPES_H__");
  CHECK(include_guard("#pragma once\n#ifndef _HIPSPARSE_H_\n#define _HIPSPARSE_H_\n#endif\n") == "_HIPSPARSE_H_");
  CHECK(include_guard("#if ! defined GUARD_H\n#  define GUARD_H 1\n#endif\n") == "GUARD_H");
  CHECK(include_guard("#pragma once\nint x;\n") == "");
  CHECK(include_guard("#ifndef A_H\n#define B_H\n#endif\n") == "");
  CHECK(include_guard("#ifdef A_H\n#define A_H\n#endif\n") == "");
}

TEST_CASE("the macros a header defines whatever its includer defines") {
  auto found = macros(
      "#ifndef LIB_H_\n#define LIB_H_\n"
      "#define LIB_VERSION 1203\n"
      "#if !defined(LIBAPI)\n#  if defined(_WIN32)\n#    define LIBAPI __stdcall\n#  else\n#    define LIBAPI\n#  endif\n#endif\n"
      "#ifdef __CUDACC__\n#define ONLY_UNDER_NVCC 1\n#endif\n"
      "#if defined(_WIN32)\n#define HALF_SURE 1\n#elif defined(__linux__)\n#define HALF_SURE 2\n#endif\n"
      "#ifndef OTHER\n#define NOT_OTHER 1\n#endif\n"
      "#define SQUARE(x) ((x) * (x))\n"
      "#define GONE 1\n#undef GONE\n"
      "/* #define IN_COMMENT 1 */\n"
      "#define LONG_ONE a \\\n  b\n"
      "#endif\n");
  CHECK(found.count("LIB_H_"));
  CHECK(found["LIB_VERSION"] == "1203");
  CHECK(found.count("LIBAPI"));
  CHECK(found.count("LONG_ONE"));
  for (const char* absent : {"ONLY_UNDER_NVCC", "HALF_SURE", "NOT_OTHER", "SQUARE", "GONE", "IN_COMMENT"}) {
    CAPTURE(absent);
    CHECK_FALSE(found.count(absent));
  }
  CHECK(included_headers("#include <a.h>\n# include \"sub/b.h\"\n#include MACRO_HEADER\n") ==
        std::vector<std::string>{"a.h", "sub/b.h"});
}

TEST_CASE("the directive scanner stays linear on hostile text") {
  std::string hostile(1 << 20, '#');
  std::string deep;
  for (int i = 0; i < 20000; ++i) deep += "#if X\n";
  std::string continued = "#define A \\\n" + std::string(200000, 'x') + "\\\n";
  auto start = std::chrono::steady_clock::now();
  for (const std::string& text : {hostile, deep, continued, std::string("#"), std::string("#endif\n#else\n")}) {
    (void)include_guard(text);
    (void)unconditional_macros(text);
    (void)included_headers(text);
  }
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));
}

TEST_CASE("a CUDA macro maps to a HIP guard only where that guard tells whether its header was included") {
  TempDir dir;
  auto put = [&](const std::string& path, const std::string& text) { write_tree_file(dir.file(path), text); };
  // CUDA: cuda_runtime.h includes driver_types.h and lib_api.h-free; cuda.h includes nothing;
  // lib_v2.h includes lib_api.h; nolib.h has no HIP header.
  put("cuda/cuda_runtime.h", "#ifndef __CUDA_RUNTIME_H__\n#define __CUDA_RUNTIME_H__\n#include \"driver_types.h\"\n#endif\n");
  put("cuda/driver_types.h", "#if !defined(__DRIVER_TYPES_H__)\n#define __DRIVER_TYPES_H__\n#define CUDART_CB\n#endif\n");
  put("cuda/cuda.h", "#ifndef __cuda_cuda_h__\n#define __cuda_cuda_h__\n#define CUDA_VERSION 13000\n#endif\n");
  put("cuda/lib_v2.h", "#if !defined(LIB_V2_H_)\n#define LIB_V2_H_\n#include \"lib_api.h\"\n#endif\n");
  put("cuda/lib_api.h", "#if !defined(LIB_API_H_)\n#define LIB_API_H_\n#define LIBAPI\n#define libDeclared 1\n#endif\n");
  put("cuda/nolib.h", "#ifndef _NOLIB_H_\n#define _NOLIB_H_\n#endif\n");
  // HIP: hip_runtime.h includes hip/driver_types.h; the compat header has a guard and includes
  // hip_runtime_api.h (a header no rule names).
  put("rocm/hip/hip_runtime.h", "#ifndef HIP_RT_H\n#define HIP_RT_H\n#include <hip/driver_types.h>\n#endif\n");
  put("rocm/hip/driver_types.h", "#ifndef HIP_DT_H\n#define HIP_DT_H\n#endif\n");
  put("rocm/hip/hip_runtime_api.h", "#ifndef HIP_RT_API_H\n#define HIP_RT_API_H\n#endif\n");
  put("compat/lib_compat.h", "#pragma once\n#ifndef LIB_COMPAT_H\n#define LIB_COMPAT_H\n#include <hip/hip_runtime_api.h>\n#endif\n");
  std::vector<HeaderRule> headers(5);
  headers[0].from = "cuda_runtime.h", headers[0].to = "hip/hip_runtime.h";
  headers[1].from = "cuda.h", headers[1].to = "hip/hip_runtime.h";
  headers[2].from = "driver_types.h", headers[2].to = "hip/driver_types.h";
  headers[3].from = "lib_v2.h", headers[3].to = "lib_compat.h", headers[3].compat = true;
  headers[4].from = "nolib.h", headers[4].unsupported_construct = "library.nolib", headers[4].message = "no nolib here";
  GuardSources sources{dir.file("cuda"), {dir.file("rocm")}, dir.file("compat"), headers};
  Result<std::vector<GuardRule>> rules = derive_guard_rules(sources, {"libDeclared"});
  REQUIRE_MESSAGE(rules.ok(), rules.message());
  std::map<std::string, std::string> to, header;
  for (const GuardRule& rule : *rules) to[rule.from] = rule.to, header[rule.from] = rule.header;
  CHECK(to.size() == 9);
  // lib_api.h is included by lib_v2.h, the only header becoming lib_compat.h: exact.
  CHECK(to["LIB_API_H_"] == "LIB_COMPAT_H");
  CHECK(to["LIBAPI"] == "LIB_COMPAT_H");
  CHECK(header["LIBAPI"] == "lib_api.h");
  CHECK(to["LIB_V2_H_"] == "LIB_COMPAT_H");
  CHECK_FALSE(to.count("libDeclared"));  // left to the identifier table
  // cuda.h and cuda_runtime.h both become hip_runtime.h: its guard cannot tell which was included.
  CHECK(to["__cuda_cuda_h__"] == "");
  CHECK(to["CUDA_VERSION"] == "");
  CHECK(to["__CUDA_RUNTIME_H__"] == "");
  // hip/driver_types.h comes with hip_runtime.h, which cuda.h becomes without including driver_types.h.
  CHECK(to["__DRIVER_TYPES_H__"] == "");
  CHECK(to["CUDART_CB"] == "");
  CHECK(to["_NOLIB_H_"] == "");
  CHECK(header["_NOLIB_H_"] == "nolib.h");

  // Without cuda.h's rule, the runtime's guards answer exactly.
  sources.headers.erase(sources.headers.begin() + 1);
  rules = derive_guard_rules(sources, {});
  REQUIRE(rules.ok());
  for (const GuardRule& rule : *rules) to[rule.from] = rule.to;
  CHECK(to["__CUDA_RUNTIME_H__"] == "HIP_RT_H");
  CHECK(to["__DRIVER_TYPES_H__"] == "HIP_DT_H");
  CHECK(to["CUDART_CB"] == "HIP_DT_H");

  // The reviewed exceptions rename a guard or leave a macro out; the table carries the result.
  write_tree_file(dir.file("exceptions.json"),
                  R"({"renames": [], "prefix_renames": [], "unmapped": [],
                      "guard_renames": [{"from": "__DRIVER_TYPES_H__", "to": "HIP_DT_H", "reason": "r"}],
                      "guards_unmapped": [{"from": "CUDART_CB", "reason": "r"}]})");
  // The shipped rules with these three header rules and no generated table.
  nlohmann::json shipped = nlohmann::json::parse(read_text_file_or_empty(TAILFORGE_SOURCE_DIR "/policies/hipify_rules.json"));
  shipped.erase("generated_identifiers");
  shipped["headers"] = nlohmann::json::parse(R"([{"from": "cuda_runtime.h", "to": "hip/hip_runtime.h"},
                                                {"from": "cuda.h", "to": "hip/hip_runtime.h"},
                                                {"from": "driver_types.h", "to": "hip/driver_types.h"}])");
  write_tree_file(dir.file("rules.json"), shipped.dump());
  write_tree_file(dir.file("cuda/cuda_runtime_api.h"), "#define CUDART_VERSION 13000\n");
  Result<HipifyRules> table_rules = load_hipify_rules(dir.file("rules.json"));
  REQUIRE_MESSAGE(table_rules.ok(), table_rules.message());
  HipifyTableSources table_sources{dir.file("cuda"), {dir.file("rocm")}, dir.file("exceptions.json"), &*table_rules,
                                   dir.file("compat")};
  Result<HipifyTable> table = derive_hipify_table(table_sources);
  REQUIRE_MESSAGE(table.ok(), table.message());
  to.clear();
  for (const GuardRule& rule : table->guards) to[rule.from] = rule.to;
  CHECK(to["__DRIVER_TYPES_H__"] == "HIP_DT_H");
  CHECK(to["__cuda_cuda_h__"] == "");
  CHECK_FALSE(to.count("CUDART_CB"));
  std::string json = hipify_table_json(*table);
  CHECK(json.find(R"({"from": "__DRIVER_TYPES_H__", "to": "HIP_DT_H", "header": "driver_types.h"})") != std::string::npos);
  CHECK(json.find(R"({"from": "__cuda_cuda_h__", "header": "cuda.h"})") != std::string::npos);
  // A rename to a guard HIP does not define is refused.
  write_tree_file(dir.file("exceptions.json"),
                  R"({"renames": [], "prefix_renames": [], "unmapped": [],
                      "guard_renames": [{"from": "__DRIVER_TYPES_H__", "to": "HIP_NOWHERE_H", "reason": "r"}]})");
  Result<HipifyTable> refused = derive_hipify_table(table_sources);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.message().find("guard_renames[0].to: 'HIP_NOWHERE_H' is not declared") != std::string::npos);
}
