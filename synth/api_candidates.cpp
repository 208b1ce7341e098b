#include "synth/api_candidates.h"

#include <algorithm>
#include <memory>
#include <mutex>

namespace tailforge {

namespace {

// The features a way turns off besides its own: every other one the generator has, or where the
// domain cannot do without some, the cross-cutting ones (host API variants the core writes).
std::vector<std::vector<std::string>> forbidden_choices(const std::string& knob) {
  std::vector<std::string> all, host;
  for (const std::string& feature : generator_features()) {
    if (feature != knob) all.push_back(feature);
  }
  for (const char* feature : {"streams_events", "pinned_host_memory", "managed_memory", "device_query", "templates",
                              "launch_bounds", "cooperative_groups", "grid_sync", "warp_shuffle", "inline_ptx"}) {
    if (feature != knob) host.push_back(feature);
  }
  return {all, host};
}

}  // namespace

GenerationRequest GeneratorApiReach::Way::request(uint64_t seed) const {
  GenerationRequest request;
  request.seed = seed;
  request.domain = domain;
  if (!feature.empty()) request.required_features = {feature};
  request.forbidden_features = forbidden;
  return request;
}

GeneratorApiReach GeneratorApiReach::sweep(const GeneratorCatalog& catalog, const ApiTable& table) {
  GeneratorApiReach reach;
  std::vector<std::string> knobs = generator_features();
  knobs.insert(knobs.begin(), "");
  uint64_t seed = 1;
  for (const std::string& domain : generator_domains()) {
    for (const std::string& knob : knobs) {
      for (const std::vector<std::string>& forbidden : forbidden_choices(knob)) {
        Way way{domain, knob, forbidden};
        Result<GeneratedProgram> program = generate_program(catalog, way.request(seed++));
        if (!program) continue;  // the domain needs one of them, or cannot show the knob
        for (const auto& [name, uses] : count_api_uses(program->source, table)) {
          std::vector<Way>& ways = reach.ways_[name];
          bool plain_known = std::any_of(ways.begin(), ways.end(),
                                         [&](const Way& w) { return w.domain == domain && w.feature.empty(); });
          if (!plain_known) ways.push_back(way);
        }
        break;
      }
    }
  }
  for (auto& [name, ways] : reach.ways_) {
    std::stable_partition(ways.begin(), ways.end(), [](const Way& way) { return way.feature.empty(); });
  }
  return reach;
}

const GeneratorApiReach& GeneratorApiReach::of(const GeneratorCatalog& catalog, const ApiTable& table) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<GeneratorApiReach>> swept;
  // The catalog by its content (templates, personas, values), the table by its key.
  std::string key = table.key();
  for (const PromptTemplate& t : catalog.templates) key += "|" + t.id;
  for (const Persona& p : catalog.personas) key += "|" + p.id;
  for (const auto& [name, values] : catalog.placeholder_values) key += "|" + name + ":" + std::to_string(values.size());
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<GeneratorApiReach>& reach = swept[key];
  if (!reach) reach = std::make_unique<GeneratorApiReach>(sweep(catalog, table));
  return *reach;
}

const std::vector<GeneratorApiReach::Way>& GeneratorApiReach::ways_to(const std::string& name) const {
  static const std::vector<Way> none;
  auto found = ways_.find(name);
  return found == ways_.end() ? none : found->second;
}

}  // namespace tailforge
