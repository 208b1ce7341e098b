#include "agents/generator/personas.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "base/files.h"

namespace tailforge {
namespace {

using nlohmann::json;

Error error_at(const std::string& file, const std::string& path, const std::string& what) {
  return make_error(file + ": " + path + ": " + what);
}

Result<std::string> required_string(const json& object, const std::string& key,
                                    const std::string& file, const std::string& path) {
  if (!object.contains(key)) return error_at(file, path + "." + key, "missing");
  const json& value = object.at(key);
  if (!value.is_string() || value.get<std::string>().empty()) {
    return error_at(file, path + "." + key, "must be a non-empty string");
  }
  return value.get<std::string>();
}

Result<std::vector<std::string>> optional_string_list(const json& object, const std::string& key,
                                                      const std::string& file,
                                                      const std::string& path) {
  std::vector<std::string> list;
  if (!object.contains(key)) return list;
  const json& value = object.at(key);
  if (!value.is_array()) return error_at(file, path + "." + key, "must be an array of strings");
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) {
      return error_at(file, path + "." + key + "[" + std::to_string(i) + "]", "must be a string");
    }
    list.push_back(value[i].get<std::string>());
  }
  return list;
}

// Reads each key of `item` into its field with `read` (required_string, optional_string_list),
// stopping at the first error.
template <typename T>
Status read_persona_fields(Result<T> (*read)(const json&, const std::string&, const std::string&, const std::string&),
                           const json& item, const std::string& file, const std::string& path,
                           std::initializer_list<std::pair<const char*, T*>> fields) {
  for (const auto& [key, target] : fields) {
    Result<T> value = read(item, key, file, path);
    if (!value) return value.error();
    *target = std::move(*value);
  }
  return {};
}

// Names between braces in `text`, in order of first use; an unclosed brace is an error.
Result<std::vector<std::string>> placeholder_names(const std::string& text) {
  std::vector<std::string> names;
  size_t pos = 0;
  while ((pos = text.find('{', pos)) != std::string::npos) {
    size_t end = text.find('}', pos);
    if (end == std::string::npos) return make_error("unclosed '{' at offset " + std::to_string(pos));
    std::string name = text.substr(pos + 1, end - pos - 1);
    if (name.empty()) return make_error("empty placeholder '{}' at offset " + std::to_string(pos));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    pos = end + 1;
  }
  return names;
}

Result<Persona> parse_persona(const json& item, const std::string& file, const std::string& path) {
  if (!item.is_object()) return error_at(file, path, "must be an object");
  Persona persona;
  Status strings = read_persona_fields(required_string, item, file, path,
                                       {{"id", &persona.id},
                                        {"role", &persona.role},
                                        {"domain", &persona.domain},
                                        {"optimization_focus", &persona.optimization_focus},
                                        {"code_style", &persona.code_style}});
  if (!strings) return strings.error();
  Status lists = read_persona_fields(optional_string_list, item, file, path,
                                     {{"families", &persona.families},
                                      {"prefer_features", &persona.prefer_features},
                                      {"avoid_features", &persona.avoid_features}});
  if (!lists) return lists.error();
  return persona;
}

Status parse_personas(const json& root, const std::string& file, GeneratorCatalog& catalog) {
  if (!root.is_object() || !root.contains("personas") || !root.at("personas").is_array()) {
    return error_at(file, "personas", "must be an array of persona objects");
  }
  const json& list = root.at("personas");
  if (list.empty()) return error_at(file, "personas", "must not be empty");
  std::set<std::string> ids;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string path = "personas[" + std::to_string(i) + "]";
    auto persona = parse_persona(list[i], file, path);
    if (!persona) return persona.error();
    if (!ids.insert(persona->id).second) {
      return error_at(file, path + ".id", "duplicate persona id '" + persona->id + "'");
    }
    catalog.personas.push_back(std::move(*persona));
  }
  return {};
}

Result<PlaceholderValue> parse_placeholder_value(const json& item, const std::string& file,
                                                 const std::string& path) {
  PlaceholderValue value;
  if (item.is_string()) {
    value.text = item.get<std::string>();
  } else if (item.is_number_integer() || item.is_number_unsigned()) {
    value.text = std::to_string(item.get<long long>());
    value.hints["value"] = item;
  } else if (item.is_object()) {
    auto text = required_string(item, "text", file, path);
    if (!text) return text.error();
    value.text = *text;
    for (auto& [key, hint] : item.items()) {
      if (key != "text") value.hints[key] = hint;
    }
    if (value.hints.contains("features")) {
      auto features = optional_string_list(item, "features", file, path);
      if (!features) return features.error();
    }
  } else {
    return error_at(file, path, "must be a string, an integer or an object with \"text\"");
  }
  if (value.text.empty()) return error_at(file, path, "text must not be empty");
  return value;
}

Status parse_placeholders(const json& root, const std::string& file, GeneratorCatalog& catalog) {
  if (!root.contains("placeholders") || !root.at("placeholders").is_object()) {
    return error_at(file, "placeholders", "must be an object of name -> array of values");
  }
  for (auto& [name, values] : root.at("placeholders").items()) {
    std::string path = "placeholders." + name;
    if (!values.is_array() || values.empty()) {
      return error_at(file, path, "must be a non-empty array of values");
    }
    std::vector<PlaceholderValue>& table = catalog.placeholder_values[name];
    for (size_t i = 0; i < values.size(); ++i) {
      auto value = parse_placeholder_value(values[i], file, path + "[" + std::to_string(i) + "]");
      if (!value) return value.error();
      table.push_back(std::move(*value));
    }
  }
  return {};
}

Result<PromptTemplate> parse_template(const json& item, const std::string& family,
                                      const GeneratorCatalog& catalog, const std::string& file,
                                      const std::string& path) {
  if (!item.is_object()) return error_at(file, path, "must be an object");
  PromptTemplate result;
  result.family = family;
  auto id = required_string(item, "id", file, path);
  if (!id) return id.error();
  result.id = *id;
  auto text = required_string(item, "text", file, path);
  if (!text) return text.error();
  result.text = *text;
  auto domains = optional_string_list(item, "domains", file, path);
  if (!domains) return domains.error();
  if (domains->empty()) return error_at(file, path + ".domains", "must list at least one domain");
  result.domains = *domains;
  auto names = placeholder_names(result.text);
  if (!names) return error_at(file, path + ".text", names.message());
  for (const std::string& name : *names) {
    if (!catalog.placeholder_values.count(name)) {
      return error_at(file, path + ".text",
                      "placeholder {" + name + "} has no value table in \"placeholders\"");
    }
  }
  result.placeholders = *names;
  return result;
}

Status parse_templates(const json& root, const std::string& file, GeneratorCatalog& catalog) {
  if (!root.is_object()) return error_at(file, "$", "must be an object");
  auto frame = required_string(root, "prompt_frame", file, "$");
  if (!frame) return frame.error();
  catalog.prompt_frame = *frame;
  if (auto status = parse_placeholders(root, file, catalog); !status) return status;
  if (!root.contains("families") || !root.at("families").is_array() ||
      root.at("families").empty()) {
    return error_at(file, "families", "must be a non-empty array of template families");
  }
  std::set<std::string> ids;
  const json& families = root.at("families");
  for (size_t f = 0; f < families.size(); ++f) {
    std::string family_path = "families[" + std::to_string(f) + "]";
    auto family = required_string(families[f], "id", file, family_path);
    if (!family) return family.error();
    const json& templates = families[f].value("templates", json());
    if (!templates.is_array() || templates.empty()) {
      return error_at(file, family_path + ".templates", "must be a non-empty array");
    }
    for (size_t t = 0; t < templates.size(); ++t) {
      std::string path = family_path + ".templates[" + std::to_string(t) + "]";
      auto parsed = parse_template(templates[t], *family, catalog, file, path);
      if (!parsed) return parsed.error();
      if (!ids.insert(parsed->id).second) {
        return error_at(file, path + ".id", "duplicate template id '" + parsed->id + "'");
      }
      catalog.templates.push_back(std::move(*parsed));
    }
  }
  return {};
}

Status check_persona_families(const GeneratorCatalog& catalog, const std::string& file) {
  std::set<std::string> families;
  for (const PromptTemplate& t : catalog.templates) families.insert(t.family);
  for (size_t i = 0; i < catalog.personas.size(); ++i) {
    for (size_t j = 0; j < catalog.personas[i].families.size(); ++j) {
      const std::string& family = catalog.personas[i].families[j];
      if (!families.count(family)) {
        return error_at(file,
                        "personas[" + std::to_string(i) + "].families[" + std::to_string(j) + "]",
                        "unknown template family '" + family + "'");
      }
    }
  }
  return {};
}

std::string fill_braces(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t open = text.find('{', pos);
    size_t close = open == std::string::npos ? std::string::npos : text.find('}', open);
    if (close == std::string::npos) {
      out += text.substr(pos);
      break;
    }
    out += text.substr(pos, open - pos);
    auto it = values.find(text.substr(open + 1, close - open - 1));
    out += it == values.end() ? text.substr(open, close - open + 1) : it->second;
    pos = close + 1;
  }
  return out;
}

}  // namespace

Result<GeneratorCatalog> parse_generator_catalog(const std::string& personas_text,
                                                 const std::string& personas_name,
                                                 const std::string& templates_text,
                                                 const std::string& templates_name) {
  GeneratorCatalog catalog;
  auto personas_json = parse_json_text(personas_text, personas_name);
  if (!personas_json) return personas_json.error();
  auto templates_json = parse_json_text(templates_text, templates_name);
  if (!templates_json) return templates_json.error();
  try {
    if (auto status = parse_personas(*personas_json, personas_name, catalog); !status) {
      return status.error();
    }
    if (auto status = parse_templates(*templates_json, templates_name, catalog); !status) {
      return status.error();
    }
  } catch (const json::exception& e) {
    return make_error(templates_name + ": unexpected JSON shape: " + e.what());
  }
  if (auto status = check_persona_families(catalog, personas_name); !status) return status.error();
  return catalog;
}

Result<GeneratorCatalog> load_generator_catalog(const std::string& personas_path,
                                                const std::string& templates_path) {
  auto personas_text = read_text_file(personas_path);
  if (!personas_text) return personas_text.error();
  auto templates_text = read_text_file(templates_path);
  if (!templates_text) return templates_text.error();
  return parse_generator_catalog(*personas_text, personas_path, *templates_text, templates_path);
}

Result<GeneratorCatalog> load_default_generator_catalog(const std::string& source_dir) {
  return load_generator_catalog(source_dir + "/config/personas.json",
                                source_dir + "/config/prompt_templates.json");
}

Result<std::string> render_template_text(const PromptTemplate& prompt_template,
                                         const std::map<std::string, std::string>& values) {
  for (const std::string& name : prompt_template.placeholders) {
    if (!values.count(name)) {
      return make_error("template '" + prompt_template.id + "': no value for {" + name + "}");
    }
  }
  return fill_braces(prompt_template.text, values);
}

Result<std::string> render_prompt(const GeneratorCatalog& catalog, const Persona& persona,
                                  const PromptTemplate& prompt_template,
                                  const std::map<std::string, std::string>& values) {
  auto task = render_template_text(prompt_template, values);
  if (!task) return task.error();
  std::map<std::string, std::string> frame_values = {
      {"role", persona.role},
      {"persona_domain", persona.domain},
      {"optimization_focus", persona.optimization_focus},
      {"code_style", persona.code_style},
      {"task", *task}};
  return fill_braces(catalog.prompt_frame, frame_values);
}

const PromptTemplate* find_template(const GeneratorCatalog& catalog, const std::string& id) {
  for (const PromptTemplate& t : catalog.templates) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

const Persona* find_persona(const GeneratorCatalog& catalog, const std::string& id) {
  for (const Persona& p : catalog.personas) {
    if (p.id == id) return &p;
  }
  return nullptr;
}

nlohmann::json persona_to_json(const Persona& persona) {
  return {{"id", persona.id},
          {"role", persona.role},
          {"domain", persona.domain},
          {"optimization_focus", persona.optimization_focus},
          {"code_style", persona.code_style}};
}

}  // namespace tailforge
