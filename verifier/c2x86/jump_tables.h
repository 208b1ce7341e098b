// Finds jump tables in gcc's x86-64 AT&T assembly: a data label followed by entries that are
// code addresses (`.long .L10-.L4` with -fPIC, `.quad .L10` without), read by an indirect
// `jmp *...`. The c2x86 track compiles with -fno-jump-tables, so a table in an assembly it checks
// means the switch normalization did not hold. It reads text only; it assembles nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tailforge {

struct JumpTable {
  std::string label;                 // ".L4"
  int64_t line = 0;                  // 1-based line of the label
  std::vector<std::string> entries;  // the code labels, in table order: ".L10", ".L9", ...
  int64_t jump_line = 0;             // the first indirect `jmp *` after code that names the label; 0: none
};

// Every jump table of `assembly`, in the order of their labels. An entry is a `.long`/`.int`/
// `.4byte` or `.quad`/`.8byte` whose value is a label or a difference of labels whose first label
// is defined in code (a text section) and is not a function (`.type f, @function`), so tables of
// string or function pointers are not jump tables. Debug and unwind sections are not looked at.
std::vector<JumpTable> find_jump_tables(const std::string& assembly);

// One line naming a table for a failure message:
// "jump table .L4 at line 27 (8 entries: .L10 .L9 ...), read by the jmp at line 23".
std::string describe_jump_table(const JumpTable& table);

}  // namespace tailforge
