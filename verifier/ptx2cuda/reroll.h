// PTX loop rerolling for the ptx2cuda track (PtxDec, section III-D): folds the straight-line
// copies that `#pragma unroll` leaves in PTX back into Rolled-PTX loops, so a model reads one loop
// body instead of N copies, and expands Rolled-PTX back into PTX, losslessly. It does not prove
// that a fold is a loop of the source program; it only writes what reproduces the text exactly.
//
// Rolled-PTX, as written and read here (the PTX lines outside loops are unchanged):
//
//   for.size.2 i in range(0, 15, 1):
//     ld.global.f32 %f(5+i*3), [%rd6+(4+i*4)];
//     st.global.f32 [%rd7+(-64-i*4)], %f(5+i*3);
//
// * A loop header is `for.size.N VAR in range(START, STOP, STEP):`; VAR takes START, START+STEP, ...
//   below STOP (STEP > 0). The body is the next N statements; a nested loop, header and body,
//   counts as one. Loop variables are named by depth: i, j, k, l, m, n, then v6, v7, ...
// * In a body, a number that changes from one iteration to the next is written `(B+V*S ...)`:
//   a signed base, then one `+V*S` or `-V*S` term per loop variable it depends on, outermost
//   first. It replaces the register number (`%f(5+i*3)`), the address offset
//   (`[%rd6+(4+i*4)]`) or the immediate it stands for. Numbers that do not change stay as they are.
// * Body lines are indented two spaces per depth; indentation is cosmetic.
//
// Only straight-line code of one basic block is folded (see is_straight_line_statement): labels,
// directives, branches, calls, returns and exits are never inside a loop. Input PTX must not contain
// lines that already read as loop headers.
#pragma once

#include <string>

#include "base/result.h"
#include "verifier/ptx2cuda/ptx_statements.h"

namespace tailforge {

struct RerolledPtx {
  std::string text;        // Rolled-PTX, lines normalized as normalize_ptx does
  size_t chars_in = 0;     // characters of normalize_ptx(input): the reduction is rerolling's alone
  size_t chars_out = 0;    // characters of text
  int loops = 0;           // loop headers written, nested ones included
  bool fell_back = false;  // the folded text did not expand back exactly; text is the unfolded input

  // 1 - chars_out / chars_in (0 for empty input).
  double reduction() const;
};

// Algorithm 1 of PtxDec: top-down, a statement and the next one of the same shape give a body
// size; a body whose copies differ only in integers that step by a constant becomes a loop (at
// least 2 copies; of the candidates at a statement, the one that saves the most characters);
// then again over the result and inside loop bodies, so nested unrolling folds into nested loops.
// unroll_rolled_ptx(result.text) == normalize_ptx(text) always holds: reroll_ptx checks it and
// returns the unfolded normalized input (fell_back) where it would not.
RerolledPtx reroll_ptx(const std::string& text);

// Expands Rolled-PTX into PTX, normalized as normalize_ptx does. An error names the line (1-based)
// and what is wrong with it: a malformed header, a body cut short, an unknown loop variable.
Result<std::string> unroll_rolled_ptx(const std::string& text);

// The loop headers in a Rolled-PTX text.
int count_rolled_loops(const std::string& text);

}  // namespace tailforge
