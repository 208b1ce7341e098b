// The built-in CUDA->HIP translator: hipify-style, driven by the rule table in
// policies/hipify_rules.json. It rewrites code only (never string literals or comments) and turns
// every construct it cannot translate into a named failure; it does not compile or run anything.
#pragma once

#include <iosfwd>
#include <regex>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/result.h"

namespace tailforge {

struct HeaderRule {
  std::string from;                    // e.g. "cuda_runtime.h"
  std::string to;                      // empty when unsupported
  std::string unsupported_construct;   // e.g. "curand": the include is a translate.unsupported.* failure
  std::string message;
};

struct IdentifierRule {
  std::string from, to, kind;  // kind: runtime_api, error, event, stream, memcpy_kind, enum, device_property, math
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

// A call replaced whole, arguments included: __syncwarp(m) -> __builtin_amdgcn_wave_barrier().
struct CallRewriteRule {
  std::string from, to;
};

// A construct with no translation; fires when every pattern matches the code (not strings/comments).
struct UnsupportedRule {
  std::string construct;  // the failure is translate.unsupported.<construct>
  std::vector<std::string> pattern_texts;
  std::vector<std::regex> patterns;
  std::string message;
  std::string example;  // a snippet that must trigger the rule (checked by the tests)
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

  // Name -> index into the vectors above, built by the loader.
  std::unordered_map<std::string, size_t> identifier_index, symbol_call_index, warp_intrinsic_index,
      call_rewrite_index;
};

// Loads and validates the table; errors name the file and the JSON path ("headers[3].to").
Result<HipifyRules> load_hipify_rules(const std::string& path);

struct TranslationResult {
  bool ok = false;
  std::string hip_source;
  std::string category;  // on failure: translate.unsupported.<construct> (or translate.rules)
  std::string message;   // on failure: what and where, naming the line
  int line = 0;          // 1-based line of the CUDA source at fault; 0 when none
  std::vector<std::string> applied_rules;  // "identifier:cudaMalloc", "header:cuda.h", ... first-use order
  std::vector<std::string> warnings;       // kept-but-risky constructs, e.g. a hard-coded warp size
  std::vector<std::string> features;       // feature tags noticed, e.g. "hardcoded_warp_size"
};

// Translates one CUDA translation unit. Never throws; an untranslatable construct gives ok=false.
TranslationResult translate_cuda_to_hip(const HipifyRules& rules, const std::string& cuda);

// `tailforge translate FILE.cu`: prints the HIP source to `out` and returns 0, or prints one line
// naming the construct, its category and line to `err` and returns 1.
int run_translate_command(const std::string& path, const HipifyRules& rules, std::ostream& out,
                          std::ostream& err);

}  // namespace tailforge
