#include "verifier/c2x86/jump_tables.h"

#include <cctype>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "text/chars.h"

namespace tailforge {
namespace {

// The line without its `#` comment; a `#` inside a string literal is kept.
std::string_view strip_comment(std::string_view line) {
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && quoted) {
      ++i;
    } else if (line[i] == '"') {
      quoted = !quoted;
    } else if (line[i] == '#' && !quoted) {
      return line.substr(0, i);
    }
  }
  return line;
}

// The first whitespace-separated word and what follows it, trimmed.
std::pair<std::string_view, std::string_view> split_word(std::string_view text) {
  size_t end = text.find_first_of(" \t");
  if (end == std::string_view::npos) return {text, {}};
  return {text.substr(0, end), text::trim_blanks(text.substr(end))};
}

struct Section {
  std::string name = ".text";
  bool code = true;
};

bool ignored_section(const std::string& name) {
  for (std::string_view prefix : {".debug", ".eh_frame", ".gcc_except_table", ".note", ".comment", ".stab"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// `.section NAME[, "flags"[, ...]]`: executable when it is a text section or its flags hold 'x'.
Section parse_section(std::string_view operands) {
  Section section;
  size_t comma = operands.find(',');
  section.name = std::string(text::trim_blanks(operands.substr(0, comma)));
  std::string_view flags = comma == std::string_view::npos ? std::string_view{} : text::trim_blanks(operands.substr(comma + 1));
  if (!flags.empty() && flags.front() == '"') {
    flags = flags.substr(1);
    flags = flags.substr(0, flags.find('"'));
  } else {
    flags = {};
  }
  section.code = section.name.rfind(".text", 0) == 0 || flags.find('x') != std::string_view::npos;
  return section;
}

// One source line: at most a label and a statement, with the section it is in.
struct Line {
  int64_t number = 0;
  Section section;
  std::string label;      // "" when the line defines none
  std::string statement;  // trimmed, comment removed
};

std::vector<Line> parse_lines(const std::string& assembly) {
  std::vector<Line> lines;
  Section current, previous;
  std::vector<Section> stack;
  std::string_view text = assembly;
  int64_t number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    Line line;
    line.number = ++number;
    std::string_view rest = text::trim_blanks(strip_comment(text.substr(start, end - start)));
    start = end + 1;
    size_t symbol_end = 0;
    while (symbol_end < rest.size() && text::is_assembler_symbol_char(rest[symbol_end])) ++symbol_end;
    if (symbol_end > 0 && symbol_end < rest.size() && rest[symbol_end] == ':') {
      line.label = std::string(rest.substr(0, symbol_end));
      rest = text::trim_blanks(rest.substr(symbol_end + 1));
    }
    auto [word, operands] = split_word(rest);
    if (word == ".text" || word == ".data" || word == ".bss") {
      previous = current;
      current = {std::string(word), word == ".text"};
    } else if (word == ".section" || word == ".pushsection") {
      if (word == ".pushsection") stack.push_back(current);
      previous = current;
      current = parse_section(operands);
    } else if (word == ".popsection" && !stack.empty()) {
      previous = current;
      current = stack.back();
      stack.pop_back();
    } else if (word == ".previous") {
      std::swap(current, previous);
    }
    line.section = current;
    line.statement = std::string(rest);
    lines.push_back(std::move(line));
  }
  return lines;
}

bool is_entry_directive(std::string_view word) {
  for (std::string_view directive : {".long", ".int", ".4byte", ".quad", ".8byte"}) {
    if (word == directive) return true;
  }
  return false;
}

bool is_alignment(std::string_view word) { return word == ".align" || word == ".p2align" || word == ".balign"; }

// The label an entry's value starts from: ".L10" for ".L10-.L4" and ".L10"; nullopt for a number.
std::optional<std::string> entry_target(std::string_view value) {
  value = text::trim_blanks(value.substr(0, value.find('-')));
  if (value.empty() || std::isdigit(static_cast<unsigned char>(value.front())) || value.front() == '$')
    return std::nullopt;
  for (char c : value) {
    if (!text::is_assembler_symbol_char(c)) return std::nullopt;
  }
  return std::string(value);
}

// Whether `text` names `label` as a whole symbol.
bool mentions(std::string_view text, std::string_view label) {
  for (size_t at = text.find(label); at != std::string_view::npos; at = text.find(label, at + 1)) {
    bool starts = at == 0 || !text::is_assembler_symbol_char(text[at - 1]);
    bool ends = at + label.size() == text.size() || !text::is_assembler_symbol_char(text[at + label.size()]);
    if (starts && ends) return true;
  }
  return false;
}

bool is_indirect_jump(std::string_view statement) {
  auto [word, operands] = split_word(statement);
  while (word == "notrack" || word == "bnd") std::tie(word, operands) = split_word(operands);
  return (word == "jmp" || word == "jmpq") && !operands.empty() && operands.front() == '*';
}

}  // namespace

std::vector<JumpTable> find_jump_tables(const std::string& assembly) {
  std::vector<Line> lines = parse_lines(assembly);
  std::set<std::string> code_labels, functions;
  for (const Line& line : lines) {
    if (!line.label.empty() && line.section.code) code_labels.insert(line.label);
    auto [word, operands] = split_word(line.statement);
    if (word == ".type" && (operands.find("@function") != std::string_view::npos ||
                            operands.find("%function") != std::string_view::npos)) {
      functions.insert(std::string(text::trim_blanks(operands.substr(0, operands.find(',')))));
    }
  }
  // The code labels of one entry line, or nothing when any of its values is not one.
  auto code_targets = [&](std::string_view operands) {
    std::vector<std::string> targets;
    for (size_t start = 0; start <= operands.size();) {
      size_t comma = operands.find(',', start);
      if (comma == std::string_view::npos) comma = operands.size();
      std::optional<std::string> target = entry_target(operands.substr(start, comma - start));
      if (!target || !code_labels.count(*target) || functions.count(*target)) return std::vector<std::string>{};
      targets.push_back(*target);
      start = comma + 1;
    }
    return targets;
  };

  std::vector<JumpTable> tables;
  std::optional<JumpTable> open;  // the label whose entries are being read
  auto close = [&] {
    if (open && !open->entries.empty()) tables.push_back(std::move(*open));
    open.reset();
  };
  for (const Line& line : lines) {
    if (!line.label.empty()) {
      close();
      if (!ignored_section(line.section.name)) open = JumpTable{line.label, line.number, {}, 0};
    }
    if (!open || line.statement.empty()) continue;
    auto [word, operands] = split_word(line.statement);
    if (is_alignment(word) && open->entries.empty()) continue;
    std::vector<std::string> targets = is_entry_directive(word) ? code_targets(operands) : std::vector<std::string>{};
    if (targets.empty()) {
      close();
      continue;
    }
    open->entries.insert(open->entries.end(), targets.begin(), targets.end());
  }
  close();

  for (JumpTable& table : tables) {
    bool named = false;
    for (const Line& line : lines) {
      if (!line.section.code) continue;
      if (!named) named = mentions(line.statement, table.label);
      if (named && is_indirect_jump(line.statement)) {
        table.jump_line = line.number;
        break;
      }
    }
  }
  return tables;
}

std::string describe_jump_table(const JumpTable& table) {
  std::string text = "jump table " + table.label + " at line " + std::to_string(table.line) + " (" +
                     std::to_string(table.entries.size()) + (table.entries.size() == 1 ? " entry:" : " entries:");
  for (size_t i = 0; i < table.entries.size() && i < 8; ++i) text += " " + table.entries[i];
  if (table.entries.size() > 8) text += " ...";
  text += ")";
  if (table.jump_line > 0) text += ", read by the jmp at line " + std::to_string(table.jump_line);
  return text;
}

}  // namespace tailforge
