// sass2rdna3: splits a program's device assembly into one text per kernel, on both sides. SASS
// comes per function and per sm target from `cuobjdump -sass` or `nvdisasm`; RDNA3 comes from
// clang's gfx1100 module as a file that assembles alone (the kernel, its descriptor, the device
// functions and globals it references, and its own metadata entry). It neither normalizes nor
// runs anything (normalize.h, kernel_pairs.h).
#pragma once

#include <string>
#include <vector>

namespace tailforge {

struct SassFunction {
  std::string arch;  // sm_80, sm_90, ...
  std::string name;  // mangled
  std::string text;  // the function's lines as the tool printed them
};

// Every function of cuobjdump output ("arch = sm_NN" sections, "Function : NAME") or of nvdisasm
// output (".text.NAME:" sections, labelled by `default_arch`).
std::vector<SassFunction> split_sass_functions_by_arch(const std::string& sass, const std::string& default_arch);

struct Rdna3Kernel {
  std::string name;  // mangled, as the symbol
  std::string text;  // target directive, referenced globals and functions, the kernel, its metadata
};

// One entry per `.amdhsa_kernel` of the module, in module order.
std::vector<Rdna3Kernel> split_rdna3_kernels(const std::string& module);

}  // namespace tailforge
