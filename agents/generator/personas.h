// Personas and CASS prompt templates as data: loads and validates config/personas.json and
// config/prompt_templates.json, and renders the LLM prompt for a persona + template + values.
// It does not choose among them (the generator does) and does not talk to any model.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace tailforge {

// Who asks for the program: (role, domain, optimization focus, code style), plus the
// generator features this persona tends to use or avoid.
struct Persona {
  std::string id;
  std::string role;
  std::string domain;
  std::string optimization_focus;
  std::string code_style;
  std::vector<std::string> families;        // template families this persona asks about
  std::vector<std::string> prefer_features;  // generator features made more likely
  std::vector<std::string> avoid_features;   // generator features never turned on by choice
};

// One value a placeholder may take: the text put into the prompt and the hints it gives the
// built-in generator ("size": 512, "element_type": "double", "features": [...]).
struct PlaceholderValue {
  std::string text;
  nlohmann::json hints = nlohmann::json::object();
};

// A CASS prompt template: "Generate a CUDA kernel for cloth simulation with a {size}x{size}
// grid. Optimize for {optimization}." and the generator domains that can realize it.
struct PromptTemplate {
  std::string id;
  std::string family;
  std::string text;
  std::vector<std::string> domains;
  std::vector<std::string> placeholders;  // names used in text, in order of first use
};

struct GeneratorCatalog {
  std::vector<Persona> personas;
  std::vector<PromptTemplate> templates;
  std::map<std::string, std::vector<PlaceholderValue>> placeholder_values;
  std::string prompt_frame;  // wraps a rendered template with the persona and output rules
};

// Loads both files; errors name the file and the JSON path at fault.
Result<GeneratorCatalog> load_generator_catalog(const std::string& personas_path,
                                                const std::string& templates_path);
// Loads from JSON text; `personas_name`/`templates_name` are used in error messages.
Result<GeneratorCatalog> parse_generator_catalog(const std::string& personas_text,
                                                 const std::string& personas_name,
                                                 const std::string& templates_text,
                                                 const std::string& templates_name);
// The catalog shipped in <source_dir>/config.
Result<GeneratorCatalog> load_default_generator_catalog(const std::string& source_dir);

// The template text with every {placeholder} replaced by its value's text.
Result<std::string> render_template_text(const PromptTemplate& prompt_template,
                                         const std::map<std::string, std::string>& values);
// The full LLM prompt: the catalog's frame filled with the persona and the rendered template.
Result<std::string> render_prompt(const GeneratorCatalog& catalog, const Persona& persona,
                                  const PromptTemplate& prompt_template,
                                  const std::map<std::string, std::string>& values);

const PromptTemplate* find_template(const GeneratorCatalog& catalog, const std::string& id);
const Persona* find_persona(const GeneratorCatalog& catalog, const std::string& id);

nlohmann::json persona_to_json(const Persona& persona);

}  // namespace tailforge
