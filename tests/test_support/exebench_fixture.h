// An ExeBench-style record for tests: clamp_total(values, n, limit) clamps the values in place
// and returns their sum, with two synthetic IO pairs whose first total is `expected_total` (12 is
// right) and a C++ exe wrapper that reads its inputs from the JSON file argv[1] and writes its
// outputs to argv[2], as the dataset's wrappers do.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tailforge {

// A wrapper in ExeBench's style: inputs from the JSON file argv[1], outputs to argv[2].
inline const char* kExeBenchWrapper = R"(#include <fstream>
#include <vector>
#include "json.hpp"
using json = nlohmann::json;
extern "C" {
#include "placeholder.h"
}
int main(int argc, char* argv[]) {
  std::ifstream in(argv[1]);
  json inputs;
  in >> inputs;
  std::vector<int> values = inputs["values"];
  int n = inputs["n"];
  int limit = inputs["limit"];
  int result = clamp_total(values.data(), n, limit);
  json outputs;
  outputs["returnv"] = result;
  outputs["values"] = values;
  std::ofstream(argv[2]) << outputs;
  return 0;
}
)";

inline nlohmann::json exebench_record(const std::string& expected_total) {
  using nlohmann::json;
  return {{"fname", "clamp_total"},
          {"func_def",
           "int clamp_total(int *values, int n, int limit) {\n  int total = 0;\n  for (int i = 0; i < n; i++) {\n"
           "    if (values[i] > limit) values[i] = limit;\n    total += values[i];\n  }\n  return total;\n}\n"},
          {"real_deps", "#include <stddef.h>\n"},
          {"real_io_pairs", nullptr},
          {"synth_deps", "#include <stddef.h>\n"},
          {"synth_io_pairs",
           {{"input",
             json::array({{{"var", {"values", "n", "limit"}}, {"value", {"[1, 5, 9]", "3", "6"}}},
                          {{"var", {"values", "n", "limit"}}, {"value", {"[-2, 40, 7, 7]", "4", "7"}}}})},
            {"output",
             json::array({{{"var", {"returnv", "values"}}, {"value", {expected_total, "[1, 5, 6]"}}},
                          {{"var", {"returnv", "values"}}, {"value", {"19", "[-2, 7, 7, 7]"}}}})},
            {"dummy_funcs", json::array({""})}}},
          {"synth_exe_wrapper", kExeBenchWrapper}};
}

}  // namespace tailforge
