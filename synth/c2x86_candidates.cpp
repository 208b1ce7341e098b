#include "synth/c2x86_candidates.h"

#include <algorithm>

#include "agents/c2x86/c_generator.h"
#include "agents/c2x86/c_samples.h"
#include "base/sha256.h"

namespace tailforge {
namespace {

bool is_kind(const std::string& name) {
  const std::vector<std::string>& kinds = c_function_kinds();
  return std::find(kinds.begin(), kinds.end(), name) != kinds.end();
}

// The kinds a tail's candidates rotate through.
std::vector<std::string> kinds_for(const TailEntry& entry, const Sample& seed) {
  if (entry.dimension == "feature") {
    std::vector<std::string> kinds = c_kinds_with_feature(entry.name);
    if (!kinds.empty()) return kinds;
  }
  if (entry.dimension == "domain" && is_kind(entry.name)) return {entry.name};
  if (seed.domain && is_kind(*seed.domain)) return {*seed.domain};
  return c_function_kinds();
}

}  // namespace

CandidateSource c2x86_candidate_source() {
  return [](const TailEntry& entry, const Sample& seed, const SeedEvidence&, int count,
            uint64_t seed_value) -> Result<std::vector<CandidateProgram>> {
    std::vector<std::string> kinds = kinds_for(entry, seed);
    std::vector<CandidateProgram> out;
    for (int i = 0; i < count; ++i) {
      uint64_t value = sha256_prefix64(std::to_string(seed_value) + ":" + std::to_string(i));
      const std::string& kind = kinds[static_cast<size_t>(i) % kinds.size()];
      Result<CFunction> function = generate_c_function({.seed = value, .index = static_cast<uint64_t>(i), .kind = kind});
      if (!function) continue;
      Sample sample = c2x86_sample(*function, kind, "synthesized", std::nullopt);
      CandidateProgram candidate;
      candidate.source = sample.text;
      candidate.domain = kind;
      candidate.template_id = "c2x86:" + kind;
      candidate.variables = sample.variables;
      candidate.features = sample.features;
      candidate.seed = static_cast<int64_t>(value);
      out.push_back(std::move(candidate));
    }
    return out;
  };
}

Result<SynthesisSummary> synthesize_c2x86_for_cycle(Database& db, const SynthPolicy& policy, int64_t cycle_id,
                                                    uint64_t seed) {
  Result<TailReport> tails = tail_report_for_cycle(db, policy, cycle_id);
  if (!tails) return tails.error();
  return synthesize_tails(db, policy, *tails, cycle_id, seed, c2x86_candidate_source(), policy.synthesis.agent);
}

}  // namespace tailforge
