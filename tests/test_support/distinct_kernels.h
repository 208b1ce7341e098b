// CUDA programs that are never near-duplicates of one another: distinct names on every line, so
// tests that need N separate samples (tails, evaluation sets, synthesis seeds) get them.
#pragma once

#include <string>

namespace tailforge {

inline std::string distinct_kernel_text(int n) {
  std::string id = std::to_string(n);
  std::string text = "__global__ void kernel_" + id + "(int* data_" + id + ") {\n";
  for (int line = 0; line < 6; ++line) {
    std::string v = "value_" + id + "_" + std::to_string(line);
    text += "  int " + v + " = data_" + id + "[" + std::to_string(line) + "] * " + id + ";\n  data_" + id +
            "[threadIdx.x] += " + v + ";\n";
  }
  return text + "}\nint main() { return " + id + "; }\n";
}

}  // namespace tailforge
