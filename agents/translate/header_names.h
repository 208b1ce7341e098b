// The identifiers a C or C++ header declares, found by a hand-written scanner over its text: it
// reads no includes, evaluates no #if and knows no types, so it is a close approximation, not a
// compiler. agents/translate/hipify_names.h builds the CUDA->HIP name table from it.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace tailforge {

// Adds to `names` what `text` declares, with comments, string and character literals blanked:
//   - the name of every #define;
//   - every identifier followed by `(` (functions, function-like macro uses), C/C++ keywords aside;
//   - the tag of every struct, union, enum and class (attribute macros such as __device_builtin__
//     skipped), every enum constant, every typedef name (`typedef T name;`, `typedef R (*name)(...)`)
//     and every `using name =`;
//   - what an invocation of a function-like macro defined earlier in the same text declares, when
//     that macro's body declares something (`DEFINE_STATE(hiprandState, ...)` declaring
//     `struct hiprandState` and, by ## pasting, `hiprandState_t`); expansions are not expanded again.
// Parameter names, struct members and local variables are not declarations here. Linear in the
// text's size (lookahead and expansions are capped), no recursion; never throws on any input.
void scan_declared_names(std::string_view text, std::set<std::string>& names);

}  // namespace tailforge
