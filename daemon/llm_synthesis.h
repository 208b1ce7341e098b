// The LLM synthesizer (agents.synthesizer = "llm") as a synthesis candidate source: one request
// per seed giving its program, failure category and evidence, asking for N new programs of the
// same difficulty; each usable reply block becomes a tagged candidate. Storing, deduplicating
// and queueing verification stay synth/synthesizer.h's.
#pragma once

#include <cstdint>
#include <string>

#include "daemon/llm_agents.h"
#include "policies/feature_tags.h"
#include "synth/synthesizer.h"

namespace tailforge {

// The tables that tag the LLM's programs, as the LLM generator's samples are tagged.
struct CandidateTagging {
  const FeatureRules& features;
  const DomainRules& domains;
  std::string language = "cuda";  // the synthesized track's source language
};

// "llm-synthesizer:<model>": the agent named on the lineage of the LLM's samples.
std::string llm_synthesizer_agent(const LlmAgents& agents);

// The source: a seed's candidates are the reply's blocks that are programs of the language (a
// CUDA one defines a __global__ kernel and main), without repeats, with features and CASS domain
// from `tagging`, the seed's domain (the tail's, for a domain tail), the model and the request's
// prompt hash. An endpoint outage is an error (the synthesize job retries); a bad reply is fewer
// candidates. The request varies with the seed value, so a later cycle is not answered from the
// response cache of an earlier one, while a re-run of the same cycle is. `agents`, `db` and the
// tables must outlive the returned function; `db` is the calling worker's connection.
CandidateSource llm_candidate_source(LlmAgents& agents, Database& db, CandidateTagging tagging);

// The LLM path of the cycle's synthesis: tail_report_for_cycle, then synthesize_tails with the
// LLM source and llm_synthesizer_agent, asking the LLM for the policy's multiplier per seed (one
// reply; near-duplicates in it are dropped, not replaced).
Result<SynthesisSummary> synthesize_for_cycle_with_llm(Database& db, LlmAgents& agents, const CandidateTagging& tagging,
                                                       const SynthPolicy& policy, int64_t cycle_id, uint64_t seed);

}  // namespace tailforge
