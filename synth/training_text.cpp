#include "synth/training_text.h"

#include <string_view>

namespace tailforge {
namespace {

constexpr std::string_view kProvenance = "// tailforge generated program:";

// Whether the line, leading blanks aside, is a provenance line.
bool is_added_line(std::string_view line) {
  size_t start = line.find_first_not_of(" \t");
  return start != std::string_view::npos && line.substr(start, kProvenance.size()) == kProvenance;
}

}  // namespace

std::string training_text(const std::string& text) {
  if (text.find(kProvenance) == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t end = rest.find('\n');
    std::string_view line = rest.substr(0, end == std::string_view::npos ? rest.size() : end + 1);
    if (!is_added_line(line)) out.append(line);
    rest.remove_prefix(line.size());
  }
  return out;
}

bool has_tailforge_marker(const std::string& text) {
  std::string_view rest = text;
  for (size_t at = rest.find(kProvenance); at != std::string_view::npos; at = rest.find(kProvenance, at + 1)) {
    size_t line_start = rest.rfind('\n', at);
    line_start = line_start == std::string_view::npos ? 0 : line_start + 1;
    if (is_added_line(rest.substr(line_start, at - line_start + kProvenance.size()))) return true;
  }
  return false;
}

}  // namespace tailforge
