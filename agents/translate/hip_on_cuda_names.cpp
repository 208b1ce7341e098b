#include "agents/translate/hip_on_cuda_names.h"

#include <set>

#include "text/regex.h"

namespace tailforge {

bool is_shim_renamed_kind(const std::string& kind) {
  static const std::set<std::string> kinds = {"runtime_api", "error",   "event",   "stream",  "memcpy_kind",
                                              "enum",        "memory",  "texture", "graph",   "device_property"};
  return kinds.count(kind) > 0;
}

std::string hip_on_cuda_names_header(const HipifyRules& rules, const std::string& handwritten_shim) {
  std::set<std::string> declared;
  static const text::Regex hip_name(R"(\bhip\w+)");
  text::for_each_match(handwritten_shim, hip_name, [&](const text::Match& match) {
    declared.insert(match.str());
    return true;
  });
  std::string out =
      "// Generated from policies/hipify_rules.json and the hipify_names.json it names, by\n"
      "// hip_on_cuda_names_header() (agents/translate/hip_on_cuda_names.h):\n"
      "// each HIP runtime name the translator writes, mapped back to its CUDA name. Do not edit; the\n"
      "// test \"the shim's renames are the translator's table reversed\" says how to regenerate it.\n"
      "#pragma once\n";
  std::set<std::string> written;
  for (const IdentifierRule& rule : rules.identifiers) {
    bool hip_name = rule.to.rfind("hip", 0) == 0 || rule.to.rfind("make_hip", 0) == 0;  // make_hipExtent too
    if (!is_shim_renamed_kind(rule.kind) || rule.from == rule.to || !hip_name || !rule.header.empty()) continue;
    if (declared.count(rule.to) || !written.insert(rule.to).second) continue;
    out += "#ifndef " + rule.to + "\n#define " + rule.to + " " + rule.from + "\n#endif\n";
  }
  return out;
}

std::string hip_on_cuda_library_names_header(const HipifyRules& rules) {
  std::string out =
      "// Generated from policies/hipify_rules.json and the hipify_names.json it names, by\n"
      "// hip_on_cuda_library_names_header() (agents/translate/hip_on_cuda_names.h): each hipRAND, hipSPARSE and\n"
      "// hipRTC name the translator writes, mapped back to its cuRAND, cuSPARSE or NVRTC name. Do not edit; the test\n"
      "// \"the shim's renames are the translator's table reversed\" says how to regenerate it.\n"
      "#pragma once\n";
  std::set<std::string> written;
  for (const IdentifierRule& rule : rules.identifiers) {
    // A name a compatibility header defines (hipsparseGetErrorString) is that header's on both platforms.
    if ((rule.kind != "random" && rule.kind != "sparse" && rule.kind != "rtc") || !rule.header.empty()) continue;
    bool hip_name = rule.to.rfind("hip", 0) == 0 || rule.to.rfind("HIP", 0) == 0;
    if (rule.from == rule.to || !hip_name || !written.insert(rule.to).second) continue;
    out += "#ifndef " + rule.to + "\n#define " + rule.to + " " + rule.from + "\n#endif\n";
  }
  return out;
}

}  // namespace tailforge
