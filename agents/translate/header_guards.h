// The macros code tests to learn which CUDA headers it was compiled with (`#ifdef
// __DRIVER_TYPES_H__`, `#if defined(CUBLAS_API_H_)`, `#ifdef CUSPARSEAPI`), paired with the include
// guard of the HIP header that stands for each CUDA header. Helper headers gate their macros on
// such tests; after translation only the HIP headers are included, so the translator rewrites the
// test to the HIP guard. Derived from the installed headers by `tailforge hipify-table`, like the
// identifier table (agents/translate/hipify_names.h); it translates nothing itself (agents/translate/hipify.h does).
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agents/translate/hipify.h"
#include "base/result.h"

namespace tailforge {

// The include guard of a header: X of its first directive (#pragma lines aside) when that is
// `#ifndef X` or `#if !defined(X)` and the next one is `#define X`; "" otherwise (#pragma once alone).
std::string include_guard(std::string_view text);

// The object-like macros a header defines whatever the code including it defines, with their
// values (spaces trimmed): those at its top level or inside its include guard, a macro defined
// under `#ifndef` of its own name (a default), and one defined in every branch of an
// #if/#elif/#else chain (`#if defined(_WIN32) #define API __stdcall #else #define API #endif`).
// A macro a later #undef removes is not one. Comments and strings are ignored; linear, no recursion.
std::vector<std::pair<std::string, std::string>> unconditional_macros(std::string_view text);

// The headers a text includes, as spelled between <> or "".
std::vector<std::string> included_headers(std::string_view text);

struct GuardSources {
  std::string cuda_include;               // e.g. /usr/local/cuda/include
  std::vector<std::string> hip_includes;  // e.g. /usr/include
  std::string compat_dir;                 // verifier/hip_compat: the targets of compat header rules
  std::vector<HeaderRule> headers;        // the translator's header rules, in their file's order
};

// The guard rules: for each CUDA header a header rule maps, and each CUDA header only it reaches
// through #include (the nearest rule wins; rules with a HIP target before those without), its
// include guard and its unconditional macros (CUSPARSEAPI, CUDART_VERSION: defined exactly when
// the header was included), except the names in `leave` (names the identifier table renames or
// HIP declares itself, and the reviewed exceptions). `to` is the guard of the rule's HIP header
// when that guard answers the same question: every rule whose HIP header brings that guard in
// has a CUDA header that includes this one. Otherwise `to` is empty (cuda.h's __cuda_cuda_h__:
// cuda_runtime.h becomes hip/hip_runtime.h too, and does not include cuda.h). `header` is the
// CUDA header defining the macro, relative to cuda_include. Sorted by `from`. An error names an
// unreadable header.
Result<std::vector<GuardRule>> derive_guard_rules(const GuardSources& sources, const std::set<std::string>& leave);

}  // namespace tailforge
