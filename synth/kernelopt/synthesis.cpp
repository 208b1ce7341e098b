#include "synth/kernelopt/synthesis.h"

#include <nlohmann/json.hpp>

#include "agents/kernelopt/generated_tasks.h"
#include "synth/kernelopt/store.h"
#include "synth/kernelopt/task_samples.h"

namespace tailforge {
namespace {

// The task a seed stands for: its own, or the task of the candidate it is.
Result<KernelTask> seed_task(Database& db, const Sample& seed) {
  Result<KernelTask> own = kernel_task_of(seed);
  if (own) return own;
  nlohmann::json variables = nlohmann::json::parse(seed.variables.value_or("{}"), nullptr, false);
  if (!variables.is_object() || !variables.contains("task") || !variables["task"].is_string()) return own.error();
  Result<std::vector<KernelTask>> stored = load_kernelopt_tasks(db, {variables["task"].get<std::string>()});
  if (!stored) return stored.error();
  if (stored->empty()) return make_error("seed " + seed.id.substr(0, 12) + ": its task is not stored");
  return stored->front();
}

}  // namespace

CandidateSource kernel_task_candidate_source(Database& db) {
  return [&db](const TailEntry&, const Sample& seed, const SeedEvidence&, int count,
               uint64_t seed_value) -> Result<std::vector<CandidateProgram>> {
    Result<KernelTask> task = seed_task(db, seed);
    if (!task) return std::vector<CandidateProgram>();  // nothing near it to make (an imported task)
    std::vector<CandidateProgram> out;
    for (const KernelTask& variant : kernel_task_variants(*task, seed_value, count)) {
      Sample sample = kernel_task_sample(variant, "synthesized", std::nullopt, kernel_task_features(variant));
      CandidateProgram candidate;
      candidate.source = sample.text;
      candidate.domain = sample.domain;
      candidate.template_id = sample.template_id;
      candidate.variables = sample.variables;
      candidate.features = sample.features;
      candidate.seed = static_cast<int64_t>(seed_value);
      candidate.model = sample.model;
      out.push_back(std::move(candidate));
    }
    return out;
  };
}

Result<SynthesisSummary> synthesize_kernelopt_for_cycle(Database& db, const SynthPolicy& policy, int64_t cycle_id,
                                                        uint64_t seed) {
  Result<TailReport> tails = tail_report_for_cycle(db, policy, cycle_id);
  if (!tails) return tails.error();
  return synthesize_tails(db, policy, *tails, cycle_id, seed, kernel_task_candidate_source(db), policy.synthesis.agent);
}

}  // namespace tailforge
