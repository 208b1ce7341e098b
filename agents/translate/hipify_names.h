// The CUDA->HIP identifier table derived from the installed headers: the names the CUDA headers
// declare, the HIP name each has by the naming rules and the reviewed exceptions
// (policies/hipify_name_exceptions.json), kept where the HIP headers declare that name. It writes
// policies/hipify_names.json (`tailforge hipify-table`) and reads it back for the translator's
// loader; it translates nothing (agents/translate/hipify.h does) and judges no signature: the exceptions do.
#pragma once

#include <iosfwd>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "agents/translate/hipify.h"
#include "base/result.h"

namespace tailforge {

// The CUDA headers under `cuda_include` the table comes from, those present: the runtime and driver
// API (cuda_runtime_api.h, cuda_runtime.h, driver_types.h, cuda.h), their type headers
// (library_types.h, vector_types.h, texture_types.h, surface_types.h), cuda_profiler_api.h, cuRAND
// (curand*.h) and cusparse.h. An error when cuda_runtime_api.h is absent.
Result<std::vector<std::string>> cuda_header_files(const std::string& cuda_include);
// The runtime and driver API headers alone (cuda_runtime_api.h, driver_types.h, cuda.h), present or not.
std::vector<std::string> cuda_api_header_files(const std::string& cuda_include);

// The HIP headers under each include folder: hip/ and hip/amd_detail/ (not nvidia_detail/ or
// nvcc_detail/, the NVIDIA platform's; not hcc_detail/, a link to amd_detail/; not
// amd_detail/hip_prof_str.h, whose profiler tables name calls HIP does not declare), hiprand/
// without its *_nvcc.h, rocrand/ (hipRAND's AMD types are rocRAND's) and hipsparse/. Sorted. An
// error when no folder holds hip/hip_runtime_api.h.
Result<std::vector<std::string>> hip_header_files(const std::vector<std::string>& hip_includes);

// Which header libraries the include folders hold, of hip, hiprand, rocrand and hipsparse (sorted):
// the table depends on them, so a table made where hipsparse/ was differs from one made without.
std::vector<std::string> hip_header_libraries(const std::vector<std::string>& hip_includes);

// What the files declare (agents/translate/header_names.h); an error names a file that cannot be read.
Result<std::set<std::string>> declared_names(const std::vector<std::string>& files);

// "13.0" from cuda.h's CUDA_VERSION; "5.2.21153" from hip/hip_version.h; "" when not found.
std::string cuda_version(const std::string& cuda_include);
std::string hip_version(const std::vector<std::string>& hip_includes);

// A name of the families the rules cover: cuda*, CUDA_*, cu[A-Z]*, CU*, curand*, CURAND_*,
// cusparse*, CUSPARSE_*.
bool is_cuda_family_name(std::string_view name);
// Its table kind: runtime_api (cuda*), random (curand*, CURAND_*), sparse (cusparse*, CUSPARSE_*),
// driver_api (the rest: cu*, CU*, CUDA_*).
std::string cuda_name_kind(std::string_view name);
// FOO_BAR_TEXTURE1D -> FooBarTexture1D: a part's letters after a letter are lowercased.
std::string camel_case(std::string_view upper_snake);
// The HIP spellings the name rules give, in the order tried; the first that HIP declares wins:
//   cudaX -> hipX, hipX_t            CUDA_ERROR_FOO_BAR -> hipErrorFooBar      CUDA_X -> HIP_X
//   cuX -> hipX                      CUx -> HIPx, hipX_t, hipX (X: x capitalized)
//   CU_X -> HIP_X, hip + camel(X)    curand -> hiprand, CURAND_ -> HIPRAND_, cusparse(_/CUSPARSE_) alike
std::vector<std::string> hip_name_candidates(std::string_view cuda_name);

struct NameRename {
  std::string from, to, kind, reason;  // kind: "" for cuda_name_kind(from)
};

struct NameUnmapped {
  std::string from;  // a name, or with `prefix` every name starting so
  bool prefix = false;
  std::string reason;
};

// The reviewed exceptions to the rules. A prefix rename gives `to` + the rest of the name (the
// rest camel-cased when `from` ends in '_'); the longest matching prefix is tried, and the rules
// are when its result is not declared.
struct NameExceptions {
  std::string source_path;
  std::vector<NameRename> renames, prefix_renames;
  std::vector<NameUnmapped> unmapped;
  // Macros of the CUDA headers whose tests are never rewritten to a HIP header's guard
  // (agents/translate/header_guards.h), and those rewritten to a given guard where the derivation finds none
  // that answers exactly; both optional in the file ("guards_unmapped", "guard_renames").
  std::vector<NameUnmapped> guards_unmapped;
  std::vector<NameRename> guard_renames;
};

// Loads the exceptions file; errors name the file and the JSON path ("renames[3].to").
Result<NameExceptions> load_name_exceptions(const std::string& path);

// The HIP counterpart of a CUDA name among `hip_names`: unmapped exceptions first, then renames,
// prefix renames and the rules; "" when it has none. An exact rename's `to` is not checked here.
std::string hip_counterpart(std::string_view cuda_name, const NameExceptions& exceptions,
                            const std::set<std::string>& hip_names);

struct HipifyTableSources {
  std::string cuda_include;               // e.g. /usr/local/cuda/include
  std::vector<std::string> hip_includes;  // e.g. /usr/include
  std::string exceptions_path;            // policies/hipify_name_exceptions.json
  // The translator's rules (their header rules pair CUDA headers with HIP ones; loaded by the
  // caller, agents/translate/hipify_rules.h) and the folder of its compatibility headers: the
  // guard rules come from them. Null: the table has no guards.
  const HipifyRules* rules = nullptr;     // policies/hipify_rules.json
  std::string compat_dir;                 // verifier/hip_compat
};

struct HipifyTable {
  HipifyTableSources sources;
  std::string cuda_version, hip_version;
  std::vector<std::string> hip_libraries;         // hip_header_libraries(sources.hip_includes)
  std::vector<IdentifierRule> identifiers;        // sorted by `from`
  std::vector<std::string> without_hip;           // CUDA-family names with no HIP counterpart, sorted
  std::vector<GuardRule> guards;                  // agents/translate/header_guards.h, sorted by `from`
  size_t cuda_names = 0;                          // names of the CUDA families the CUDA headers declare
  std::vector<std::string> renames_not_declared;  // exceptions naming CUDA names these headers lack
};

// Scans both header sets and derives the table. An error names a missing header folder, an
// unreadable header, or a rename whose `to` the HIP headers do not declare.
Result<HipifyTable> derive_hipify_table(const HipifyTableSources& sources);

// The text of hipify_names.json: a comment, generated_from (the include folders, the CUDA and HIP
// versions, the HIP header libraries, the exceptions file's name), one identifier per line, the
// names without a HIP counterpart, and one guard rule per line; equal tables, equal bytes.
std::string hipify_table_json(const HipifyTable& table);

// Reads a generated table's identifiers; errors name the file and the JSON path ("identifiers[3].to").
Result<std::vector<IdentifierRule>> load_generated_identifiers(const std::string& path);

// Loads the generated table `file_name` (relative to the folder of rules.source_path), records its
// path in rules.generated_identifiers_path and merges it as merge_generated_identifiers does; its
// guard rules and names without a HIP counterpart go to rules.guards and rules.without_hip.
Status merge_generated_table(HipifyRules& rules, const std::string& file_name);

// Appends the generated identifiers to `rules` (hipify_rules.json's own already loaded and indexed),
// leaving out each whose name a hand-written rule (identifiers, symbol_calls, warp_intrinsics,
// call_rewrites) has, or an unsupported rule's pattern matches: such a construct stays a named
// failure. Returns how many were added.
size_t merge_generated_identifiers(HipifyRules& rules, const std::vector<IdentifierRule>& generated);

// `tailforge hipify-table`: derives the table and writes it to `out_path`; prints what it wrote to
// `out`, or the error to `err`. Returns 0, or 1 on an error.
int run_hipify_table_command(const HipifyTableSources& sources, const std::string& out_path, std::ostream& out,
                             std::ostream& err);

}  // namespace tailforge
