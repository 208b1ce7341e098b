// A file's whole content as text, for tests that read back what a command wrote ("" when it
// cannot be read: the test's own checks then fail on the content).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace tailforge {

inline std::string read_whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace tailforge
