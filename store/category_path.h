// A failure category is a dotted path in the taxonomy ("amd.compile.missing_header"): its top
// level and its parent, for storing categories and rolling counts up the tree.
#pragma once

#include <string>

namespace tailforge {

// "amd" for "amd.compile.missing_header".
inline std::string category_top(const std::string& path) { return path.substr(0, path.find('.')); }

// "amd.compile" for "amd.compile.missing_header"; "" for a top level.
inline std::string category_parent(const std::string& path) {
  size_t dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

}  // namespace tailforge
