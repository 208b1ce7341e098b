#include "verifier/kernelopt/kernel_task.h"

#include <sstream>

namespace tailforge {

int64_t reasoning_length(const std::string& reasoning) {
  std::istringstream words(reasoning);
  int64_t count = 0;
  for (std::string word; words >> word;) ++count;
  return count;
}

}  // namespace tailforge
