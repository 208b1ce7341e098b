#include "verifier/kernelopt/compile_category.h"

#include <algorithm>

namespace tailforge {
namespace {

constexpr const char* kOther = "kernelopt.compile.other";
constexpr const char* kTimeout = "kernelopt.compile.timeout";

// What nvcc's front end (EDG), the host compiler (gcc) and the linkers (ld, nvlink) print for each
// kind, as literal parts of a message. Case matters: nvlink capitalizes what ld does not.
struct CompileMessage {
  const char* text;
  const char* category;
};
constexpr CompileMessage kMessages[] = {
    {"error: expected ", "kernelopt.compile.syntax"},  // nvcc 'expected a ";"', gcc "expected ';' before"
    {"error: unrecognized token", "kernelopt.compile.syntax"},
    {"error: missing closing quote", "kernelopt.compile.syntax"},
    {"error: unexpected end of file", "kernelopt.compile.syntax"},
    {"syntax error", "kernelopt.compile.syntax"},
    {"parse error", "kernelopt.compile.syntax"},
    {"\" is undefined", "kernelopt.compile.undeclared"},  // nvcc: identifier "x" is undefined
    {"was not declared in this scope", "kernelopt.compile.undeclared"},
    {"has not been declared", "kernelopt.compile.undeclared"},
    {"must be a class or namespace name", "kernelopt.compile.undeclared"},
    {"has no member", "kernelopt.compile.undeclared"},
    {"no suitable conversion", "kernelopt.compile.type"},
    {"no suitable constructor", "kernelopt.compile.type"},
    {"is incompatible with", "kernelopt.compile.type"},  // nvcc: argument of type "x" is incompatible with parameter
    {"incompatible types", "kernelopt.compile.type"},
    {"operand types are incompatible", "kernelopt.compile.type"},
    {"no instance of overloaded function", "kernelopt.compile.type"},
    {"no instance of function template", "kernelopt.compile.type"},
    {"no instance of constructor", "kernelopt.compile.type"},
    {"cannot be used to initialize an entity of type", "kernelopt.compile.type"},
    {"cannot be assigned to an entity of type", "kernelopt.compile.type"},
    {"invalid conversion from", "kernelopt.compile.type"},
    {"cannot convert", "kernelopt.compile.type"},
    {"no matching function for call", "kernelopt.compile.type"},
    {"arguments in function call", "kernelopt.compile.type"},  // too few / too many
    {"undefined reference to", "kernelopt.compile.link"},
    {"Undefined reference to", "kernelopt.compile.link"},
    {"multiple definition of", "kernelopt.compile.link"},
    {"Multiple definition of", "kernelopt.compile.link"},
    {"undefined symbol:", "kernelopt.compile.link"},
    {"ld returned 1 exit status", "kernelopt.compile.link"},
};

}  // namespace

std::string compile_failure_category(std::string_view diagnostics, bool timed_out) {
  if (timed_out) return kTimeout;
  const char* category = kOther;
  size_t earliest = std::string_view::npos;
  for (const CompileMessage& message : kMessages) {
    if (earliest == 0) break;
    // Only a match that starts before the earliest so far counts: search no further.
    std::string_view text = message.text;
    std::string_view before = earliest == std::string_view::npos ? diagnostics
                                                                 : diagnostics.substr(0, earliest - 1 + text.size());
    size_t at = before.find(text);
    if (at != std::string_view::npos && at < earliest) {
      earliest = at;
      category = message.category;
    }
  }
  return category;
}

std::vector<std::string> compile_failure_categories() {
  std::vector<std::string> categories = {kOther, kTimeout};
  for (const CompileMessage& message : kMessages) {
    if (std::find(categories.begin(), categories.end(), message.category) == categories.end()) {
      categories.push_back(message.category);
    }
  }
  return categories;
}

}  // namespace tailforge
