// The built-in CUDA->HIP translator: hipify-style, driven by the rule table in
// policies/hipify_rules.json. It rewrites code only (never string literals or comments) and turns
// every construct it cannot translate into a named failure; it does not compile or run anything.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/result.h"
#include "text/regex.h"

namespace tailforge {

struct HeaderRule {
  std::string from;                    // e.g. "cuda_runtime.h"
  std::string to;                      // empty when unsupported
  std::string unsupported_construct;   // e.g. "cufft": the include is a translate.unsupported.* failure
  std::string message;
  bool compat = false;          // `to` is one of tailforge's compatibility headers (verifier/hip_compat)
  bool unless_in_tree = false;  // applies only when the translated tree lacks a header of this name
  std::vector<std::string> also;  // headers included right after it: what the CUDA header brought in
                                  // implicitly (cuda_runtime.h declares math.h's functions for host code)
};

struct IdentifierRule {
  std::string from, to, kind;  // kind: runtime_api, error, event, stream, memcpy_kind, enum, device_property, math, ...
  std::string header;          // a compatibility header the translation then includes (e.g. tailforge_bf16.h)
};

// A macro a CUDA header defines, which code tests to learn whether that header was included
// (`#ifdef __DRIVER_TYPES_H__`): the test is rewritten to the include guard of the HIP header that
// stands for it (agents/translate/header_guards.h derives these).
struct GuardRule {
  std::string from, to;  // to: empty where no HIP header's guard tells whether `header` was included
  std::string header;    // the CUDA header defining `from` (cublas_api.h for CUBLAS_API_H_)
};

// A rewrite of the translated code by regular expression ($1... are its groups), for constructs
// that are not one identifier: `<< <` launch spacing, `obj.meta_group_rank()`.
struct CodeRewriteRule {
  std::string pattern_text, to;
  text::Regex pattern;
};

// A call whose symbol argument is wrapped: cudaMemcpyToSymbol(s, ...) -> hipMemcpyToSymbol(HIP_SYMBOL(s), ...).
struct SymbolCallRule {
  std::string from, to, wrapper;
  int symbol_argument = 0;
};

// A *_sync warp intrinsic whose first (mask) argument is dropped: __shfl_down_sync -> __shfl_down.
struct WarpIntrinsicRule {
  std::string from, to;
};

// A call replaced whole, arguments included: __syncwarp(m) -> __builtin_amdgcn_wave_barrier(), or
// rebuilt from its arguments: __stcs(p, v) -> __builtin_nontemporal_store({1}, {0}).
struct CallRewriteRule {
  std::string from, to;
};

// A construct with no translation; fires when every pattern matches the code (not strings/comments).
struct UnsupportedRule {
  std::string construct;  // the failure is translate.unsupported.<construct>
  std::vector<std::string> pattern_texts;
  std::vector<text::Regex> patterns;
  std::string message;
  std::string example;  // a snippet that must trigger the rule (checked by the tests)
};

// A CUDA library: an identifier left in compiled code that starts with one of its prefixes fails
// the file as translate.unsupported.library.<name>.
struct LibraryRule {
  std::string name;  // cublas
  std::vector<std::string> prefixes;
  std::string message;
};

struct HipifyRules {
  std::string source_path;
  std::vector<HeaderRule> headers;
  std::vector<IdentifierRule> identifiers;
  std::vector<SymbolCallRule> symbol_calls;
  std::vector<WarpIntrinsicRule> warp_intrinsics;
  std::vector<std::string> full_warp_masks;
  std::vector<CallRewriteRule> call_rewrites;
  std::string launch_bounds_name = "__launch_bounds__";
  int launch_bounds_keep_arguments = 1;
  std::vector<std::string> warp_size_literals;
  std::vector<std::string> warp_code_markers;
  std::vector<UnsupportedRule> unsupported;
  std::vector<CodeRewriteRule> code_rewrites;
  // Calls whose variadic arguments matching `vararg_cast_arguments` get `vararg_cast` in front:
  // printf("%d", threadIdx.x) -> printf("%d", (unsigned int)threadIdx.x) (HIP's coordinates are objects).
  std::vector<std::string> vararg_cast_calls;
  text::Regex vararg_cast_arguments;
  std::string vararg_cast;
  // Identifiers left in the output that still name CUDA (cudaFoo, CUresult, curand_init, ...).
  std::vector<LibraryRule> libraries;
  std::vector<GuardRule> guards;  // from the generated table
  // Names the CUDA headers declare that no installed HIP header has a counterpart for (the
  // generated table's `without_hip`): left in code, each is a translate.unsupported issue.
  std::unordered_set<std::string> without_hip;
  std::vector<std::string> residual_pattern_texts;
  std::vector<text::Regex> residual_patterns;

  // Name -> index into the vectors above, built by the loader.
  std::unordered_map<std::string, size_t> identifier_index, symbol_call_index, warp_intrinsic_index,
      call_rewrite_index, guard_index;
  // identifiers[0, handwritten_identifiers) are the file's own; the rest come from the generated
  // table its "generated_identifiers" names (agents/translate/hipify_names.h), minus the names it has rules for.
  size_t handwritten_identifiers = 0;
  std::string generated_identifiers_path;  // empty when the file names none
};


// One construct the translation cannot express, at the line that needs it.
struct TranslationIssue {
  std::string category;  // translate.unsupported.<construct>
  int line = 0;
  std::string message;   // "line N: what (category)"
};

// What a translation knows about the tree around the file (repository-level translation).
struct TranslationContext {
  // True when the tree has a header of this name (so the tree's own copy is used and translated).
  std::function<bool(const std::string& include)> tree_has_header;
  // Names the tree itself defines (macros, functions, types, variables): never reported as CUDA.
  const std::unordered_set<std::string>* tree_names = nullptr;
};

struct TranslationResult {
  bool ok = false;       // no issue: every construct was translated
  std::string hip_source;  // the translation; with issues, the best effort (untranslatable lines kept)
  std::string category;  // the first issue's category: translate.unsupported.<construct>
  std::string message;   // the first issue's message, naming the line
  int line = 0;          // the first issue's line (1-based); 0 when none
  std::vector<TranslationIssue> issues;      // every issue, in line order
  // "line N: cudaFoo (why)": CUDA identifiers left in the output, each with its reason (a library
  // without a HIP counterpart here, no HIP declaration in the installed ROCm, not in the table).
  std::vector<std::string> untranslated;
  std::vector<std::string> compat_headers;   // compatibility headers the output includes
  std::vector<std::string> applied_rules;  // "identifier:cudaMalloc", "header:cuda.h", ... first-use order
  std::vector<std::string> warnings;       // kept-but-risky constructs, e.g. a hard-coded warp size
  std::vector<std::string> features;       // feature tags noticed, e.g. "hardcoded_warp_size"
};

// Translates one CUDA source or header. Never throws; an untranslatable construct gives ok=false
// with every issue listed, and the best-effort translation in hip_source.
TranslationResult translate_cuda_to_hip(const HipifyRules& rules, const std::string& cuda,
                                        const TranslationContext& context = {});

// Names a source defines itself (#define NAME, struct NAME, `T name(`, `T* name =`, ...), which the
// report of untranslated CUDA identifiers leaves out (cudaStatus, cuDNNCheck are a program's own).
void collect_defined_names(const std::string& source, std::unordered_set<std::string>& names);

// `tailforge translate FILE.cu`: prints the HIP translation to `out`, always; names on `err` every
// construct left untranslated (file:line: category: message), every CUDA identifier left, and
// every warning. Returns 0 when nothing was left, 1 otherwise.
int run_translate_command(const std::string& path, const HipifyRules& rules, std::ostream& out,
                          std::ostream& err);

}  // namespace tailforge
