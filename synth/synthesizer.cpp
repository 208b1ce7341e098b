#include "synth/synthesizer.h"

#include <algorithm>

#include "agents/generator/generator.h"
#include "base/sha256.h"
#include "store/api_uses.h"
#include "store/corpus.h"
#include "store/evaluations.h"
#include "store/queue.h"
#include "store/sample_failures.h"
#include "synth/api_candidates.h"
#include "synth/api_coverage.h"
#include "synth/api_tails.h"
#include "synth/minhash.h"
#include "synth/stored_index.h"

namespace tailforge {
namespace {

using nlohmann::json;

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

std::optional<std::string> persona_id_of(const Sample& seed) {
  if (!seed.persona) return std::nullopt;
  json persona = json::parse(*seed.persona, nullptr, false);
  if (!persona.is_object() || !persona.contains("id") || !persona["id"].is_string()) return std::nullopt;
  return persona["id"].get<std::string>();
}

// The request ladder for candidate `index`: most biased first, each next one relaxed.
std::vector<GenerationRequest> candidate_requests(const GeneratorCatalog& catalog, const TailEntry& entry,
                                                  const Sample& seed, int index, uint64_t value) {
  static const std::vector<std::string> domains = generator_domains();
  static const std::vector<std::string> features = generator_features();
  GenerationRequest base;
  base.seed = value;
  if (entry.dimension == "domain" && contains(domains, entry.name)) {
    base.domain = entry.name;
  } else if (index % 3 != 2 && seed.domain && contains(domains, *seed.domain)) {  // every third: any domain
    base.domain = seed.domain;
  }
  if (index % 2 == 0 && seed.template_id && find_template(catalog, *seed.template_id)) base.template_id = seed.template_id;
  if (entry.dimension == "feature" && contains(features, entry.name)) {
    base.required_features = {entry.name};
  } else if (entry.dimension == "category") {
    for (const std::string& tag : seed.features) {
      if (contains(features, tag)) base.required_features.push_back(tag);
    }
  }
  std::optional<std::string> seed_persona = persona_id_of(seed);
  if (index % 3 == 0 && seed_persona && find_persona(catalog, *seed_persona)) {
    base.persona_id = seed_persona;
  } else if (!catalog.personas.empty()) {
    base.persona_id = catalog.personas[(value >> 7) % catalog.personas.size()].id;  // a persona mutation
  }

  std::vector<GenerationRequest> ladder = {base};
  GenerationRequest relaxed = base;
  relaxed.template_id.reset();
  relaxed.seed = value + 1;
  ladder.push_back(relaxed);
  if (entry.dimension != "domain") {
    relaxed.domain.reset();
    relaxed.seed = value + 2;
    ladder.push_back(relaxed);
  }
  if (entry.dimension == "category") {
    relaxed.required_features.clear();
    relaxed.seed = value + 3;
    ladder.push_back(relaxed);
  }
  return ladder;
}

// The names of an API tail the generator writes: the tail's own (a name, or a family's uncovered
// names), else, for a family tail that lists none (a model-failure tail), any name of the family.
std::vector<std::string> reachable_api_names(const TailEntry& entry, const GeneratorApiReach& reach,
                                             const ApiTable& table) {
  std::vector<std::string> wanted = api_tail_names(entry);
  if (wanted.empty() && entry.dimension == "api_family") {
    for (const ApiIdentifier* member : table.members(table.family_index(entry.name))) wanted.push_back(member->name);
  }
  std::vector<std::string> names;
  for (const std::string& name : wanted) {
    if (reach.reaches(name)) names.push_back(name);
  }
  return names;
}

// Candidate `index` of an API tail: its names in turn, each through the domains and knobs whose
// programs use it, with the seed's persona every third time and another persona otherwise.
std::vector<GenerationRequest> api_requests(const GeneratorCatalog& catalog, const GeneratorApiReach& reach,
                                            const std::vector<std::string>& names, const Sample& seed, int index,
                                            uint64_t value) {
  const std::string& name = names[static_cast<size_t>(index) % names.size()];
  const std::vector<GeneratorApiReach::Way>& ways = reach.ways_to(name);
  std::vector<GenerationRequest> ladder;
  for (size_t step = 0; step < std::min<size_t>(ways.size(), 3); ++step) {
    const GeneratorApiReach::Way& way = ways[(static_cast<size_t>(index) / names.size() + step) % ways.size()];
    GenerationRequest request = way.request(value + step);
    std::optional<std::string> seed_persona = persona_id_of(seed);
    if (index % 3 == 0 && seed_persona && find_persona(catalog, *seed_persona)) {
      request.persona_id = seed_persona;
    } else if (!catalog.personas.empty()) {
      request.persona_id = catalog.personas[(value >> 7) % catalog.personas.size()].id;
    }
    ladder.push_back(std::move(request));
  }
  return ladder;
}

bool uses_any(const std::string& source, const std::vector<std::string>& names, const ApiTable& table) {
  ApiUses uses = count_api_uses(source, table);
  return std::any_of(names.begin(), names.end(), [&](const std::string& name) { return uses.count(name) > 0; });
}

std::vector<Sample> choose_seeds(Database& db, const std::vector<std::string>& ids, const std::string& salt,
                                 int wanted) {
  std::vector<std::pair<std::string, Sample>> failed, other;
  for (const std::string& id : ids) {
    Result<std::optional<Sample>> sample = find_sample(db, id);
    if (!sample || !*sample) continue;
    std::string key = sha256_hex(salt + id);
    ((*sample)->status == "failed" ? failed : other).emplace_back(key, std::move(**sample));
  }
  std::sort(failed.begin(), failed.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::sort(other.begin(), other.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<Sample> seeds;
  for (auto* list : {&failed, &other}) {
    for (auto& [key, sample] : *list) {
      if (static_cast<int>(seeds.size()) < wanted) seeds.push_back(std::move(sample));
    }
  }
  return seeds;
}

// A model-failure tail grows from the items the model failed; any other tail from the corpus.
Result<std::vector<std::string>> seed_ids_for(Database& db, const SynthPolicy& policy, const TailEntry& entry,
                                              int64_t cycle_id) {
  if (entry.signal == "model_failure" && entry.numbers.contains("model_id")) {
    return model_failure_seed_ids(db, entry.numbers["model_id"].get<int64_t>(), entry.dimension, entry.name, 200);
  }
  return tail_seed_ids(db, policy.track, entry.dimension, entry.name, cycle_id, 200);
}

// The lineage reason of a seed's candidates: the tail's, plus the seed's failure category.
std::string lineage_reason(const TailEntry& entry, const SeedEvidence& evidence) {
  json reason = json::parse(tail_reason(entry));
  if (evidence.category) reason["category"] = *evidence.category;
  return reason.dump();
}

// Sample, lineage edge and verify job in one transaction.
Status store_candidate(Database& db, JobQueue& queue, StoredNearDuplicateIndex& index, const SynthPolicy& policy,
                       const std::string& reason, const Sample& seed, const CandidateProgram& candidate,
                       int64_t cycle_id, const std::string& agent, const std::string& id) {
  Transaction transaction(db);
  if (!transaction.begin_status()) return transaction.begin_status();
  Sample sample;
  sample.id = id;
  sample.track = policy.track;
  sample.origin = "synthesized";
  sample.language = policy.language;
  sample.text = candidate.source;
  sample.template_id = candidate.template_id;
  sample.persona = candidate.persona;
  sample.variables = candidate.variables;
  sample.seed = candidate.seed;
  sample.model = candidate.model;
  sample.prompt_hash = candidate.prompt_hash;
  if (!sample.prompt_hash && candidate.prompt_text) sample.prompt_hash = sha256_hex(*candidate.prompt_text);
  sample.domain = candidate.domain;
  sample.features = candidate.features;
  sample.cycle_id = cycle_id;
  Result<InsertOutcome> inserted = insert_sample_if_absent(db, sample);
  if (!inserted) return inserted.error();
  LineageEdge edge{seed.id, id, "synthesized_from", agent, candidate.model, sample.prompt_hash, reason, 0};
  if (Status s = insert_lineage_edge(db, edge); !s) return make_error("lineage of " + id + ": " + s.message());
  NewJob job{"verify", json{{"sample_id", id}, {"cycle", cycle_id}}.dump(), "verify:" + id};
  if (Result<EnqueueOutcome> queued = queue.enqueue(job); !queued) return queued.error();
  // The candidate (and whatever else came meanwhile) joins the near-duplicate index in the same commit.
  if (Result<int64_t> indexed = index.catch_up_in_transaction(); !indexed) {
    return make_error("indexing " + id + ": " + indexed.message());
  }
  return transaction.commit();
}

}  // namespace

Result<SeedEvidence> seed_evidence(Database& db, const TailEntry& entry, const Sample& seed) {
  if (entry.signal == "model_failure" && entry.numbers.contains("model_id") &&
      entry.numbers["model_id"].is_number_integer()) {
    Result<std::optional<EvaluationRecord>> evaluation =
        find_evaluation(db, entry.numbers["model_id"].get<int64_t>(), seed.id);
    if (!evaluation) return make_error("evidence for seed " + seed.id + ": " + evaluation.message());
    if (*evaluation && !(*evaluation)->ok && (*evaluation)->category) {
      return SeedEvidence{(*evaluation)->category, (*evaluation)->message.value_or("")};
    }
  }
  Result<std::vector<FailureRecord>> failures = failures_of_sample(db, seed.id);
  if (!failures) return failures.error();
  if (failures->empty()) return SeedEvidence{};
  const FailureRecord* chosen = &failures->front();
  if (entry.dimension == "category") {
    for (const FailureRecord& failure : *failures) {
      if (failure.category == entry.name || failure.category.rfind(entry.name + ".", 0) == 0) {
        chosen = &failure;
        break;
      }
    }
  }
  return SeedEvidence{chosen->category, chosen->message};
}

CandidateSource builtin_candidate_source(const GeneratorCatalog& catalog, const ApiTable* api_table) {
  return [&catalog, api_table](const TailEntry& entry, const Sample& seed, const SeedEvidence&, int count,
                               uint64_t seed_value) -> Result<std::vector<CandidateProgram>> {
    std::vector<CandidateProgram> out;
    bool api_tail = entry.dimension == "api" || entry.dimension == "api_family";
    std::vector<std::string> names;
    const GeneratorApiReach* reach = nullptr;
    if (api_tail) {
      if (!api_table) return out;
      reach = &GeneratorApiReach::of(catalog, *api_table);  // swept when the first API tail asks
      names = reachable_api_names(entry, *reach, *api_table);
      if (names.empty()) return out;  // nothing the generator writes: the tail waits for another source
    }
    for (int i = 0; i < count; ++i) {
      uint64_t value = sha256_prefix64(std::to_string(seed_value) + ":" + std::to_string(i));
      std::vector<GenerationRequest> ladder = api_tail ? api_requests(catalog, *reach, names, seed, i, value)
                                                       : candidate_requests(catalog, entry, seed, i, value);
      for (const GenerationRequest& request : ladder) {
        Result<GeneratedProgram> program = generate_program(catalog, request);
        if (!program) continue;
        if (api_tail && !uses_any(program->source, names, *api_table)) continue;
        out.push_back({program->source, program->domain, program->template_id,
                       persona_to_json(program->persona).dump(), program->variables.dump(), program->features,
                       static_cast<int64_t>(program->seed), program->prompt_text, std::nullopt});
        break;
      }
    }
    return out;
  };
}

Result<SynthesisSummary> synthesize_tails(Database& db, const SynthPolicy& policy, const TailReport& tails,
                                          int64_t cycle_id, uint64_t seed, const CandidateSource& source,
                                          const std::string& agent) {
  SynthesisSummary summary;
  summary.cycle_id = cycle_id;
  summary.tails = tails;
  StoredNearDuplicateIndex index(db, policy.track, policy.dedup);
  index.see_cycles_up_to(cycle_id);
  if (Result<int64_t> caught_up = index.catch_up(); !caught_up) {
    return make_error("synthesis: indexing the corpus: " + caught_up.message());
  }
  JobQueue queue(db);
  // The top K tails that synthesis can still add to: a tail whose candidates were all dropped
  // (its programs ran out of variety) does not take a slot, up to 3K tails tried.
  std::vector<std::pair<std::string, std::string>> chosen;
  size_t filled = 0, tried = 0;
  for (const TailEntry& entry : tails.entries) {
    if (filled >= policy.synthesis.top_k || tried >= 3 * policy.synthesis.top_k) break;
    if (std::find(chosen.begin(), chosen.end(), std::pair{entry.dimension, entry.name}) != chosen.end()) continue;
    Result<std::vector<std::string>> ids = seed_ids_for(db, policy, entry, cycle_id);
    if (!ids) return ids.error();
    if (ids->empty() && (entry.dimension == "feature" || entry.dimension == "api" || entry.dimension == "api_family")) {
      // No sample has the feature or API name yet: any sample seeds it, and the request asks for it.
      ids = tail_seed_ids(db, policy.track, "corpus", "", cycle_id, 200);
      if (!ids) return ids.error();
    }
    std::string salt = std::to_string(seed) + ":" + std::to_string(cycle_id) + ":" + entry.dimension + ":" + entry.name;
    std::vector<Sample> seeds = choose_seeds(db, *ids, salt, policy.synthesis.seeds_per_tail);
    if (seeds.empty()) continue;  // nothing to be similar to; the next entry takes the slot
    chosen.emplace_back(entry.dimension, entry.name);

    TailSynthesis tail{entry, {}};
    bool writes_nothing = false;
    for (const Sample& seed_sample : seeds) {
      tail.seed_ids.push_back(seed_sample.id);
      Result<SeedEvidence> evidence = seed_evidence(db, entry, seed_sample);
      if (!evidence) return evidence.error();
      std::string reason = lineage_reason(entry, *evidence);
      int wanted = policy.synthesis.multiplier;
      int asked = wanted * std::max(1, policy.synthesis.proposal_factor);
      Result<std::vector<CandidateProgram>> candidates =
          source(entry, seed_sample, *evidence, asked, sha256_prefix64(salt + ":" + seed_sample.id));
      if (!candidates) return make_error("synthesis for " + entry.dimension + "/" + entry.name + ": " + candidates.message());
      if (candidates->empty() && tail.seed_ids.size() == 1) {  // the source cannot write this tail at all
        writes_nothing = true;
        break;
      }
      tail.generation_failures += std::max(0, asked - static_cast<int>(candidates->size()));
      int kept = 0;  // stored now or by an earlier run of this cycle
      for (const CandidateProgram& candidate : *candidates) {
        if (kept >= wanted) break;
        ++tail.proposed;
        std::string id = sample_id_for(candidate.source);
        Result<std::optional<Sample>> existing = find_sample(db, id);
        if (!existing) return existing.error();
        if (*existing) {
          Result<bool> ours = lineage_edge_exists(db, seed_sample.id, id, "synthesized_from");
          if (!ours) return ours.error();
          if (*ours) {
            ++tail.already_present;
            ++kept;
          } else {
            ++tail.exact_duplicates;
          }
          continue;
        }
        Result<std::optional<std::string>> near =
            index.find_near_duplicate(shingle_hashes(candidate.source, index.hasher().options()));
        if (!near) return make_error("synthesis: " + near.message());
        if (*near) {
          ++tail.near_duplicates;
          continue;
        }
        if (Status s = store_candidate(db, queue, index, policy, reason, seed_sample, candidate, cycle_id, agent, id); !s) {
          return make_error("synthesis: storing candidate " + id + ": " + s.message());
        }
        ++tail.inserted;
        ++kept;
        summary.inserted_ids.push_back(id);
      }
    }
    if (writes_nothing) {  // e.g. an API name no template uses: no slot, no try
      summary.passed_over.push_back(entry.dimension + "/" + entry.name);
      continue;
    }
    if (tail.inserted + tail.already_present > 0) ++filled;
    ++tried;
    summary.inserted += tail.inserted;
    summary.near_duplicates += tail.near_duplicates;
    summary.generation_failures += tail.generation_failures;
    summary.per_tail.push_back(std::move(tail));
  }
  return summary;
}

Result<SynthesisSummary> synthesize_for_cycle(Database& db, const GeneratorCatalog& catalog,
                                              const SynthPolicy& policy, int64_t cycle_id, uint64_t seed) {
  Result<TailReport> tails = tail_report_for_cycle(db, policy, cycle_id);
  if (!tails) return tails.error();
  const ApiTable* api_table = nullptr;
  if (policy.api.enabled) {
    Result<const ApiTable*> table = api_table_of(policy.api);
    if (!table) return table.error();
    api_table = *table;
  }
  return synthesize_tails(db, policy, *tails, cycle_id, seed, builtin_candidate_source(catalog, api_table),
                          policy.synthesis.agent);
}

json synthesis_summary_to_json(const SynthesisSummary& summary) {
  json per_tail = json::array();
  for (const TailSynthesis& t : summary.per_tail) {
    per_tail.push_back({{"dimension", t.entry.dimension}, {"name", t.entry.name}, {"signal", t.entry.signal},
                        {"score", t.entry.score}, {"seeds", t.seed_ids}, {"proposed", t.proposed},
                        {"generation_failures", t.generation_failures}, {"exact_duplicates", t.exact_duplicates},
                        {"near_duplicates", t.near_duplicates}, {"inserted", t.inserted},
                        {"already_present", t.already_present}});
  }
  return {{"cycle_id", summary.cycle_id}, {"inserted", summary.inserted},
          {"near_duplicates", summary.near_duplicates}, {"generation_failures", summary.generation_failures},
          {"passed_over", summary.passed_over},
          {"tails", tail_report_to_json(summary.tails)["entries"]}, {"per_tail", per_tail}};
}

}  // namespace tailforge
