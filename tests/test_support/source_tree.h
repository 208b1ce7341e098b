// The source tree for tests that read it (the architecture page, the include graph, function
// lengths): where it is, and the layer of a file by its folder.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace tailforge {

// tests/data's grandparent, without the "..", so that messages name real paths.
inline std::string source_root() {
  std::string root = std::filesystem::path(std::string(TAILFORGE_TEST_DATA) + "/../..").lexically_normal().string();
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root;
}

// The layer of a source file by its folder, lowest first (docs/ARCHITECTURE.md's order of the
// libraries); -1 for a file outside them. The daemon's sub-folders cluster/, http/ and cli/ are
// three layers above daemon/, in that order; daemon/verify/ is part of daemon/.
inline int layer_of(const std::string& file) {
  static const std::vector<std::string> kOrder = {"base/",     "text/",   "store/",         "policies/",
                                                  "verifier/", "agents/", "synth/",         "daemon/",
                                                  "daemon/cluster/", "daemon/http/", "daemon/cli/"};
  int layer = -1;
  for (size_t i = 0; i < kOrder.size(); ++i) {
    if (file.rfind(kOrder[i], 0) == 0) layer = static_cast<int>(i);  // the longest prefix wins
  }
  return layer;
}

}  // namespace tailforge
