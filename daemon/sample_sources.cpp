#include "daemon/sample_sources.h"

#include <algorithm>

#include "daemon/llm_synthesis.h"
#include "daemon/verify/c2x86_jobs.h"
#include "daemon/verify/kernel_task_jobs.h"
#include "store/corpus.h"
#include "synth/api_tails.h"
#include "synth/c2x86_candidates.h"
#include "synth/kernelopt/synthesis.h"

namespace tailforge {

namespace {

std::vector<std::string> merged_tags(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

// CUDA programs: the built-in generator picks persona, template and values from the job's seed
// and index; the LLM generator is asked the prompt that choice gives.
class CudaProgramSource : public SampleSource {
 public:
  explicit CudaProgramSource(const SampleSourceSetup& setup) : setup_(setup) {}

  Result<Sample> generate(Database& db, uint64_t seed, uint64_t index, int64_t cycle) override {
    Result<GeneratedProgram> program = generate_program(setup_.catalog, batch_request(seed, index));
    if (!program) return program.error();
    return setup_.llm_generator ? llm_sample(db, *program, cycle, index) : builtin_sample(*program, cycle);
  }

  Result<SynthesisSummary> synthesize(Database& db, int64_t cycle, uint64_t seed) override {
    if (!setup_.llm_synthesizer) return synthesize_for_cycle(db, setup_.catalog, setup_.policy, cycle, seed);
    return synthesize_for_cycle_with_llm(db, *setup_.llm,
                                         {setup_.feature_rules, setup_.domain_rules, setup_.policy.language},
                                         setup_.policy, cycle, seed);
  }

 private:
  Sample builtin_sample(const GeneratedProgram& program, int64_t cycle) const {
    Sample sample = sample_from_program(program, "template", cycle);
    nlohmann::json variables = program.variables;
    variables["cass_domain"] = classify_domain(setup_.domain_rules, program.source);
    sample.variables = variables.dump();
    sample.model = "builtin-generator";
    sample.features = merged_tags(program.features, feature_tags(setup_.feature_rules, "cuda", program.source));
    return sample;
  }

  // The LLM's program for the prompt of `choice`: persona, template and placeholder values are
  // the choice's; text, tags and prompt hash are the LLM program's. While the newest tail list
  // has API tails, the prompt names one's uncovered names, the tails taken in turn by job index.
  Result<Sample> llm_sample(Database& db, const GeneratedProgram& choice, int64_t cycle, uint64_t index) {
    Result<std::optional<TailEntry>> api_tail = newest_api_tail(db, index);
    if (!api_tail) return api_tail.error();
    std::vector<std::string> names;
    if (*api_tail) names = api_tail_names(**api_tail);
    if (names.size() > kApiNamesAsked) names.resize(kApiNamesAsked);
    Result<LlmProgram> program = setup_.llm->generate(db, choice.prompt_text, api_request_text(names));
    if (!program) return program.error();
    Sample sample = sample_from_program(choice, "llm", cycle);
    sample.text = program->source;
    sample.prompt_hash = program->prompt_hash;
    sample.model = setup_.llm->model();
    nlohmann::json variables = {{"placeholders", choice.variables.value("placeholders", nlohmann::json::object())}};
    variables["cass_domain"] = classify_domain(setup_.domain_rules, sample.text);
    if (!names.empty()) {
      variables["api_tail"] = (*api_tail)->dimension + "/" + (*api_tail)->name;
      variables["api_names"] = names;
    }
    sample.variables = variables.dump();
    sample.features = feature_tags(setup_.feature_rules, "cuda", sample.text);
    return sample;
  }

  // The API tail of the newest tail list that generate job `index` asks the LLM for, if any.
  static Result<std::optional<TailEntry>> newest_api_tail(Database& db, uint64_t index) {
    Result<std::optional<int64_t>> cycle = latest_tail_report_cycle(db);
    if (!cycle) return cycle.error();
    if (!*cycle) return std::optional<TailEntry>();
    Result<std::vector<TailReportRow>> rows = tail_report_rows(db, **cycle);
    if (!rows) return rows.error();
    std::vector<TailEntry> api;
    for (const TailReportRow& row : *rows) {
      if (row.dimension != "api" && row.dimension != "api_family") continue;
      nlohmann::json numbers = nlohmann::json::parse(row.numbers, nullptr, false);
      TailEntry entry{row.dimension, row.name, row.signal, row.score, numbers.is_object() ? numbers : nlohmann::json::object()};
      if (!api_tail_names(entry).empty()) api.push_back(std::move(entry));
    }
    if (api.empty()) return std::optional<TailEntry>();
    return std::optional<TailEntry>(api[index % api.size()]);
  }

  static constexpr size_t kApiNamesAsked = 4;

  SampleSourceSetup setup_;
};

// C functions of the c2x86 generator, their kinds rotating with the job's index.
class CFunctionSource : public SampleSource {
 public:
  explicit CFunctionSource(const SynthPolicy& policy) : policy_(policy) {}

  Result<Sample> generate(Database&, uint64_t seed, uint64_t index, int64_t cycle) override {
    return generate_c2x86_sample(seed, index, cycle);
  }

  Result<SynthesisSummary> synthesize(Database& db, int64_t cycle, uint64_t seed) override {
    return synthesize_c2x86_for_cycle(db, policy_, cycle, seed);
  }

 private:
  const SynthPolicy& policy_;
};

// kernelopt tasks of the built-in generator's families and shapes, from the job's seed and index.
class KernelTaskSource : public SampleSource {
 public:
  explicit KernelTaskSource(const SynthPolicy& policy) : policy_(policy) {}

  Result<Sample> generate(Database&, uint64_t seed, uint64_t index, int64_t cycle) override {
    return generate_kernel_task_sample(seed, index, cycle);
  }

  Result<SynthesisSummary> synthesize(Database& db, int64_t cycle, uint64_t seed) override {
    return synthesize_kernelopt_for_cycle(db, policy_, cycle, seed);
  }

 private:
  const SynthPolicy& policy_;
};

}  // namespace

Result<std::unique_ptr<SampleSource>> make_sample_source(const Track* grown, const SampleSourceSetup& setup) {
  Track::Generated kind = grown ? grown->generated : Track::Generated::none;
  switch (kind) {
    case Track::Generated::kernel_tasks:
    case Track::Generated::c_functions:
      if (setup.llm_generator || setup.llm_synthesizer) {
        return make_error(std::string("agents.") + (setup.llm_generator ? "generator" : "synthesizer") +
                          ": the LLM agents write CUDA programs; the " + std::string(grown->name) +
                          " track (synth policy) grows " +
                          (kind == Track::Generated::kernel_tasks ? "kernel tasks" : "C functions") +
                          " with the built-in generator and synthesizer: set it to \"builtin\"");
      }
      if (kind == Track::Generated::kernel_tasks) {
        return std::unique_ptr<SampleSource>(std::make_unique<KernelTaskSource>(setup.policy));
      }
      return std::unique_ptr<SampleSource>(std::make_unique<CFunctionSource>(setup.policy));
    case Track::Generated::cuda_programs:
    case Track::Generated::none:
      break;
  }
  return std::unique_ptr<SampleSource>(std::make_unique<CudaProgramSource>(setup));
}

}  // namespace tailforge
