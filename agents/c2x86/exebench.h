// Reading ExeBench records (one JSON object per line, as the dataset's jsonl files hold them) into
// c2x86 functions: `fname` and `func_def` give the function, `real_deps`/`synth_deps` the types and
// declarations it needs, `real_io_pairs`/`synth_io_pairs` the IO cases (variable names and values
// written as Python literals, plus `dummy_funcs` that stand in for what the function calls), and
// `real_exe_wrapper`/`synth_exe_wrapper` the C++ driver that reads the inputs as JSON from argv[1]
// and writes the outputs as JSON to argv[2]. The wrapper becomes a driver the track runs like its
// own: its main() is renamed and called by a small main() that takes the input JSON on stdin and
// prints the output JSON on stdout, so an IO case is one stdin and one expected stdout. Real IO
// pairs are preferred to synthetic ones. It runs nothing and stores nothing.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "verifier/c2x86/c_function.h"

namespace tailforge {

// The function of one record, with its C feature tags; the error names the field at fault.
Result<CFunction> c_function_from_exebench(const nlohmann::json& record, size_t max_cases = 10);

// A Python literal as ExeBench writes IO values (ints, floats, 'strings', "strings", lists,
// tuples, dicts, True/False/None) as JSON; an error says where it stops being one.
Result<nlohmann::json> python_literal_to_json(const std::string& text);

// The C feature tags of a function's source, by keyword: switch, float, double, recursion (the
// function calls itself), loops, arrays, pointers, structs, strings, bit_operations,
// library_calls, arithmetic.
std::vector<std::string> c_feature_tags_of_source(const std::string& source, const std::string& name);

}  // namespace tailforge
