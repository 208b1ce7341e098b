#include "verifier/ptx2cuda/ptx_statements.h"

#include <cctype>

#include "text/chars.h"

namespace tailforge {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

bool is_label(const std::string& text) {
  if (text.size() < 2 || text.back() != ':') return false;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (!text::is_assembler_symbol_char(text[i]) && text[i] != '%') return false;
  }
  return true;
}

// Splits "a, {b, c}, [d+1]" at the commas outside brackets, braces and parentheses.
std::vector<std::string> split_operands(const std::string& text) {
  std::vector<std::string> operands;
  std::string current;
  int depth = 0;
  for (char c : text) {
    if (c == '[' || c == '{' || c == '(') ++depth;
    if (c == ']' || c == '}' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      operands.push_back(normalize_ptx_line(current));
      current.clear();
    } else {
      current += c;
    }
  }
  if (!normalize_ptx_line(current).empty()) operands.push_back(normalize_ptx_line(current));
  return operands;
}

// Fills guard, opcode and operands when `statement.text` reads as "[@guard] opcode [operands];".
bool parse_instruction(PtxStatement& statement) {
  const std::string& text = statement.text;
  if (text.empty() || text.back() != ';') return false;
  size_t start = 0;
  if (text[0] == '@') {
    start = text.find(' ');
    if (start == std::string::npos) return false;
    statement.guard = text.substr(0, start);
    ++start;
  }
  if (start >= text.size() || !text::is_ascii_letter(text[start])) return false;
  size_t end = start;
  while (end < text.size() && (text::is_assembler_symbol_char(text[end]) || text[end] == ':')) ++end;
  statement.opcode = text.substr(start, end - start);
  if (text[end] != ' ' && text[end] != ';') return false;
  statement.operands = split_operands(text.substr(end, text.size() - 1 - end));
  return true;
}

PtxStatementKind classify(PtxStatement& statement, bool in_block_comment) {
  const std::string& text = statement.text;
  if (in_block_comment || text.rfind("//", 0) == 0 || text.rfind("/*", 0) == 0) return PtxStatementKind::comment;
  if (text.empty()) return PtxStatementKind::blank;
  if (text[0] == '.') return PtxStatementKind::directive;
  if (text[0] == '{' || text[0] == '}') {
    PtxStatement inside;  // nvcc writes inline assembly as "{add.f16 %rs1,%rs2,%rs3;"
    inside.text = normalize_ptx_line(text.substr(1));
    if (parse_instruction(inside)) {
      statement.guard = inside.guard;
      statement.opcode = inside.opcode;
      statement.operands = inside.operands;
    }
    return PtxStatementKind::brace;
  }
  if (is_label(text)) return PtxStatementKind::label;
  if (parse_instruction(statement)) return PtxStatementKind::instruction;
  return PtxStatementKind::other;
}

// Whether a block comment is still open at the end of `text`, given whether it was at the start.
bool block_comment_open_after(const std::string& text, bool open) {
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    std::string pair = text.substr(i, 2);
    if (!open && pair == "//") return false;
    if (pair == (open ? "*/" : "/*")) {
      open = !open;
      ++i;
    }
  }
  return open;
}

// A decimal integer that prints back to the same text and stays far from overflow.
bool is_canonical_integer(const std::string& digits) {
  size_t first = digits[0] == '-' ? 1 : 0;
  size_t length = digits.size() - first;
  if (length == 0 || length > 9) return false;
  if (digits[first] == '0') return length == 1 && first == 0;
  return true;
}

bool may_start_signed_number(const std::string& text, size_t at) {
  if (text[at] != '-' || at + 1 >= text.size() || !text::is_ascii_digit(text[at + 1])) return false;
  if (at == 0) return true;
  char before = text[at - 1];
  return before == ' ' || before == ',' || before == '[' || before == '{' || before == '+';
}

class TemplateScanner {
 public:
  explicit TemplateScanner(const std::string& text) : text_(text) { result_.literals.emplace_back(); }

  NumericTemplate scan() {
    while (at_ < text_.size()) {
      char c = text_[at_];
      if (c == '%') {
        scan_register();
      } else if (text::is_ascii_letter(c) || c == '_' || c == '$' || c == '.') {
        literal(identifier_end(at_));
      } else if (text::is_ascii_digit(c) || may_start_signed_number(text_, at_)) {
        scan_number();
      } else {
        literal(at_ + 1);
      }
    }
    return result_;
  }

 private:
  size_t identifier_end(size_t from) const {
    while (from < text_.size() && text::is_assembler_symbol_char(text_[from])) ++from;
    return from;
  }
  size_t digits_end(size_t from) const {
    while (from < text_.size() && text::is_ascii_digit(text_[from])) ++from;
    return from;
  }
  bool ends_token(size_t at) const { return at >= text_.size() || !text::is_assembler_symbol_char(text_[at]); }

  void literal(size_t end) {
    result_.literals.back() += text_.substr(at_, end - at_);
    at_ = end;
  }
  void field(size_t end) {
    result_.values.push_back(std::stoll(text_.substr(at_, end - at_)));
    result_.literals.emplace_back();
    at_ = end;
  }

  // "%rd38": "%rd" is literal, 38 a field; "%tid.x" and "%r1.x" are literal.
  void scan_register() {
    size_t name_end = at_ + 1;
    while (name_end < text_.size() && (text::is_ascii_letter(text_[name_end]) || text_[name_end] == '_')) ++name_end;
    size_t number_end = digits_end(name_end);
    if (number_end == name_end || !ends_token(number_end) ||
        !is_canonical_integer(text_.substr(name_end, number_end - name_end))) {
      literal(identifier_end(at_ + 1));
      return;
    }
    literal(name_end);
    field(number_end);
  }

  // "16" and "-64" are fields; "0x1F", "0f3F800000", "1.5" and "007" are literal.
  void scan_number() {
    size_t end = digits_end(text_[at_] == '-' ? at_ + 1 : at_);
    if (!ends_token(end)) {
      literal(identifier_end(end));
    } else if (is_canonical_integer(text_.substr(at_, end - at_))) {
      field(end);
    } else {
      literal(end);
    }
  }

  const std::string& text_;
  size_t at_ = 0;
  NumericTemplate result_;
};

}  // namespace

std::string normalize_ptx_line(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (char c : line) {
    if (!is_blank(c)) {
      out += c;
    } else if (!out.empty() && out.back() != ' ') {
      out += ' ';
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::vector<std::string> split_ptx_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string normalize_ptx(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const std::string& line : split_ptx_lines(text)) out += normalize_ptx_line(line) + "\n";
  return out;
}

std::vector<PtxStatement> parse_ptx_statements(const std::string& text) {
  std::vector<PtxStatement> statements;
  bool in_block_comment = false;
  int line_number = 0;
  for (const std::string& line : split_ptx_lines(text)) {
    PtxStatement statement;
    statement.line = ++line_number;
    statement.text = normalize_ptx_line(line);
    statement.kind = classify(statement, in_block_comment);
    in_block_comment = block_comment_open_after(statement.text, in_block_comment);
    statements.push_back(std::move(statement));
  }
  return statements;
}

bool is_straight_line_statement(const PtxStatement& statement) {
  if (statement.text.find('(') != std::string::npos || statement.text.find(')') != std::string::npos) return false;
  if (statement.kind == PtxStatementKind::comment) return statement.text.rfind("//", 0) == 0;
  if (statement.kind == PtxStatementKind::brace && statement.opcode.empty()) {
    std::string rest = normalize_ptx_line(statement.text.substr(1));
    return rest.empty() || rest.rfind(".reg ", 0) == 0;
  }
  if (statement.kind != PtxStatementKind::instruction && statement.kind != PtxStatementKind::brace) return false;
  std::string root = statement.opcode.substr(0, statement.opcode.find('.'));
  return root != "bra" && root != "brx" && root != "call" && root != "ret" && root != "exit";
}

NumericTemplate numeric_template(const PtxStatement& statement) { return TemplateScanner(statement.text).scan(); }

}  // namespace tailforge
