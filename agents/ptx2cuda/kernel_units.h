// Kernel units for the ptx2cuda track: for each file-scope __global__ kernel of a CUDA program,
// a CUDA source of that kernel alone (its declarations' transitive closure, all preprocessor
// lines, host code dropped) that compiles by itself to the kernel's PTX entry. It does not
// compile anything, refactor the kernel, or keep launch configurations; units of templates need
// the program's PTX entry names to say which instantiations exist (instantiate_kernel_unit).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/result.h"

namespace tailforge {

struct KernelUnit {
  std::string name;  // as written in the source
  bool is_template = false;
  std::string source;                     // compiles alone with the program's flags and include paths
  std::vector<std::string> declarations;  // labels of the declarations pulled in, in source order
  size_t declaration_index = 0;           // the kernel's place among the source's declarations
};

// One unit per __global__ definition at file scope, in source order. Fails, naming why, when the
// source's braces do not balance or a kernel sits inside a namespace or extern "C" block.
// A template kernel's unit declares the template only: it produces no PTX entry by itself.
Result<std::vector<KernelUnit>> extract_kernel_units(const std::string& cuda_source);

// The mangled names among the program's PTX `.entry` names that belong to the kernel `name`
// (demangled with c++filt, or cu++filt when c++filt is missing). Fails when neither runs.
Result<std::vector<std::string>> kernel_entry_names(const std::string& name,
                                                    const std::vector<std::string>& ptx_entry_names);

// The unit of a template kernel with one `template __global__ void name<...>(...);` line per entry
// of it in the program's PTX, and the declarations those lines name, so that the unit alone gives
// the same entries (in the order of ptx_entry_names: pass them in module order to keep it). A unit that is no template,
// or whose source already instantiates the kernel explicitly, comes back unchanged. Fails, naming why, when no entry
// belongs to the kernel or an instantiation names a type no declaration can spell (anonymous namespace, lambda, unnamed
// type).
Result<KernelUnit> instantiate_kernel_unit(const std::string& cuda_source, const KernelUnit& unit,
                                           const std::vector<std::string>& ptx_entry_names);

}  // namespace tailforge
