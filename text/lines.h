// A text's lines as std::getline reads them: split at '\n', no final empty line after a trailing
// newline, nothing for an empty text. For tool output read line by line (cuobjdump, nvdisasm).
#pragma once

#include <sstream>
#include <string>
#include <vector>

namespace tailforge::text {

inline std::vector<std::string> getline_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  std::string line;
  while (std::getline(stream, line)) lines.push_back(line);
  return lines;
}

}  // namespace tailforge::text
