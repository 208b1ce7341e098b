// docs/ARCHITECTURE.md against the source tree: every `path/file.ext`: `function` pair on a line
// (the page's form for "this step is done by this function in this file") names a file that
// exists under the source root and holds the function (`name(`, or for `Class::method` either
// `Class::method(` or, for a method defined in the class body, the class and `method(`); the
// page traces at least 12 such steps; and every relative link on it resolves. A pair whose left
// side does not look like a file (`dashboard/web/`: ...) is not a pair. The checker is tested on
// a small page of its own first, so that a rename that breaks the page fails here.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "test_support/read_whole_file.h"
#include "test_support/source_tree.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

struct DocPair {
  int line = 0;
  std::string file;
  std::string name;

  std::string text() const { return "line " + std::to_string(line) + ": `" + file + "`: `" + name + "`"; }
};

struct DocLink {
  int line = 0;
  std::string target;
};

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A relative path whose last component has an extension: `daemon/planner.cpp`, `main.cpp`.
bool looks_like_file(const std::string& text) {
  if (text.empty() || text.back() == '/' || text.back() == '.') return false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) return false;
  }
  size_t slash = text.rfind('/');
  size_t dot = text.rfind('.');
  return dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
}

// `name` or `Class::method` (or deeper): identifiers joined by "::".
bool is_function_name(const std::string& name) {
  size_t at = 0;
  while (true) {
    if (at >= name.size() || !(std::isalpha(static_cast<unsigned char>(name[at])) || name[at] == '_')) return false;
    while (at < name.size() && identifier_char(name[at])) ++at;
    if (at == name.size()) return true;
    if (name.compare(at, 2, "::") != 0) return false;
    at += 2;
  }
}

std::vector<std::string> lines_of(const std::string& page) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= page.size()) {
    size_t end = page.find('\n', start);
    if (end == std::string::npos) end = page.size();
    lines.push_back(page.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Every `file`: `name` on one line of the page, in order.
std::vector<DocPair> file_function_pairs(const std::string& page) {
  std::vector<DocPair> pairs;
  std::vector<std::string> lines = lines_of(page);
  const std::string separator = "`: `";
  for (size_t index = 0; index < lines.size(); ++index) {
    const std::string& line = lines[index];
    for (size_t at = line.find(separator); at != std::string::npos; at = line.find(separator, at + 1)) {
      if (at == 0) continue;
      size_t open = line.rfind('`', at - 1);
      size_t close = line.find('`', at + separator.size());
      if (open == std::string::npos || close == std::string::npos) continue;
      std::string file = line.substr(open + 1, at - open - 1);
      if (!looks_like_file(file)) continue;
      std::string name = line.substr(at + separator.size(), close - at - separator.size());
      pairs.push_back({static_cast<int>(index + 1), file, name});
    }
  }
  return pairs;
}

// Every link target `](target)` that is neither a URL nor an anchor on the page.
std::vector<DocLink> relative_links(const std::string& page) {
  std::vector<DocLink> links;
  std::vector<std::string> lines = lines_of(page);
  for (size_t index = 0; index < lines.size(); ++index) {
    const std::string& line = lines[index];
    for (size_t at = line.find("]("); at != std::string::npos; at = line.find("](", at + 2)) {
      size_t close = line.find(')', at + 2);
      if (close == std::string::npos) continue;
      std::string target = line.substr(at + 2, close - at - 2);
      if (target.empty() || target[0] == '#' || target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0 ||
          target.rfind("mailto:", 0) == 0) {
        continue;
      }
      links.push_back({static_cast<int>(index + 1), target});
    }
  }
  return links;
}

// Whether `word(` occurs in `text` with no identifier character right before it.
bool has_call_or_definition(const std::string& text, const std::string& word) {
  const std::string needle = word + "(";
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    if (at == 0 || !identifier_char(text[at - 1])) return true;
  }
  return false;
}

// Whether `keyword name` (class Foo, struct Foo) occurs as a whole word.
bool declares(const std::string& text, const std::string& keyword, const std::string& name) {
  const std::string needle = keyword + " " + name;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    size_t after = at + needle.size();
    bool starts_word = at == 0 || !identifier_char(text[at - 1]);
    bool ends_word = after == text.size() || !identifier_char(text[after]);
    if (starts_word && ends_word) return true;
  }
  return false;
}

// Why `pair` does not hold against the tree at `root`; "" when it does.
std::string pair_problem(const std::string& root, const DocPair& pair) {
  if (!is_function_name(pair.name)) return pair.text() + ": `" + pair.name + "` is not a function name";
  fs::path path = fs::path(root) / pair.file;
  if (!fs::is_regular_file(path)) return pair.text() + ": no file " + pair.file + " under the source root";
  std::string text = read_whole_file(path.string());
  if (has_call_or_definition(text, pair.name)) return "";
  size_t separator = pair.name.rfind("::");
  if (separator != std::string::npos) {
    std::string owner = pair.name.substr(0, separator);
    std::string method = pair.name.substr(separator + 2);
    bool owner_here = declares(text, "class", owner) || declares(text, "struct", owner);
    if (owner_here && has_call_or_definition(text, method)) return "";  // defined in the class body
    return pair.text() + ": " + pair.file + " has neither `" + pair.name + "(` nor class " + owner + " with `" +
           method + "(`";
  }
  return pair.text() + ": " + pair.file + " has no `" + pair.name + "(`";
}

// Why `link` (relative to the page's folder `dir`) does not resolve; "" when it does.
std::string link_problem(const fs::path& dir, const DocLink& link) {
  std::string target = link.target;
  target = target.substr(0, target.find('#'));
  target = target.substr(0, target.find(' '));  // a link title: [x](file.md "title")
  if (target.empty()) return "line " + std::to_string(link.line) + ": link (" + link.target + ") names no file";
  if (fs::exists(dir / target)) return "";
  return "line " + std::to_string(link.line) + ": link (" + link.target + ") points to " + (dir / target).string() +
         ", which does not exist";
}


// The file of each numbered step ("12. `file`: `function` — ...") under the page's "## The path
// of one sample", by its "### " part, in order.
std::vector<std::vector<std::string>> sample_path_parts(const std::string& page) {
  std::vector<std::vector<std::string>> parts;
  bool inside = false;
  size_t at = 0;
  while (at < page.size()) {
    size_t end = page.find('\n', at);
    if (end == std::string::npos) end = page.size();
    std::string line = page.substr(at, end - at);
    at = end + 1;
    if (line.rfind("## ", 0) == 0) inside = line == "## The path of one sample";
    if (!inside) continue;
    if (line.rfind("### ", 0) == 0) parts.emplace_back();
    size_t digits = 0;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
    if (digits == 0 || line.compare(digits, 3, ". `") != 0 || parts.empty()) continue;
    size_t close = line.find('`', digits + 3);
    if (close != std::string::npos && line.compare(close, 3, "`: ") == 0) {
      parts.back().push_back(line.substr(digits + 3, close - digits - 3));
    }
  }
  return parts;
}

// What breaks the rules of the path: a file named by two steps, or a step in a higher layer than
// the one before it within a part.
std::vector<std::string> sample_path_problems(const std::vector<std::vector<std::string>>& parts) {
  std::vector<std::string> problems;
  std::set<std::string> seen;
  for (const std::vector<std::string>& part : parts) {
    for (size_t i = 0; i < part.size(); ++i) {
      if (!seen.insert(part[i]).second) problems.push_back(part[i] + " is visited twice");
      if (i > 0 && layer_of(part[i]) > layer_of(part[i - 1])) {
        problems.push_back(part[i] + " goes up the layers from " + part[i - 1]);
      }
    }
  }
  return problems;
}

}  // namespace

TEST_CASE("docs/ARCHITECTURE.md's checker catches a missing file, a missing function and a dead link") {
  const std::string page =
      "1. `daemon/planner.cpp`: `CyclePlanner::tick` — a method defined out of its class\n"
      "2. `daemon/pipeline.cpp`: `DefaultPipeline::generate` — a method defined in its class body\n"
      "3. `daemon/no_such_file.cpp`: `run_daemon` — and `store/queue.cpp`: `no_such_function` on one line\n"
      "4. `daemon/planner.cpp`: `WorkerPool::work` — a class this file does not have\n"
      "- `dashboard/web/`: `index.html` is a folder, not a pair\n"
      "See [the loop](loop.md), [nothing](no_such_page.md#anchor) and [the web](https://example.org/).\n";
  std::vector<DocPair> pairs = file_function_pairs(page);
  REQUIRE(pairs.size() == 5);
  CHECK(pairs[2].file == "daemon/no_such_file.cpp");
  CHECK(pairs[3].name == "no_such_function");
  CHECK(pair_problem(source_root(), pairs[0]).empty());
  CHECK(pair_problem(source_root(), pairs[1]).empty());
  CHECK(pair_problem(source_root(), pairs[2]).find("no file daemon/no_such_file.cpp") != std::string::npos);
  CHECK(pair_problem(source_root(), pairs[3]).find("has no `no_such_function(`") != std::string::npos);
  CHECK_FALSE(pair_problem(source_root(), pairs[4]).empty());
  std::vector<DocLink> links = relative_links(page);
  REQUIRE(links.size() == 2);
  fs::path docs = fs::path(source_root()) / "docs";
  CHECK(link_problem(docs, links[0]).empty());
  CHECK(link_problem(docs, links[1]).find("no_such_page.md") != std::string::npos);
}

TEST_CASE("docs/ARCHITECTURE.md names files that exist and functions they hold, in at least 12 steps") {
  const std::string page = read_whole_file(source_root() + "/docs/ARCHITECTURE.md");
  REQUIRE_MESSAGE(!page.empty(), "cannot read docs/ARCHITECTURE.md under " << source_root());
  std::vector<DocPair> pairs = file_function_pairs(page);
  CHECK_MESSAGE(pairs.size() >= 12, "only " << pairs.size() << " `file`: `function` pairs on the page, want 12 or more");
  for (const DocPair& pair : pairs) {
    std::string problem = pair_problem(source_root(), pair);
    CHECK_MESSAGE(problem.empty(), problem);
  }
  MESSAGE("docs/ARCHITECTURE.md: " << pairs.size() << " file/function pairs checked");
}

TEST_CASE("docs/ARCHITECTURE.md's relative links point to files that exist") {
  const std::string page = read_whole_file(source_root() + "/docs/ARCHITECTURE.md");
  REQUIRE_MESSAGE(!page.empty(), "cannot read docs/ARCHITECTURE.md under " << source_root());
  std::vector<DocLink> links = relative_links(page);
  CHECK_MESSAGE(!links.empty(), "no relative link on the page (it links the README, layout.md and loop.md)");
  fs::path docs = fs::path(source_root()) / "docs";
  for (const DocLink& link : links) {
    std::string problem = link_problem(docs, link);
    CHECK_MESSAGE(problem.empty(), problem);
  }
}

TEST_CASE("the path checker sees a file visited twice and a step up the layers") {
  const std::string page =
      "## The path of one sample\n### One\n"
      "1. `daemon/a.cpp`: `f` — x\n2. `synth/b.cpp`: `g` — y\n3. `store/c.cpp`: `h` — z\n"
      "### Two\n4. `daemon/d.cpp`: `f` — starts high again: allowed\n5. `verifier/e.cpp`: `g`\n"
      "6. `agents/f.cpp`: `h` — up from verifier/\n7. `store/c.cpp`: `h` — twice\n"
      "## Elsewhere\n8. `daemon/a.cpp`: `f` — not on the path\n";
  std::vector<std::vector<std::string>> parts = sample_path_parts(page);
  REQUIRE(parts.size() == 2);
  CHECK(parts[0] == std::vector<std::string>{"daemon/a.cpp", "synth/b.cpp", "store/c.cpp"});
  CHECK(parts[1].size() == 4);
  CHECK(sample_path_problems(parts) ==
        std::vector<std::string>{"agents/f.cpp goes up the layers from verifier/e.cpp", "store/c.cpp is visited twice"});
}

TEST_CASE("docs/ARCHITECTURE.md's path of one sample visits each file once, each part down the layers") {
  const std::string page = read_whole_file(source_root() + "/docs/ARCHITECTURE.md");
  std::vector<std::vector<std::string>> parts = sample_path_parts(page);
  REQUIRE_MESSAGE(parts.size() >= 3, "the path has " << parts.size() << " parts (### headings), want 3 or more");
  size_t steps = 0;
  for (const std::vector<std::string>& part : parts) steps += part.size();
  CHECK(steps >= 20);
  for (const std::string& problem : sample_path_problems(parts)) FAIL_CHECK(problem);
}

}  // namespace tailforge
