// The c2x86 track's procedural generator: C functions over the C->x86 paper's feature mix
// (arithmetic, loops, arrays, pointers, structs, strings, recursion, switch, float and double
// math, bit operations, library calls), each with a driver that reads one IO case from stdin and
// prints what the function returned and wrote, and the IO cases' inputs. Expected outputs are not
// computed here: they come from running the gcc build (record_expected_outputs in
// verifier/c2x86/io_tests.h). The same seed and index always give the same function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "verifier/c2x86/c_function.h"

namespace tailforge {

// Every feature tag the generator writes, in a fixed order.
const std::vector<std::string>& c_feature_tags();

// The function kinds ("switch_dispatch", "float_blend", ...), each of which writes one or more
// feature tags.
const std::vector<std::string>& c_function_kinds();

struct CGenerationRequest {
  uint64_t seed = 1;
  uint64_t index = 0;   // the batch position: kinds rotate with it
  std::string kind;     // empty: chosen by index; else one of c_function_kinds()
  size_t cases = 8;     // IO cases per function
};

// One function with its driver and case inputs (expected outputs empty); an error for an unknown
// kind.
Result<CFunction> generate_c_function(const CGenerationRequest& request);

}  // namespace tailforge
