// No function in the sources runs over 120 lines. The test walks every .cpp and .h under the
// source folders (not tests/, not build folders), finds each function body with a brace scanner
// over the lexer's code view (comments and literal bodies blanked, so braces in strings, comments
// and raw strings do not count) and names file:line and function for every body that is longer.
// A function body is a {...} block at namespace or class scope that follows a parameter list's
// `)` (then maybe const, noexcept, override, `-> T` or a constructor's initializer list); a lambda
// inside a function is part of that function. The few exemptions are listed below, each with its
// reason. The scanner is tested first on small inputs written for it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "test_support/read_whole_file.h"
#include "test_support/source_tree.h"
#include "text/chars.h"
#include "text/cpp_lexer.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxFunctionLines = 120;

struct FunctionSpan {
  std::string name;  // Class::method for a method defined in its class body
  int line = 0;      // the line of the function's name
  int body_lines = 0;  // from the line of its `{` to the line of its `}`, both counted
};

// The code with preprocessor lines (and their backslash continuations) blanked too.
std::string code_without_directives(std::string_view source) {
  std::string code = text::code_view(source);
  bool line_start = true, in_directive = false;
  for (size_t i = 0; i < code.size(); ++i) {
    char c = code[i];
    if (c == '\n') {
      in_directive = in_directive && i > 0 && code[i - 1] == '\\';
      line_start = true;
      continue;
    }
    if (line_start && c == '#') in_directive = true;
    if (!text::is_space(c)) line_start = false;
    if (in_directive) code[i] = ' ';
  }
  return code;
}

// One token of a declaration's text: an identifier or number, `->`, `::`, or one punctuation
// byte; `at` is its offset in the text.
struct HeadToken {
  std::string text;
  size_t at = 0;

  bool operator==(std::string_view other) const { return text == other; }
};

std::vector<HeadToken> head_tokens(std::string_view head) {
  std::vector<HeadToken> tokens;
  size_t i = 0;
  while (i < head.size()) {
    char c = head[i];
    size_t end = i + 1;
    if (text::is_space(c)) {
      ++i;
      continue;
    }
    if (text::is_identifier_char(c)) {
      while (end < head.size() && text::is_identifier_char(head[end])) ++end;
    } else if (head.compare(i, 2, "->") == 0 || head.compare(i, 2, "::") == 0) {
      end = i + 2;
    }
    tokens.push_back({std::string(head.substr(i, end - i)), i});
    i = end;
  }
  return tokens;
}

bool is_identifier(const HeadToken& token) { return text::is_identifier_start(token.text[0]); }

// What may stand between a parameter list's `)` and the body's `{`.
bool is_function_suffix(const HeadToken& token) {
  return token == "const" || token == "volatile" || token == "noexcept" || token == "override" ||
         token == "final" || token == "mutable" || token == "try" || token == "&";
}

// Whether the tokens hold `) :`, the start of a constructor's initializer list.
bool has_initializer_list(const std::vector<HeadToken>& tokens) {
  for (size_t k = 0; k + 1 < tokens.size(); ++k) {
    if (tokens[k] == ")" && tokens[k + 1] == ":") return true;
  }
  return false;
}

// Whether the declaration text before a `{` makes that brace a function body.
bool heads_function(const std::vector<HeadToken>& tokens) {
  size_t close = tokens.size();
  while (close > 0 && !(tokens[close - 1] == ")")) --close;
  if (close == 0) return false;
  // A constructor's initializer list `) : a_(x), b_{y} {` ends in `)` or `}`.
  if (has_initializer_list(tokens)) return tokens.back() == ")" || tokens.back() == "}";
  for (size_t k = close; k < tokens.size(); ++k) {
    if (tokens[k] == "->") return true;  // a trailing return type
    if (!is_function_suffix(tokens[k])) return false;
  }
  return true;
}

// Whether a `{` in a constructor's initializer list opens a member's brace initializer.
bool opens_member_initializer(const std::vector<HeadToken>& tokens) {
  if (tokens.empty() || !(is_identifier(tokens.back()) || tokens.back() == ">")) return false;
  return has_initializer_list(tokens);
}

// The index of the function's name token: the identifier (or `operator`) before the first `(` of
// the tokens; tokens.size() when there is none.
size_t function_name_at(const std::vector<HeadToken>& tokens) {
  for (size_t k = 1; k < tokens.size(); ++k) {
    if (!(tokens[k] == "(")) continue;
    size_t name = k - 1;
    while (name > 0 && !is_identifier(tokens[name])) --name;  // operator==, operator()
    return name;
  }
  return tokens.size();
}

// The function's name as written: `name`, `Class::name`, `~Class`, `operator==`.
std::string function_name(const std::vector<HeadToken>& tokens, size_t at) {
  if (at >= tokens.size()) return "?";
  std::string name = tokens[at].text;
  if (name == "operator") {
    // The operator's symbol runs to the parameter list's `(`; operator() has its own first.
    for (size_t k = at + 1; k < tokens.size(); ++k) {
      bool parameters = tokens[k] == "(" && k > at + 1 && !(tokens[k - 1] == "(");
      if (parameters) break;
      name += tokens[k].text;
    }
  }
  size_t begin = at;
  if (begin >= 1 && tokens[begin - 1] == "~") name = "~" + name, --begin;
  while (begin >= 2 && tokens[begin - 1] == "::" && is_identifier(tokens[begin - 2])) {
    begin -= 2;
    name = tokens[begin].text + "::" + name;
  }
  return name;
}

// The class, struct or union a `{` opens, or "" when it opens none.
std::string class_name(const std::vector<HeadToken>& tokens) {
  for (size_t k = 0; k + 1 < tokens.size(); ++k) {
    if (tokens[k] == "class" || tokens[k] == "struct" || tokens[k] == "union") {
      if (k > 0 && tokens[k - 1] == "enum") return "";
      return is_identifier(tokens[k + 1]) ? tokens[k + 1].text : std::string("(anonymous)");
    }
  }
  return "";
}

bool opens_namespace(const std::vector<HeadToken>& tokens) {
  return std::find(tokens.begin(), tokens.end(), "namespace") != tokens.end() ||
         (!tokens.empty() && tokens[0] == "extern");
}

// Every function body in one source text, with its length. One pass over the bytes, no recursion:
// a stack of the open scopes, and for the innermost declaration scope the text since its last
// `;`, `{` or `}` (the head of what comes next).
std::vector<FunctionSpan> function_spans(std::string_view source) {
  enum class Scope { declarations, function, other };
  struct Open {
    Scope scope;
    std::string name;  // the class's name for a class body, the function's for a function
    int line = 0;
    int name_line = 0;
    bool keeps_head = false;  // a brace inside a head (default argument, member initializer)
  };
  std::string code = code_without_directives(source);
  std::vector<Open> open;
  std::vector<FunctionSpan> spans;
  size_t head_begin = 0;
  int paren_depth = 0;  // inside the head
  int line = 1;
  auto in_declarations = [&] { return open.empty() || open.back().scope == Scope::declarations; };
  auto line_of = [&](size_t offset) {
    return 1 + static_cast<int>(std::count(code.begin(), code.begin() + static_cast<long>(offset), '\n'));
  };
  for (size_t i = 0; i < code.size(); ++i) {
    char c = code[i];
    if (c == '\n') {
      ++line;
      continue;
    }
    if (!in_declarations()) {
      if (c == '{') open.push_back({Scope::other, "", line, 0, false});
      if (c != '}') continue;
      Open closed = open.back();
      open.pop_back();
      if (closed.scope == Scope::function) {
        spans.push_back({closed.name, closed.name_line, line - closed.line + 1});
      }
      if (in_declarations() && !closed.keeps_head) head_begin = i + 1;
      continue;
    }
    if (c == '(') ++paren_depth;
    if (c == ')' && paren_depth > 0) --paren_depth;
    if (c == ';' && paren_depth == 0) head_begin = i + 1;
    if (c == '}') {
      if (!open.empty()) open.pop_back();
      head_begin = i + 1;
      paren_depth = 0;
    }
    if (c != '{') continue;
    std::string_view head(code.data() + head_begin, i - head_begin);
    std::vector<HeadToken> tokens = head_tokens(head);
    if (paren_depth > 0 || opens_member_initializer(tokens)) {
      open.push_back({Scope::other, "", line, 0, true});
      continue;
    }
    size_t head_at = head_begin;
    head_begin = i + 1;
    if (heads_function(tokens)) {
      size_t name_at = function_name_at(tokens);
      std::string owner;
      for (const Open& scope : open) {
        if (!scope.name.empty()) owner += scope.name + "::";
      }
      int name_line = line_of(head_at + (name_at < tokens.size() ? tokens[name_at].at : 0));
      open.push_back({Scope::function, owner + function_name(tokens, name_at), line, name_line, false});
    } else if (!class_name(tokens).empty()) {
      open.push_back({Scope::declarations, class_name(tokens), line, 0, false});
    } else if (opens_namespace(tokens)) {
      open.push_back({Scope::declarations, "", line, 0, false});
    } else {
      open.push_back({Scope::other, "", line, 0, false});
    }
  }
  return spans;
}

// A function exempt from the limit, and why.
struct Exemption {
  const char* file;      // relative to the source root
  const char* function;  // as the scanner names it; "*" for every function of the file
  const char* reason;
};

// A generator of one domain's CUDA program is its template: the kernel and host text as raw
// strings (or appended lines), with the drawn values filled in. Split, it would read worse.
constexpr const char* kCudaTemplate = "one CUDA program template: its text, filled with the drawn values";

constexpr Exemption kExemptions[] = {
    {"agents/generator/domains_api.cpp", "write_texture_sampling", kCudaTemplate},
    {"agents/generator/domains_api.cpp", "write_driver_buffers", kCudaTemplate},
    {"agents/generator/domains_api.cpp", "write_warp_votes", kCudaTemplate},
    {"agents/generator/domains_api.cpp", "write_runtime_queries", kCudaTemplate},
    {"agents/generator/domains_image.cpp", "write_image_filter", kCudaTemplate},
    {"agents/generator/domains_science.cpp", "write_nbody", kCudaTemplate},
    {"agents/generator/domains_science.cpp", "write_kmeans", kCudaTemplate},
    {"agents/generator/prelude.cpp", "program_prelude", "the CUDA programs' prelude: a chain of appends of its text"},
};

// The exemption that covers this function, or null.
const Exemption* exemption_of(const std::string& file, const std::string& function) {
  for (const Exemption& exemption : kExemptions) {
    if (file == exemption.file && (std::string(exemption.function) == "*" || function == exemption.function)) {
      return &exemption;
    }
  }
  return nullptr;
}

constexpr const char* kSourceFolders[] = {"agents",   "base", "daemon", "dashboard", "policies", "store",
                                          "synth",    "text", "verifier", "bench"};

// Every .cpp and .h of the sources (build and hidden folders left out), relative to the root, sorted.
std::vector<std::string> source_files(const std::string& root) {
  std::vector<std::string> files;
  if (fs::exists(root + "/main.cpp")) files.push_back("main.cpp");
  for (const char* folder : kSourceFolders) {
    fs::path dir = fs::path(root) / folder;
    if (!fs::is_directory(dir)) continue;
    for (auto entry = fs::recursive_directory_iterator(dir); entry != fs::recursive_directory_iterator(); ++entry) {
      std::string name = entry->path().filename().string();
      if (entry->is_directory() && (name.front() == '.' || name.rfind("build", 0) == 0)) {
        entry.disable_recursion_pending();  // a build or hidden folder holds no sources of ours
        continue;
      }
      std::string ext = entry->path().extension().string();
      if (!entry->is_regular_file() || (ext != ".cpp" && ext != ".h")) continue;
      files.push_back(entry->path().lexically_relative(root).string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// n lines of plain statements, for the synthetic inputs.
std::string statements(int n) {
  std::string body;
  for (int k = 0; k < n; ++k) body += "  x += " + std::to_string(k) + ";\n";
  return body;
}

TEST_CASE("function_spans: lengths, names, and braces in strings, comments and raw strings") {
  // 118 statements and a return between the braces' lines: 121 lines from `{` to `}`.
  std::string source = "namespace a {\nint long_one(int x) {\n" + statements(118) + "  return x;\n}\n" +
                       "int just_fits(int x)\n{\n" + statements(118) + "}\n}  // namespace a\n";
  std::vector<FunctionSpan> spans = function_spans(source);
  REQUIRE(spans.size() == 2);
  CHECK(spans[0].name == "long_one");
  CHECK(spans[0].line == 2);
  CHECK(spans[0].body_lines == 121);
  CHECK(spans[1].name == "just_fits");
  CHECK(spans[1].body_lines == 120);
  CHECK(spans[0].body_lines > kMaxFunctionLines);
  CHECK(spans[1].body_lines <= kMaxFunctionLines);

  std::string tricky = R"src(
#define OPEN {
struct Point {
  int x{0};
  Point() : x{1} {}
  int get() const noexcept {
    const char* s = "}}}{";  // }
    char c = '}';
    /* } } */
    const char* raw = R"x(} ")" })x";
    auto twice = [](int v) { return v * 2; };
    return twice(x) + s[0] + c + raw[0];
  }
};
auto later() -> int {
  return 1;
}
Point::Point(int y) : x(y), z_{2} {
}
)src";
  spans = function_spans(tricky);
  REQUIRE(spans.size() == 4);
  CHECK(spans[0].name == "Point::Point");
  CHECK(spans[1].name == "Point::get");
  CHECK(spans[1].line == 6);
  CHECK(spans[1].body_lines == 8);
  CHECK(spans[2].name == "later");
  CHECK(spans[2].body_lines == 3);
  CHECK(spans[3].name == "Point::Point");
  CHECK(spans[3].line == 18);
  CHECK(spans[3].body_lines == 2);
}

TEST_CASE("no function in the sources is longer than 120 lines") {
  std::string root = source_root();
  std::vector<std::string> files = source_files(root);
  REQUIRE(files.size() > 100);
  std::vector<std::string> too_long;
  std::set<const Exemption*> used;
  size_t functions = 0;
  for (const std::string& file : files) {
    std::vector<FunctionSpan> spans = function_spans(read_whole_file(root + "/" + file));
    functions += spans.size();
    for (const FunctionSpan& span : spans) {
      if (span.body_lines <= kMaxFunctionLines) continue;
      if (const Exemption* exemption = exemption_of(file, span.name)) {
        used.insert(exemption);
        continue;
      }
      too_long.push_back(file + ":" + std::to_string(span.line) + ": " + span.name + " (" +
                         std::to_string(span.body_lines) + " lines)");
    }
  }
  CHECK(functions > 1000);
  for (const Exemption& exemption : kExemptions) {  // a function that got shorter loses its exemption
    if (!used.count(&exemption)) {
      std::string stale = std::string(exemption.file) + ": " + exemption.function + " is no longer long: remove its exemption";
      FAIL_CHECK(stale);
    }
  }
  std::string list;
  for (const std::string& entry : too_long) list += entry + "\n";
  INFO("functions over ", kMaxFunctionLines, " lines:\n", list);
  CHECK(too_long.empty());
}

}  // namespace
}  // namespace tailforge
