#include "agents/generator/generator.h"

#include <algorithm>
#include <cmath>

#include "agents/generator/domain.h"
#include "base/sha256.h"
#include "text/regex.h"

namespace tailforge {
namespace {

using nlohmann::json;

struct KnobChance {
  const char* name;
  double probability;  // chance the knob is turned on when nothing steers it
};

// Every feature tag, and how often it is chosen unsteered. Untranslatable ones stay rare, and so
// do the host-API variants (pinned staging buffers, managed memory, a device query): the long
// tail of runtime calls that real programs make now and then.
const KnobChance kFeatures[] = {
    {"static_shared", 0.5},       {"dynamic_shared", 0.35},    {"warp_shuffle", 0.45},
    {"atomics", 0.5},             {"syncthreads", 1.0},        {"switch", 0.4},
    {"float_literals", 0.0},      {"double_literals", 0.0},    {"unroll_pragma", 0.45},
    {"streams_events", 0.3},      {"constant_memory", 0.45},   {"templates", 0.3},
    {"launch_bounds", 0.3},       {"inline_ptx", 0.07},        {"cooperative_groups", 0.12},
    {"grid_sync", 0.15},          {"hardcoded_warp_size", 0.4},  {"pinned_host_memory", 0.1},
    {"managed_memory", 0.1},      {"device_query", 0.1}};

// Knobs every domain has because the core writes them (prelude, kernel heads).
const char* const kCrossCuttingKnobs[] = {"streams_events",     "templates",      "launch_bounds",
                                          "pinned_host_memory", "managed_memory", "device_query"};

double base_probability(const std::string& feature) {
  for (const KnobChance& rule : kFeatures) {
    if (feature == rule.name) return rule.probability;
  }
  return 0.0;
}

const std::vector<DomainSpec>& all_domains() {
  static const std::vector<DomainSpec> domains = [] {
    std::vector<DomainSpec> list;
    for (auto table : {basic_domains, stencil_domains, image_domains, linalg_domains,
                       discrete_domains, science_domains, tensor_codegen_domains, api_domains}) {
      for (DomainSpec& spec : table()) list.push_back(std::move(spec));
    }
    return list;
  }();
  return domains;
}

const DomainSpec* find_domain(const std::string& name) {
  for (const DomainSpec& spec : all_domains()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

bool domain_can_show(const DomainSpec& spec, const std::string& feature) {
  if (feature == "float_literals" || feature == "double_literals") {
    return contains(spec.value_types, "float") || contains(spec.value_types, "double");
  }
  for (const char* knob : kCrossCuttingKnobs) {
    if (feature == knob) return true;
  }
  return contains(spec.knobs, feature);
}

// Feature tags present in the program, read from the text itself so tags never lie.
std::vector<std::string> detect_features(const std::string& source, const std::string& kernels,
                                         const DomainContext& context) {
  std::vector<std::string> found;
  auto add_if = [&found](bool present, const char* name) {
    if (present) found.push_back(name);
  };
  auto has = [&source](const char* text) { return source.find(text) != std::string::npos; };
  static const text::Regex static_shared(R"((^|[^n]\s)__shared__)");
  static const text::Regex atomic_call(R"(\batomic[A-Z][A-Za-z]*\()");
  static const text::Regex switch_statement(R"(\bswitch\s*\()");
  static const text::Regex float_literal(R"(\b[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?f\b)");
  static const text::Regex double_literal(R"(\b[0-9]+\.[0-9]*([eE][-+]?[0-9]+)?(?![0-9eEf.]))");
  add_if(text::regex_search(source, static_shared), "static_shared");
  add_if(has("extern __shared__"), "dynamic_shared");
  add_if(has("__shfl_"), "warp_shuffle");
  add_if(text::regex_search(source, atomic_call), "atomics");
  add_if(has("__syncthreads(") || has("this_thread_block().sync()"), "syncthreads");
  add_if(text::regex_search(kernels, switch_statement), "switch");
  add_if(text::regex_search(kernels, float_literal), "float_literals");
  add_if(text::regex_search(kernels, double_literal), "double_literals");
  add_if(has("#pragma unroll"), "unroll_pragma");
  add_if(has("cudaStreamCreate") || has("cudaEventCreate"), "streams_events");
  add_if(has("__constant__"), "constant_memory");
  add_if(has("template <typename T>"), "templates");
  add_if(has("__launch_bounds__("), "launch_bounds");
  add_if(has("asm volatile("), "inline_ptx");
  add_if(has("this_thread_block()") || has("tiled_partition"), "cooperative_groups");
  add_if(has("grid.sync()"), "grid_sync");
  add_if(context.used_warp_constant && context.has("hardcoded_warp_size"), "hardcoded_warp_size");
  add_if(has("cudaMallocHost("), "pinned_host_memory");
  add_if(has("cudaMallocManaged("), "managed_memory");
  add_if(has("cudaGetDeviceProperties("), "device_query");
  std::sort(found.begin(), found.end());
  return found;
}

struct Choices {
  const PromptTemplate* prompt_template = nullptr;
  Persona persona;
  const DomainSpec* domain = nullptr;
  std::map<std::string, std::string> value_texts;
  json value_hints = json::object();
};

Status choose_template_persona_domain(const GeneratorCatalog& catalog,
                                      const GenerationRequest& request, GeneratorRandom& random,
                                      Choices& choices) {
  auto domain_fits = [&request](const std::string& name) {
    const DomainSpec* spec = find_domain(name);
    if (!spec || (request.domain && *request.domain != name)) return false;
    for (const std::string& feature : request.required_features) {
      if (!domain_can_show(*spec, feature)) return false;
    }
    return true;
  };
  auto template_fits = [&](const PromptTemplate& t) {
    return std::any_of(t.domains.begin(), t.domains.end(), domain_fits);
  };

  const Persona* persona = request.persona ? &*request.persona : nullptr;
  if (!persona && request.persona_id) {
    persona = find_persona(catalog, *request.persona_id);
    if (!persona) return make_error("generate: unknown persona '" + *request.persona_id + "'");
  }

  if (request.template_id) {
    choices.prompt_template = find_template(catalog, *request.template_id);
    if (!choices.prompt_template) {
      return make_error("generate: unknown template '" + *request.template_id + "'");
    }
    if (!template_fits(*choices.prompt_template)) {
      return make_error("generate: template '" + *request.template_id +
                        "' has no domain that fits the requested domain and features");
    }
  } else {
    std::vector<const PromptTemplate*> fitting;
    std::vector<const PromptTemplate*> persona_fitting;
    for (const PromptTemplate& t : catalog.templates) {
      if (!template_fits(t)) continue;
      fitting.push_back(&t);
      if (persona && contains(persona->families, t.family)) persona_fitting.push_back(&t);
    }
    if (fitting.empty()) {
      return make_error("generate: no template realizes domain '" + request.domain.value_or("any") +
                        "' with the required features");
    }
    choices.prompt_template = random.pick(persona_fitting.empty() ? fitting : persona_fitting);
  }

  if (persona) {
    choices.persona = *persona;
  } else {
    std::vector<const Persona*> fitting;
    for (const Persona& p : catalog.personas) {
      if (p.families.empty() || contains(p.families, choices.prompt_template->family)) {
        fitting.push_back(&p);
      }
    }
    if (fitting.empty()) {
      for (const Persona& p : catalog.personas) fitting.push_back(&p);
    }
    if (fitting.empty()) return make_error("generate: the catalog has no personas");
    choices.persona = *random.pick(fitting);
  }

  std::vector<std::string> domains;
  for (const std::string& name : choices.prompt_template->domains) {
    if (domain_fits(name)) domains.push_back(name);
  }
  choices.domain = find_domain(random.pick(domains));

  for (const std::string& name : choices.prompt_template->placeholders) {
    const PlaceholderValue& value = random.pick(catalog.placeholder_values.at(name));
    choices.value_texts[name] = value.text;
    choices.value_hints[name] = value.hints;
  }
  return {};
}

// Turns placeholder hints (size, block size, element type, features) into domain knobs.
void apply_hints(const json& hints, DomainContext& context, std::set<std::string>& hinted) {
  for (auto& [name, hint] : hints.items()) {
    if (hint.contains("value") && hint["value"].is_number()) {
      double value = hint["value"].get<double>();
      if (name == "size") context.size_hint = value * value;
      if (name == "n" || name == "count" || name == "elements") context.size_hint = value;
      if (name == "block_size") context.parameters["block_hint"] = value;
    }
    if (hint.contains("elements") && hint["elements"].is_number()) {
      context.size_hint = hint["elements"].get<double>();
    }
    if (hint.contains("element_type") && hint["element_type"].is_string()) {
      context.parameters["type_hint"] = hint["element_type"];
    }
    if (hint.contains("operator") && hint["operator"].is_string()) {
      context.parameters["operator_hint"] = hint["operator"];  // read (and erased) by the domain writer
    }
    if (hint.contains("features") && hint["features"].is_array()) {
      for (const json& feature : hint["features"]) {
        if (feature.is_string()) hinted.insert(feature.get<std::string>());
      }
    }
  }
}

void choose_knobs(const DomainSpec& spec, const GenerationRequest& request, const Persona& persona,
                  const std::set<std::string>& hinted, DomainContext& context) {
  auto forbidden = [&](const std::string& feature) {
    return contains(request.forbidden_features, feature) ||
           (contains(persona.avoid_features, feature) &&
            !contains(request.required_features, feature));
  };
  std::vector<std::string> knobs = spec.knobs;
  for (const char* knob : kCrossCuttingKnobs) knobs.push_back(knob);
  for (const std::string& knob : knobs) {
    if (forbidden(knob)) continue;
    bool on = contains(request.required_features, knob) || hinted.count(knob);
    double probability = base_probability(knob);
    if (contains(persona.prefer_features, knob)) probability = std::min(1.0, probability + 0.35);
    if (!on) on = context.random.chance(probability);
    if (on) context.knobs.insert(knob);
  }

  // Literal style: float literals need float elements with an f suffix; double literals come
  // from double elements or unsuffixed literals in float code.
  auto wants = [&](const std::string& feature) {
    return contains(request.required_features, feature) || hinted.count(feature) ||
           contains(persona.prefer_features, feature);
  };
  bool want_float = !forbidden("float_literals") && wants("float_literals");
  bool want_double = !forbidden("double_literals") && wants("double_literals");
  std::vector<std::string> types = spec.value_types;
  if ((want_float || forbidden("double_literals")) && contains(types, "float")) {
    types = {"float"};
  } else if (forbidden("float_literals") && contains(types, "double")) {
    types = {"double"};
  }
  std::string type_hint = context.parameters.value("type_hint", "");
  context.value_type = contains(types, type_hint) ? type_hint : context.random.pick(types);
  context.float_suffix = context.random.chance(0.75);
  if (want_float || forbidden("double_literals")) context.float_suffix = true;
  if (want_double || forbidden("float_literals")) context.float_suffix = false;

  int block_hint = context.parameters.value("block_hint", 0);
  bool hint_fits = std::find(spec.blocks.begin(), spec.blocks.end(), block_hint) != spec.blocks.end();
  context.block = hint_fits ? block_hint : context.random.pick(spec.blocks);
  context.threads = context.block;
  context.unroll = context.random.pick(std::vector<int>{2, 4, 8});
  context.parameters.erase("type_hint");
  context.parameters.erase("block_hint");
}

uint64_t mix(uint64_t a, uint64_t b) {
  GeneratorRandom random{a * 0x2545F4914F6CDD1Dull + b};
  return random.next();
}

Status check_request(const GenerationRequest& request) {
  if (request.domain && !find_domain(*request.domain)) {
    return make_error("generate: unknown domain '" + *request.domain + "'");
  }
  std::vector<std::string> features = generator_features();
  for (const auto* list : {&request.required_features, &request.forbidden_features}) {
    for (const std::string& feature : *list) {
      if (!contains(features, feature)) {
        return make_error("generate: unknown feature '" + feature + "'");
      }
    }
  }
  for (const std::string& feature : request.required_features) {
    if (contains(request.forbidden_features, feature)) {
      return make_error("generate: feature '" + feature + "' is both required and forbidden");
    }
  }
  return {};
}

Result<GeneratedProgram> generate_attempt(const GeneratorCatalog& catalog,
                                          const GenerationRequest& request, uint64_t attempt_seed,
                                          std::string& rejection) {
  GeneratorRandom choice_random{mix(attempt_seed, 1)};
  Choices choices;
  if (auto status = choose_template_persona_domain(catalog, request, choice_random, choices);
      !status) {
    return status.error();
  }
  const DomainSpec& spec = *choices.domain;
  DomainContext context;
  context.random.state = mix(attempt_seed, 2);
  std::set<std::string> hinted;
  apply_hints(choices.value_hints, context, hinted);
  choose_knobs(spec, request, choices.persona, hinted, context);

  DomainCode code = spec.write(context);
  if (!context.unfilled.empty()) {
    return make_error("generate: domain '" + spec.name + "' left placeholder " +
                      context.unfilled.front() + " unfilled");
  }
  GeneratedProgram program;
  // The domain, template and seed are the sample's lineage (store/samples.h), never its text: a
  // model trained on the text would learn to write them (synth/training_text.h).
  size_t style = static_cast<size_t>(mix(attempt_seed, 4) % helper_style_count());
  context.parameters["helper_style"] = style;
  program.source = apply_helper_style(program_prelude(context, code.kernels, mix(attempt_seed, 3)) + code.kernels +
                                          "\nint main() {\n" + code.main_body + "}\n",
                                      style);
  program.features = detect_features(program.source, code.kernels, context);
  for (const std::string& feature : request.required_features) {
    if (!contains(program.features, feature)) rejection = "required feature '" + feature + "' absent";
  }
  for (const std::string& feature : request.forbidden_features) {
    if (contains(program.features, feature)) rejection = "forbidden feature '" + feature + "' present";
  }
  program.domain = spec.name;
  program.template_id = choices.prompt_template->id;
  program.persona = choices.persona;
  program.seed = request.seed;
  context.parameters["element_type"] = context.value_type;
  context.parameters["block_size"] = context.block;
  if (context.has("unroll_pragma")) context.parameters["unroll"] = context.unroll;
  program.variables = {{"placeholders", choices.value_texts},
                       {"parameters", context.parameters}};
  auto prompt = render_prompt(catalog, choices.persona, *choices.prompt_template,
                              choices.value_texts);
  if (!prompt) return prompt.error();
  program.prompt_text = *prompt;
  return program;
}

}  // namespace

std::vector<std::string> generator_domains() {
  std::vector<std::string> names;
  for (const DomainSpec& spec : all_domains()) names.push_back(spec.name);
  return names;
}

std::vector<std::string> generator_api_domains() {
  std::vector<std::string> names;
  for (const DomainSpec& spec : api_domains()) names.push_back(spec.name);
  return names;
}

std::vector<std::string> generator_features() {
  std::vector<std::string> names;
  for (const KnobChance& rule : kFeatures) names.push_back(rule.name);
  return names;
}

Status check_generator_catalog(const GeneratorCatalog& catalog) {
  std::vector<std::string> features = generator_features();
  for (const PromptTemplate& t : catalog.templates) {
    for (const std::string& domain : t.domains) {
      if (!find_domain(domain)) {
        return make_error("template '" + t.id + "': unknown generator domain '" + domain + "'");
      }
    }
  }
  for (const auto& [name, values] : catalog.placeholder_values) {
    for (const PlaceholderValue& value : values) {
      for (const json& feature : value.hints.value("features", json::array())) {
        if (!feature.is_string() || !contains(features, feature.get<std::string>())) {
          return make_error("placeholder '" + name + "' value '" + value.text +
                            "': unknown feature " + feature.dump());
        }
      }
    }
  }
  for (const Persona& persona : catalog.personas) {
    for (const auto* list : {&persona.prefer_features, &persona.avoid_features}) {
      for (const std::string& feature : *list) {
        if (!contains(features, feature)) {
          return make_error("persona '" + persona.id + "': unknown feature '" + feature + "'");
        }
      }
    }
  }
  return {};
}

Result<GeneratedProgram> generate_program(const GeneratorCatalog& catalog,
                                          const GenerationRequest& request) {
  if (auto status = check_request(request); !status) return status.error();
  if (auto status = check_generator_catalog(catalog); !status) return status.error();
  std::string rejection;
  const int kAttempts = 24;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    rejection.clear();
    uint64_t attempt_seed = attempt == 0 ? request.seed : mix(request.seed, 100 + attempt);
    auto program = generate_attempt(catalog, request, attempt_seed, rejection);
    if (!program) return program.error();
    if (rejection.empty()) return program;
  }
  return make_error("generate: no variant satisfies the request after " +
                    std::to_string(kAttempts) + " attempts (last: " + rejection + ")");
}

GenerationRequest batch_request(uint64_t seed, size_t index) {
  std::vector<std::string> domains = generator_domains();
  GenerationRequest request;
  request.seed = mix(seed, 1000 + index);
  size_t offset = static_cast<size_t>(mix(seed, 7) % domains.size());
  request.domain = domains[(index + offset) % domains.size()];
  return request;
}

Sample generated_sample(const std::string& track, const std::string& origin, const std::string& language,
                        const std::string& text, const std::string& domain,
                        const std::vector<std::string>& features, std::optional<int64_t> cycle_id) {
  return Sample{.track = track,
                .origin = origin,
                .language = language,
                .text = text,
                .domain = domain,
                .features = features,
                .cycle_id = cycle_id};
}

Sample sample_from_program(const GeneratedProgram& program, const std::string& origin,
                           std::optional<int64_t> cycle_id) {
  Sample sample = generated_sample("cuda2hip", origin, "cuda", program.source, program.domain,
                                   program.features, cycle_id);
  sample.template_id = program.template_id;
  sample.persona = persona_to_json(program.persona).dump();
  sample.variables = program.variables.dump();
  sample.seed = static_cast<int64_t>(program.seed);
  sample.prompt_hash = sha256_hex(program.prompt_text);
  return sample;
}

}  // namespace tailforge
