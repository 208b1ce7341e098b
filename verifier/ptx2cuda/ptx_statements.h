// PTX text as a list of statements, one per line, for the loop reroller (reroll.h): each line is
// classified (instruction, label, directive, brace, comment, blank, other) and an instruction is
// split into guard, opcode and operands, and into literal text and the integers that may vary.
// It does not check that the PTX is valid; a line it cannot read is kept as an opaque `other`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tailforge {

// Whitespace normalization, the equality the reroll round trip keeps: in every line, runs of
// spaces, tabs and carriage returns become one space and the line is trimmed; every line ends
// with "\n" (a missing final newline is added). Line count and order are kept.
std::string normalize_ptx_line(const std::string& line);
std::string normalize_ptx(const std::string& text);
// The lines of `text` without their "\n"; a final newline makes no empty last line.
std::vector<std::string> split_ptx_lines(const std::string& text);

enum class PtxStatementKind { instruction, label, directive, brace, comment, blank, other };

struct PtxStatement {
  PtxStatementKind kind = PtxStatementKind::other;
  int line = 0;      // 1-based line of the input
  std::string text;  // the normalized line
  // An instruction's parts, also filled for a brace line that holds one ("{add.f16 %rs1,%rs2,%rs3;").
  std::string guard;                  // "@%p1", "@!%p1" or ""
  std::string opcode;                 // opcode with its modifiers, "ld.global.nc.f32"
  std::vector<std::string> operands;  // "%f1", "{%f1, %f2}", "[%rd4+16]", "1", "$L__BB0_2"
};

// One statement per line of `text`, every line kept (blank and comment lines included).
std::vector<PtxStatement> parse_ptx_statements(const std::string& text);

// A statement that may sit inside a rerolled loop: straight-line code, so an instruction that is
// no branch, call, return or exit, or a scope brace ("{", "}", "{.reg ...", nvcc's inline
// assembly "{add.f16 %rs1,%rs2,%rs3;") or a "//" comment line ("// begin inline asm"); nothing
// with a parenthesis (Rolled-PTX's expressions). Labels, directives and block comments never are.
bool is_straight_line_statement(const PtxStatement& statement);

// A statement's text as literals around integer fields: register numbers (%r882 -> 882),
// address offsets ([%rd4+-16] -> -16) and decimal immediates. literals.size() == values.size() + 1
// and literals[0] + values[0] + literals[1] + ... is the statement's text. The opcode and
// symbols are literal; hex, float and out-of-range numbers stay literal too.
struct NumericTemplate {
  std::vector<std::string> literals;
  std::vector<int64_t> values;
};
NumericTemplate numeric_template(const PtxStatement& statement);

}  // namespace tailforge
