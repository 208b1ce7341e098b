#include "verifier/sass2rdna3/normalize.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "base/number.h"
#include "text/regex.h"

namespace tailforge {
namespace {

std::string trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// Whitespace runs outside double-quoted strings become one space.
std::string collapse_whitespace(const std::string& text) {
  std::string out;
  bool quoted = false, space = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    bool blank = !quoted && (c == ' ' || c == '\t');
    if (blank) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// The text before a ';' comment that is outside a string.
std::string without_semicolon_comment(const std::string& line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '"') quoted = !quoted;
    if (line[i] == ';' && !quoted) return line.substr(0, i);
  }
  return line;
}

// Opcodes whose last operand is a code address in cuobjdump output.
bool takes_code_address(const std::string& opcode) {
  static const std::set<std::string> branches = {"BRA", "BRX", "JMP", "JMX", "CALL", "SSY", "PBK", "PCNT", "BSSY"};
  return branches.count(opcode.substr(0, opcode.find('.'))) > 0;
}

struct SassLine {
  std::string address;  // "" for a label
  std::string text;
};

int64_t highest_index_plus_one(const std::string& text, const text::Regex& pattern, bool count_width) {
  int64_t highest = 0;
  text::for_each_match(text, pattern, [&](const text::Match& match) {
    int64_t last = 0, width = 0;
    if (!parse_int64(match[1].str(), last)) return true;  // past int64: no register file has it
    if (count_width && match[2].matched && parse_int64(match[2].str(), width)) last += width / 32 - 1;
    highest = std::max(highest, last + 1);
    return true;
  });
  return highest;
}

}  // namespace

std::string normalize_sass(const std::string& function_text) {
  static const text::Regex instruction(R"(^\s*/\*([0-9a-fA-F]+)\*/\s*(.*)$)");
  static const text::Regex encoding(R"(/\*\s*0x[0-9a-fA-F]+\s*\*/)");
  static const text::Regex label(R"(^\s*(\.?[A-Za-z_$][\w.$]*):\s*$)");
  std::vector<SassLine> lines;
  std::set<std::string> addresses;
  std::istringstream stream(function_text);
  std::string line;
  while (std::getline(stream, line)) {
    text::Match match;
    if (text::regex_match(line, match, instruction)) {
      std::string text = trim(text::regex_replace(std::string(match[2]), encoding, ""));
      if (text.empty()) continue;
      std::string address = match[1];
      address.erase(0, std::min(address.find_first_not_of('0'), address.size() - 1));
      std::transform(address.begin(), address.end(), address.begin(), ::tolower);
      addresses.insert(address);
      lines.push_back({address, text});
    } else if (text::regex_match(line, match, label)) {
      lines.push_back({"", std::string(match[1]) + ":"});
    }
    // Encoding-only lines, directives, headers and blank lines are dropped.
  }

  // Branch targets printed as addresses become labels, numbered in address order.
  static const text::Regex target(R"(^(@!?U?P\w+\s+)?([A-Z][\w.]*)\s+(.*?)(0x[0-9a-fA-F]+)\s*;?\s*$)");
  std::map<std::string, std::string> labels;
  for (SassLine& sass : lines) {
    text::Match match;
    if (sass.address.empty() || !text::regex_match(sass.text, match, target) || !takes_code_address(match[2])) continue;
    std::string address = std::string(match[4]).substr(2);
    address.erase(0, std::min(address.find_first_not_of('0'), address.size() - 1));
    if (addresses.count(address)) labels[address] = "";
  }
  std::vector<std::pair<unsigned long, std::string>> ordered;
  for (auto& entry : labels) {
    int64_t address = 0;
    if (parse_int64(entry.first, address, 16)) ordered.push_back({static_cast<unsigned long>(address), entry.first});
  }
  std::sort(ordered.begin(), ordered.end());
  for (size_t i = 0; i < ordered.size(); ++i) labels[ordered[i].second] = ".L_x_" + std::to_string(i);

  std::string out;
  for (SassLine& sass : lines) {
    if (sass.address.empty()) {
      out += sass.text + "\n";
      continue;
    }
    auto own = labels.find(sass.address);
    if (own != labels.end()) out += own->second + ":\n";
    std::string text = collapse_whitespace(sass.text);
    text::Match match;
    if (text::regex_match(text, match, target) && takes_code_address(match[2])) {
      std::string address = std::string(match[4]).substr(2);
      address.erase(0, std::min(address.find_first_not_of('0'), address.size() - 1));
      auto found = labels.find(address);
      if (found != labels.end()) {
        text = std::string(match[1]) + std::string(match[2]) + " " + std::string(match[3]) + "`(" + found->second + ")";
      }
    }
    text = trim(text);
    while (text.size() >= 2 && text[text.size() - 1] == ';' && text[text.size() - 2] == ' ') {
      text.erase(text.size() - 2, 1);
    }
    if (text.back() != ';') text += ";";
    out += text + "\n";
  }
  return out;
}

std::string normalize_rdna3(const std::string& assembly) {
  std::string out;
  std::istringstream stream(assembly);
  std::string line;
  bool metadata = false;
  while (std::getline(stream, line)) {
    if (metadata) {
      // YAML: indentation is meaning. Only trailing blanks go.
      size_t end = line.find_last_not_of(" \t\r");
      if (end == std::string::npos) continue;
      line.erase(end + 1);
      if (trim(line) == ".end_amdgpu_metadata") {
        out += "\t.end_amdgpu_metadata\n";
        metadata = false;
      } else {
        out += line + "\n";
      }
      continue;
    }
    std::string code = trim(collapse_whitespace(without_semicolon_comment(line)));
    if (code.empty()) continue;
    if (code == ".amdgpu_metadata") metadata = true;
    bool is_label = code.back() == ':' && code.find(' ') == std::string::npos;
    out += (is_label ? "" : "\t") + code + "\n";
  }
  return out;
}

AssemblyStats sass_stats(const std::string& normalized_sass) {
  static const text::Regex registers(R"(\bR(\d+)(?:\.(64|128))?\b)");
  static const text::Regex uniform(R"(\bUR(\d+)(?:\.(64|128))?\b)");
  static const text::Regex predicates(R"(\bU?P(\d)\b)");
  static const text::Regex instruction(R"(^(@!?U?P\w+\s+)?[A-Z][A-Z0-9_]*(\.[\w]+)*(\s.*)?;$)");
  AssemblyStats stats;
  std::istringstream stream(normalized_sass);
  std::string line;
  std::string body;
  while (std::getline(stream, line)) {
    if (line.empty()) continue;
    if (line.back() == ':') {
      ++stats.labels;
    } else if (text::regex_match(line, instruction)) {
      ++stats.instructions;
      body += line + "\n";
    } else {
      stats.unparsed.push_back(line);
    }
  }
  stats.registers = highest_index_plus_one(body, registers, true);
  stats.scalar_registers = highest_index_plus_one(body, uniform, true);
  stats.predicates = highest_index_plus_one(body, predicates, false);
  return stats;
}

AssemblyStats rdna3_stats(const std::string& assembly) {
  static const text::Regex next_free(R"(^\s*\.amdhsa_next_free_(v|s)gpr\s+(\d+))");
  static const text::Regex label(R"(^\s*[.\w$]+:\s*$)");
  AssemblyStats stats;
  std::istringstream stream(assembly);
  std::string line;
  bool skip = false;  // inside a kernel descriptor or the metadata
  while (std::getline(stream, line)) {
    std::string code = trim(without_semicolon_comment(line));
    if (code.empty()) continue;
    if (code.rfind(".amdhsa_kernel", 0) == 0 || code == ".amdgpu_metadata") skip = true;
    if (code == ".end_amdhsa_kernel" || code == ".end_amdgpu_metadata") {
      skip = false;
      continue;
    }
    text::Match match;
    if (text::regex_search(code, match, next_free)) {
      int64_t count = 0;
      if (parse_int64(match[2].str(), count)) (match[1] == "v" ? stats.registers : stats.scalar_registers) = count;
      continue;
    }
    if (skip) continue;
    if (text::regex_match(code, label)) {
      if (code.rfind(".L", 0) == 0) ++stats.labels;
    } else if (code[0] != '.' && std::isalpha(static_cast<unsigned char>(code[0]))) {
      ++stats.instructions;
    }
  }
  return stats;
}

nlohmann::json assembly_stats_to_json(const AssemblyStats& stats) {
  return {{"instructions", stats.instructions}, {"registers", stats.registers},
          {"scalar_registers", stats.scalar_registers}, {"predicates", stats.predicates},
          {"labels", stats.labels}, {"unparsed_lines", stats.unparsed.size()}};
}

}  // namespace tailforge
