// The source tree's `#include "..."` graph against two rules of docs/ARCHITECTURE.md:
// - no loop between modules (a module is a header and its .cpp: `a.h` + `a.cpp`): two modules
//   never include each other, directly or through other headers, so that each can be read, and
//   tested, knowing only what it includes;
// - layers include only their own folder and the layers below them (base, text, store, policies,
//   verifier, agents, synth, daemon, daemon/cluster, daemon/http, daemon/cli; dashboard/ includes
//   base/ only and only daemon/http includes it).
// The checkers run first on small trees written for them, so that a checker that finds nothing
// fails here rather than passing the real tree.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "test_support/read_whole_file.h"
#include "test_support/source_tree.h"
#include "test_support/temp_dir.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kLibraryFolders = {"base",  "text",   "store",     "policies", "verifier",
                                                  "agents", "synth", "dashboard", "daemon"};

// File (relative to the root) -> the project files it includes (those that exist under the root).
using IncludeGraph = std::map<std::string, std::set<std::string>>;

IncludeGraph read_includes(const std::string& root, const std::vector<std::string>& folders) {
  IncludeGraph graph;
  for (const std::string& folder : folders) {
    if (!fs::is_directory(fs::path(root) / folder)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(root) / folder)) {
      std::string extension = entry.path().extension().string();
      if (!entry.is_regular_file() || (extension != ".h" && extension != ".cpp")) continue;
      std::string file = fs::relative(entry.path(), root).string();
      std::set<std::string>& included = graph[file];
      std::string text = read_whole_file(entry.path().string());
      size_t at = 0;
      while (at < text.size()) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        std::string_view line(text.data() + at, end - at);
        static constexpr std::string_view kInclude = "#include \"";
        if (line.substr(0, kInclude.size()) == kInclude) {
          size_t close = line.find('"', kInclude.size());
          std::string target(line.substr(kInclude.size(), close == std::string_view::npos ? 0 : close - kInclude.size()));
          if (!target.empty() && fs::is_regular_file(fs::path(root) / target)) included.insert(target);
        }
        at = end + 1;
      }
    }
  }
  return graph;
}

std::string module_of(const std::string& file) { return fs::path(file).replace_extension().string(); }

// Every set of two or more modules that reach each other through includes (a loop), each sorted,
// with one include line of the loop per module pair as evidence: "a.cpp -> b.h".
std::vector<std::string> module_loops(const IncludeGraph& graph) {
  std::map<std::string, std::set<std::string>> edges;
  std::map<std::pair<std::string, std::string>, std::string> evidence;
  for (const auto& [file, included] : graph) {
    for (const std::string& target : included) {
      std::string from = module_of(file), to = module_of(target);
      if (from == to) continue;
      edges[from].insert(to);
      evidence.emplace(std::make_pair(from, to), file + " -> " + target);
    }
  }
  // Which modules each module reaches (the tree has a few hundred: a search from each is cheap).
  std::map<std::string, std::set<std::string>> reaches;
  for (const auto& [start, ignored] : edges) {
    std::set<std::string>& seen = reaches[start];
    std::vector<std::string> pending(edges[start].begin(), edges[start].end());
    while (!pending.empty()) {
      std::string next = pending.back();
      pending.pop_back();
      if (!seen.insert(next).second) continue;
      auto out = edges.find(next);
      if (out != edges.end()) pending.insert(pending.end(), out->second.begin(), out->second.end());
    }
  }
  std::set<std::set<std::string>> loops;
  for (const auto& [module, reached] : reaches) {
    std::set<std::string> loop = {module};
    for (const std::string& other : reached) {
      if (reaches[other].count(module)) loop.insert(other);
    }
    if (loop.size() > 1) loops.insert(loop);
  }
  std::vector<std::string> described;
  for (const std::set<std::string>& loop : loops) {
    std::string text;
    for (const std::string& from : loop) {
      for (const std::string& to : loop) {
        auto found = evidence.find({from, to});
        if (found != evidence.end()) text += (text.empty() ? "" : ", ") + found->second;
      }
    }
    described.push_back(text);
  }
  return described;
}

// Includes that go up the layers, or into dashboard/ from anywhere but daemon/http/, or out of
// dashboard/ to anything but base/: "from -> to".
std::vector<std::string> layer_breaks(const IncludeGraph& graph) {
  std::vector<std::string> breaks;
  for (const auto& [file, included] : graph) {
    for (const std::string& target : included) {
      bool from_dashboard = file.rfind("dashboard/", 0) == 0, to_dashboard = target.rfind("dashboard/", 0) == 0;
      bool broken = false;
      if (from_dashboard) {
        broken = !to_dashboard && target.rfind("base/", 0) != 0;
      } else if (to_dashboard) {
        broken = file.rfind("daemon/http/", 0) != 0;
      } else {
        int from = layer_of(file), to = layer_of(target);
        broken = from >= 0 && to >= 0 && to > from;  // daemon/cluster, http and cli are three layers in a row
      }
      if (broken) breaks.push_back(file + " -> " + target);
    }
  }
  return breaks;
}

TEST_CASE("the loop finder sees two modules that include each other, directly or through a header") {
  TempDir dir;
  write_tree_file(dir.file("agents/a.h"), "#pragma once\n");
  write_tree_file(dir.file("agents/a.cpp"), "#include \"agents/a.h\"\n#include \"agents/b.h\"\n");
  write_tree_file(dir.file("agents/b.h"), "#pragma once\n#include <string>\n");
  write_tree_file(dir.file("agents/b.cpp"), "#include \"agents/b.h\"\n#include \"agents/c.h\"\n");
  write_tree_file(dir.file("agents/c.h"), "#pragma once\n#include \"agents/d.h\"\n");
  write_tree_file(dir.file("agents/d.h"), "#pragma once\n");
  write_tree_file(dir.file("agents/missing.cpp"), "#include \"agents/not_there.h\"\n#include \"agents/d.h\"\n");
  CHECK(module_loops(read_includes(dir.path(), {"agents"})).empty());

  // d.h now includes a.h, whose module (a.cpp) includes b.h, whose module reaches d through c.h.
  write_tree_file(dir.file("agents/d.h"), "#pragma once\n#include \"agents/a.h\"\n");
  std::vector<std::string> loops = module_loops(read_includes(dir.path(), {"agents"}));
  REQUIRE(loops.size() == 1);
  CHECK(loops[0].find("agents/a.cpp -> agents/b.h") != std::string::npos);
  CHECK(loops[0].find("agents/d.h -> agents/a.h") != std::string::npos);

  // A header and its own .cpp are one module, not a loop.
  write_tree_file(dir.file("agents/d.h"), "#pragma once\n");
  write_tree_file(dir.file("agents/e.h"), "#pragma once\n");
  write_tree_file(dir.file("agents/e.cpp"), "#include \"agents/e.h\"\n");
  CHECK(module_loops(read_includes(dir.path(), {"agents"})).empty());
}

TEST_CASE("the layer check sees an include up the layers and into the dashboard") {
  TempDir dir;
  write_tree_file(dir.file("store/s.h"), "#pragma once\n#include \"base/r.h\"\n");
  write_tree_file(dir.file("base/r.h"), "#pragma once\n");
  write_tree_file(dir.file("daemon/http/h.cpp"), "#include \"dashboard/p.h\"\n#include \"daemon/cli/c.h\"\n");
  write_tree_file(dir.file("daemon/cli/c.h"), "#pragma once\n#include \"daemon/http/h.h\"\n");
  write_tree_file(dir.file("daemon/http/h.h"), "#pragma once\n");
  write_tree_file(dir.file("dashboard/p.h"), "#pragma once\n#include \"base/r.h\"\n");
  write_tree_file(dir.file("verifier/v.cpp"), "#include \"agents/x.h\"\n#include \"store/s.h\"\n");
  write_tree_file(dir.file("agents/x.h"), "#pragma once\n#include \"dashboard/p.h\"\n");
  std::vector<std::string> breaks =
      layer_breaks(read_includes(dir.path(), {"base", "store", "verifier", "agents", "dashboard", "daemon"}));
  std::sort(breaks.begin(), breaks.end());
  CHECK(breaks == std::vector<std::string>{"agents/x.h -> dashboard/p.h", "daemon/http/h.cpp -> daemon/cli/c.h",
                                           "verifier/v.cpp -> agents/x.h"});
}

TEST_CASE("the source tree has no include loop between modules, and no include up the layers") {
  IncludeGraph graph = read_includes(source_root(), kLibraryFolders);
  REQUIRE_MESSAGE(graph.size() > 300, "found only " << graph.size() << " files under " << source_root());
  for (const std::string& loop : module_loops(graph)) FAIL_CHECK("an include loop: " << loop);
  for (const std::string& include : layer_breaks(graph)) FAIL_CHECK("an include up the layers: " << include);
}

}  // namespace
}  // namespace tailforge
