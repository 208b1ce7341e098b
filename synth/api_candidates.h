// What the built-in generator can write of the CUDA API: for each API name, the domains and
// feature knobs whose programs use it, found by generating every domain once plain and once with
// each knob it can show (the other knobs off), and counting the names in the text
// (agents/api_table.h). The built-in
// candidate source (synth/synthesizer.h) asks it how to reach an API tail's names.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agents/api_table.h"
#include "agents/generator/generator.h"

namespace tailforge {

class GeneratorApiReach {
 public:
  // One generation per domain and knob; deterministic (a couple of seconds on a slow core).
  static GeneratorApiReach sweep(const GeneratorCatalog& catalog, const ApiTable& table);
  // The sweep of this catalog and table, made once per process (the daemon synthesizes every cycle).
  static const GeneratorApiReach& of(const GeneratorCatalog& catalog, const ApiTable& table);

  // A domain with one knob on (none: the domain's own code uses the name) and the other knobs
  // that could write API names off, so that the name comes from the way, not from a seed.
  struct Way {
    std::string domain;
    std::string feature;
    std::vector<std::string> forbidden;
    GenerationRequest request(uint64_t seed) const;
  };
  // The ways to a name, plain programs first; empty when the generator never writes it.
  const std::vector<Way>& ways_to(const std::string& name) const;
  bool reaches(const std::string& name) const { return !ways_to(name).empty(); }
  size_t names_reached() const { return ways_.size(); }

 private:
  std::map<std::string, std::vector<Way>> ways_;
};

}  // namespace tailforge
