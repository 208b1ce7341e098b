// The built-in procedural CUDA generator: deterministic, self-checking test programs over many
// GPU domains, steered by persona + prompt template + placeholder values and feature knobs.
// It writes source text only; compiling, running and translating belong to other modules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agents/generator/personas.h"
#include "base/result.h"
#include "store/samples.h"

namespace tailforge {

struct GenerationRequest {
  uint64_t seed = 1;
  std::optional<std::string> domain;       // one of generator_domains()
  std::optional<std::string> template_id;  // a template of the catalog
  std::vector<std::string> required_features;   // each of generator_features()
  std::vector<std::string> forbidden_features;  // each of generator_features()
  std::optional<Persona> persona;
  std::optional<std::string> persona_id;  // used when persona is not given
};

struct GeneratedProgram {
  std::string source;
  std::string domain;
  std::string template_id;
  Persona persona;
  nlohmann::json variables;  // {"placeholders": {...}, "parameters": {...}}
  std::vector<std::string> features;  // sorted feature tags present in source
  uint64_t seed = 0;
  std::string prompt_text;  // the LLM prompt the same persona + template + values give
};

// Same catalog + request gives a byte-identical program. Fails (naming the reason) when the
// request cannot be met: unknown domain/template/feature, or required and forbidden features
// that no variant of the domain satisfies.
Result<GeneratedProgram> generate_program(const GeneratorCatalog& catalog,
                                          const GenerationRequest& request);

// What a generated sample of any track starts with: track, origin, language, text, domain,
// feature tags and cycle. Callers add their variables and lineage.
Sample generated_sample(const std::string& track, const std::string& origin, const std::string& language,
                        const std::string& text, const std::string& domain,
                        const std::vector<std::string>& features, std::optional<int64_t> cycle_id);

// The store's sample for a generated CUDA program of the cuda2hip track: source, template,
// persona, placeholder values, seed, prompt hash, domain and feature tags, with `origin` and
// `cycle_id`. Callers add what is theirs (more variables or tags, the model).
Sample sample_from_program(const GeneratedProgram& program, const std::string& origin,
                           std::optional<int64_t> cycle_id);

std::vector<std::string> generator_domains();
// The domains written to exercise the CUDA API beyond plain buffers (textures, streams, graphs,
// libraries, the driver API: agents/generator/domains_api.cpp), a subset of generator_domains().
std::vector<std::string> generator_api_domains();
std::vector<std::string> generator_features();

// Every template's domains, placeholders' feature hints and personas' features are known.
Status check_generator_catalog(const GeneratorCatalog& catalog);

// The request for the index-th program of a batch: domains in rotation, seeds derived from
// `seed`, so a batch of count >= number of domains covers every domain.
GenerationRequest batch_request(uint64_t seed, size_t index);

// Writes <out_dir>/<index>_<domain>.cu for count programs and <out_dir>/manifest.jsonl, one
// line per file: file, domain, template, persona, features, seed. Returns the file names.
Result<std::vector<std::string>> write_generated_programs(const GeneratorCatalog& catalog,
                                                          size_t count, uint64_t seed,
                                                          const std::string& out_dir);

}  // namespace tailforge
