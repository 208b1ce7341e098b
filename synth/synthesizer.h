// Long-tail synthesis: for the cycle's top tail entries, takes failing or rare samples as seeds,
// makes N candidates per seed, drops near-duplicates (MinHash/LSH) and stores each survivor with
// its synthesized_from edge and its verify job in one transaction. Proposals beyond the
// multiplier (policy proposal_factor) replace the near-duplicates dropped. It does not verify anything.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "agents/api_table.h"
#include "agents/generator/personas.h"
#include "store/database.h"
#include "store/samples.h"
#include "synth/policy.h"
#include "synth/tails.h"

namespace tailforge {

// One program a candidate source proposes, with the generator inputs to store on the sample.
struct CandidateProgram {
  std::string source;
  std::optional<std::string> domain;
  std::optional<std::string> template_id;
  std::optional<std::string> persona;    // JSON object text
  std::optional<std::string> variables;  // JSON object text
  std::vector<std::string> features;
  std::optional<int64_t> seed;
  std::optional<std::string> prompt_text;
  std::optional<std::string> model;        // the LLM that wrote it, if any
  std::optional<std::string> prompt_hash;  // of the request that wrote it; else sha256 of prompt_text
};

// What a seed shows of its tail: the failure that makes it hard, for the lineage reason and the
// LLM synthesizer's prompt.
struct SeedEvidence {
  std::optional<std::string> category;  // the failure's category; none when the seed did not fail
  std::string message;                  // its evidence line; empty when there is none
};

// For a model_failure tail, the model's failed evaluation of the seed; otherwise (or when the
// model has none) the seed's own verification failure, the one in the tail's category when it
// has several. Empty when the seed did not fail.
Result<SeedEvidence> seed_evidence(Database& db, const TailEntry& entry, const Sample& seed);

// Makes up to `count` candidates similar to `seed` for `entry`; deterministic in `seed_value`.
// The built-in source is the procedural generator; the LLM source (daemon/llm_synthesis.h, the
// "analyze, categorize, and generate ten times more similar samples" prompt) plugs in here with
// its own agent name. An error fails the whole synthesis (a re-run of the cycle resumes it); a
// candidate the source could not make is simply missing from the list.
using CandidateSource = std::function<Result<std::vector<CandidateProgram>>(
    const TailEntry& entry, const Sample& seed, const SeedEvidence& evidence, int count, uint64_t seed_value)>;

// The built-in source: generate_program biased to the seed's template, domain and persona and
// to the tail feature, with derived seeds, rotated personas and relaxed requests as fallbacks. For
// an API tail (given the table), the domains and knobs whose programs use the tail's names
// (synth/api_candidates.h), keeping only programs that use one; none when the generator writes
// none of them. The catalog and table must outlive the returned function.
CandidateSource builtin_candidate_source(const GeneratorCatalog& catalog, const ApiTable* api_table = nullptr);

struct TailSynthesis {
  TailEntry entry;
  std::vector<std::string> seed_ids;
  int proposed = 0;            // candidates considered (up to multiplier kept per seed)
  int generation_failures = 0; // candidates the source could not make
  int exact_duplicates = 0;    // already stored, not by this synthesis
  int near_duplicates = 0;     // dropped by MinHash/LSH
  int inserted = 0;
  int already_present = 0;     // stored by an earlier run of this cycle (idempotent re-run)
};

struct SynthesisSummary {
  int64_t cycle_id = 0;
  TailReport tails;
  std::vector<TailSynthesis> per_tail;
  std::vector<std::string> inserted_ids;
  // "dimension/name" of the tails the source proposed nothing for (an API name no template writes):
  // passed over without taking a slot or a try.
  std::vector<std::string> passed_over;
  int inserted = 0;
  int near_duplicates = 0;
  int generation_failures = 0;
};

// Synthesizes with `source` for the top K of the cycle's tails that still take new samples (a
// tail whose candidates are all duplicates gives its slot to the next one, up to 3K tried; a tail
// the source proposes nothing for is passed over without counting as tried).
// Each sample's lineage edge names `agent` and gives the tail's reason plus the seed's failure
// category ("category", when it failed). Re-running for the same cycle inserts nothing twice and
// enqueues nothing twice, provided the source answers a re-run with the same candidates.
Result<SynthesisSummary> synthesize_tails(Database& db, const SynthPolicy& policy, const TailReport& tails,
                                          int64_t cycle_id, uint64_t seed, const CandidateSource& source,
                                          const std::string& agent);
// The built-in path: tail_report_for_cycle + builtin_candidate_source + synthesize_tails.
Result<SynthesisSummary> synthesize_for_cycle(Database& db, const GeneratorCatalog& catalog,
                                              const SynthPolicy& policy, int64_t cycle_id, uint64_t seed);

nlohmann::json synthesis_summary_to_json(const SynthesisSummary& summary);

}  // namespace tailforge
