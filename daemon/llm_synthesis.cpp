#include "daemon/llm_synthesis.h"

#include "synth/api_tails.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "store/samples.h"
#include "text/regex.h"

namespace tailforge {
namespace {

// What a reply block must contain to be a whole program of the language; a language not listed
// takes any non-blank block.
const std::map<std::string, std::vector<text::Regex>>& program_markers() {
  static const std::map<std::string, std::vector<text::Regex>> markers = {
      {"cuda", {text::Regex(R"(__global__)"), text::Regex(R"(\bmain\s*\()")}},
  };
  return markers;
}

bool is_program(const std::string& language, const std::string& text) {
  auto markers = program_markers().find(language);
  if (markers == program_markers().end()) return text.find_first_not_of(" \t\r\n") != std::string::npos;
  for (const text::Regex& marker : markers->second) {
    if (!text::regex_search(text, marker)) return false;
  }
  return true;
}

std::string hex8(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%08llx", static_cast<unsigned long long>(value & 0xffffffffULL));
  return text;
}

}  // namespace

std::string llm_synthesizer_agent(const LlmAgents& agents) { return "llm-synthesizer:" + agents.model(); }

CandidateSource llm_candidate_source(LlmAgents& agents, Database& db, CandidateTagging tagging) {
  return [&agents, &db, tagging](const TailEntry& entry, const Sample& seed, const SeedEvidence& evidence, int count,
                                 uint64_t seed_value) -> Result<std::vector<CandidateProgram>> {
    SimilarRequest request{.failing_sample = seed.text,
                           .category = evidence.category.value_or(entry.dimension + "/" + entry.name),
                           .evidence = evidence.message.empty() ? "none" : evidence.message,
                           .count = count,
                           .batch = hex8(seed_value),
                           .api_request = api_request_text(api_tail_names(entry))};
    if (request.api_request.empty() && entry.dimension == "api_family") {
      request.api_request = "\n\nUse the CUDA API family " + entry.name +
                            " so that each program's checked and printed result depends on it.";
    }
    Result<LlmSynthesis> reply = agents.synthesize_similar(db, request);
    if (!reply) return reply.error();
    std::vector<CandidateProgram> candidates;
    std::set<std::string> seen;
    for (const std::string& program : reply->programs) {
      if (static_cast<int>(candidates.size()) >= count) break;
      if (!is_program(tagging.language, program) || !seen.insert(sample_id_for(program)).second) continue;
      CandidateProgram candidate;
      candidate.source = program;
      candidate.domain = entry.dimension == "domain" ? std::optional(entry.name) : seed.domain;
      candidate.variables = nlohmann::json{{"cass_domain", classify_domain(tagging.domains, program)}}.dump();
      candidate.features = feature_tags(tagging.features, tagging.language, program);
      candidate.model = agents.model();
      candidate.prompt_hash = reply->prompt_hash;
      candidates.push_back(std::move(candidate));
    }
    if (!reply->problem.empty()) {
      spdlog::warn("LLM synthesizer: {} of {} programs for seed {} ({}/{}): {}", candidates.size(), count,
                   seed.id.substr(0, 12), entry.dimension, entry.name, reply->problem);
    } else if (static_cast<int>(candidates.size()) < count) {
      spdlog::debug("LLM synthesizer: {} of {} programs usable for seed {} ({}/{})", candidates.size(), count,
                    seed.id.substr(0, 12), entry.dimension, entry.name);
    }
    return candidates;
  };
}

Result<SynthesisSummary> synthesize_for_cycle_with_llm(Database& db, LlmAgents& agents, const CandidateTagging& tagging,
                                                       const SynthPolicy& policy, int64_t cycle_id, uint64_t seed) {
  Result<TailReport> tails = tail_report_for_cycle(db, policy, cycle_id);
  if (!tails) return tails.error();
  // One reply per seed: asking it for proposal_factor times the multiplier only makes a longer
  // reply that llm.max_tokens cuts.
  SynthPolicy llm_policy = policy;
  llm_policy.synthesis.proposal_factor = 1;
  return synthesize_tails(db, llm_policy, *tails, cycle_id, seed, llm_candidate_source(agents, db, tagging),
                          llm_synthesizer_agent(agents));
}

}  // namespace tailforge
