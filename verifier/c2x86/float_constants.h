// c2x86 symbolic interpretation (the C→x86 paper, section 3.1): the target form a model learns
// writes float and double constants as literals instead of the IEEE-754 words gcc puts in its
// constant pool, and a rule-based interpreter turns the literals back into those exact words before
// the model's assembly is assembled. It does not touch instructions, labels or any other data.
//
// Symbolic form, as written and read here (every other line is unchanged):
//
//   .LC0:                          .LC0:
//   	.long	1069547520      <->  	.float_literal	1.5f
//   .LC1:                          .LC1:
//   	.long	-1717986918     <->  	.double_literal	0.1
//   	.long	1069128089
//
// * A literal is the shortest decimal that reads back to the same bits (std::to_chars), with a
//   decimal point or an exponent, and `f` on finite floats: `1.5f`, `6.0f`, `1e-45f`, `-0.0`,
//   `0.3333333333333333`. Infinities are `inf`, `-inf`; NaNs are `nan(0xP)` (quiet) or `snan(0xP)`
//   (signalling, P > 0) with an optional `-`, P being the mantissa bits below the quiet bit, as C's
//   nan("0xP") and __builtin_nans("0xP") read it.
// * The interpreter also reads what a model may write instead: hex-floats (`0x1.8p+0`), exponents
//   (`1.5e0`), integers, `+`, upper case, a missing `f`; decimals are rounded to nearest-even
//   straight to the directive's type (a float is never rounded through a double). It refuses an `f`
//   on a `.double_literal` (C would read it as a float) and a value that rounds to 0 or infinity.
// * `.float_literal`/`.double_literal` are not GNU as directives, so text that skipped the
//   interpreter fails to assemble instead of assembling gas's own `.float`/`.double` conversion.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace tailforge {

enum class FloatFormat { none, binary32, binary64 };

// One constant-pool entry the symbolizer looked at: a label in a .rodata section whose data is
// nothing but integer `.long`/`.quad` words.
struct FloatConstant {
  std::string label;                       // ".LC3"
  int64_t line = 0;                        // 1-based line of the label in the gcc assembly
  FloatFormat format = FloatFormat::none;  // as the instructions that load it read it
  bool symbolized = false;
  bool respelled = false;  // symbolized, but interpreting it gives gcc's `.long` words, not the
                           // original spelling (a `.quad`, hex words): the same bytes, other text
  std::string literal;     // the literal written, when symbolized
  std::string note;        // what was done, or why the entry was left as it is
};

struct SymbolicAssembly {
  std::string text;
  std::vector<FloatConstant> constants;  // in the order of their labels

  int64_t symbolized() const;
};

// Rewrites the float and double constants of gcc's x86-64 AT&T assembly (-O0 or optimized: pool
// entries in .rodata or .rodata.cst4/8/16) into `.float_literal`/`.double_literal` lines. The type
// comes from the instructions that load the label (`movss`/`addss`/`comiss`/`cvtss2sd`/`flds`…:
// float; their `sd`/`l` forms: double). An entry is left as it is, and reported, when it is not
// loaded by such an instruction, is loaded as both types, is also used otherwise (an address, a
// `movq`, `xorps`, `fldt`), or is not one scalar of that type (the 16-byte sign and abs masks that
// gcc loads with movss/movq for xorps/andps, vectors, arrays). interpret_float_constants(result.text)
// == gcc_assembly whenever no constant is `respelled`; it is checked for every entry written.
// An error only for text that already contains symbolic directives.
Result<SymbolicAssembly> symbolize_float_constants(const std::string& gcc_assembly);

// Writes every `.float_literal`/`.double_literal` line as the `.long` words gcc writes for its value
// (signed decimal, low word first for a double), with the line's indentation and the whitespace
// after its directive. An error names each malformed line (1-based) and what is wrong with it.
Result<std::string> interpret_float_constants(const std::string& symbolic);

// The symbolic literal of a float's or a double's bits (see the form above).
std::string float_literal(uint32_t bits);
std::string double_literal(uint64_t bits);

// The bits a literal stands for, correctly rounded; an error says why a literal is not one.
Result<uint32_t> parse_float_literal(const std::string& literal);
Result<uint64_t> parse_double_literal(const std::string& literal);

}  // namespace tailforge
