// Where the daemon's new samples come from: one source per kind of sample a track generates
// (synth/tracks.h, Track::generated). A generate job asks the grown track's source for the sample
// of its seed and index; a cycle's synthesis asks it for long-tail candidates. CUDA programs come
// from the template catalog, written by the built-in generator or the LLM; C functions from the
// c2x86 generator. A new kind of generated sample is a new source here and a case of the table.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "agents/generator/generator.h"
#include "daemon/llm_agents.h"
#include "policies/feature_tags.h"
#include "store/samples.h"
#include "synth/policy.h"
#include "synth/synthesizer.h"
#include "synth/tracks.h"

namespace tailforge {

class SampleSource {
 public:
  virtual ~SampleSource() = default;
  // The sample of generate job `index` under `seed`, made in `cycle` (not yet stored).
  virtual Result<Sample> generate(Database& db, uint64_t seed, uint64_t index, int64_t cycle) = 0;
  // The cycle's long-tail synthesis: detect the tails, store new candidates, enqueue their verification.
  virtual Result<SynthesisSummary> synthesize(Database& db, int64_t cycle, uint64_t seed) = 0;
};

// What the sources read; everything must outlive the source. `llm` is set when an agent is "llm".
struct SampleSourceSetup {
  const GeneratorCatalog& catalog;
  const FeatureRules& feature_rules;
  const DomainRules& domain_rules;
  const SynthPolicy& policy;
  LlmAgents* llm = nullptr;
  bool llm_generator = false;
  bool llm_synthesizer = false;
};

// The source of the grown track's samples (a track that generates none is grown from CUDA
// programs, of which it is cut). An error when the agents asked for cannot write its samples.
Result<std::unique_ptr<SampleSource>> make_sample_source(const Track* grown, const SampleSourceSetup& setup);

}  // namespace tailforge
